// The README's Swift example, compiled and run as written (only the directory differs).

import Cirrus
import Foundation
import RecordModel
import Testing

@Suite struct ReadmeExampleTests {
    @Test func theReadmeExampleRuns() async throws {
        let dir = NSTemporaryDirectory() + "cirrus-readme-\(UInt64.random(in: 0...UInt64.max))"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var names: [String] = []
        // --- README example begins ---
        let container = try Container.open(at: dir)  // development: schema grows on save
        let db = container.privateDatabase(for: "_alice")

        let louvre = Location(latitude: 48.8606, longitude: 2.3376)
        _ = try await db.modifyRecords(
            saving: [
                Record(
                    recordType: "Place", recordID: RecordID(recordName: "flore"),
                    fields: [
                        "name": "Café de Flore", "kind": "cafe",
                        "location": .location(Location(latitude: 48.8541, longitude: 2.3326)),
                    ]),
                Record(
                    recordType: "Place", recordID: RecordID(recordName: "angelina"),
                    fields: [
                        "name": "Angelina", "kind": "cafe",
                        "location": .location(Location(latitude: 48.8651, longitude: 2.3284)),
                    ]),
            ], deleting: [])

        let query = RecordQuery(
            recordType: "Place",
            predicate: "kind == %@ AND distanceToLocation:fromLocation:(location, %@) < 5",
            arguments: ["cafe", .value(.location(louvre))],
            sortDescriptors: [.distance(field: "location", from: louvre)])  // nearest first
        var (results, cursor) = try await db.records(matching: query, resultsLimit: 1)
        while true {
            for (id, _) in results { names.append(id.recordName) }
            guard let next = cursor else { break }
            (results, cursor) = try await db.records(continuingMatchFrom: next, resultsLimit: 1)
        }
        print(try await db.explain(query).text)  // the plan, its estimates and actual rows
        // --- README example ends ---
        #expect(names == ["flore", "angelina"])  // 0.81 km and 0.84 km from the Louvre
    }
}

// Records a query returns hold their fields inside the mapped data segment they were read from
// (RecordFields held encoded, the mapping kept by the record). They must outlive everything else:
// the container's close, a compaction that rewrites and deletes the segment, the directory itself.

import Cirrus
import Foundation
import RecordModel
import Testing

@Suite struct RecordLifetimeTests {
    func place(_ i: Int) -> Record {
        Record(
            recordType: "Place", recordID: RecordID(recordName: "p\(i)"),
            fields: [
                "name": .string("place \(i) " + String(repeating: "é", count: i % 40)),
                "n": .int64(Int64(i)),
                "tags": .list((0...(i % 30)).map { .string("tag-\($0)-of-\(i)") }),
                "loc": .location(Location(latitude: 48 + Double(i % 50) / 100, longitude: 2)),
            ])
    }

    @Test func returnedRecordsOutliveTheirSegmentsAndTheContainer() async throws {
        let dir = NSTemporaryDirectory() + "cirrus-lifetime-\(UInt64.random(in: 0...UInt64.max))"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var kept: [Record] = []
        do {
            let c = try Container.open(at: dir)
            let db = c.publicDatabase(as: .user("_u"))
            _ = try await db.modifyRecords(saving: (0..<300).map(place), deleting: [])
            try c.checkpoint()
            let q = RecordQuery(recordType: "Place", predicate: "n >= %@", arguments: [.value(.int64(0))])
            var (page, cursor) = try await db.records(matching: q, resultsLimit: 100)
            while true {
                kept += try page.map { try $0.1.get() }
                guard let next = cursor else { break }
                (page, cursor) = try await db.records(continuingMatchFrom: next, resultsLimit: 100)
            }
            // Rewrites every table into one layer: the segments the records were read from are
            // deleted.
            try c.compact()
            try c.close()
        }
        try FileManager.default.removeItem(atPath: dir)
        let missing = Set(0..<300).subtracting(kept.map { Int($0.recordID.recordName.dropFirst())! })
        #expect(kept.count == 300, "missing: \(missing.sorted())")
        #expect(kept.filter(\.fields.isEncoded).count == 300, "records are held in their segment")
        for r in kept {
            let i = Int(r.recordID.recordName.dropFirst())!
            let want = place(i)
            #expect(r["name"] == want["name"] && r["tags"] == want["tags"], "p\(i)")
            #expect(r.fields == want.fields, "p\(i)")
        }
    }
}

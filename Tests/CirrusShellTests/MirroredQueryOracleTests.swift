// Queries against Core Data entities run on mirrored records and give what a Core Data fetch
// would: generated Post / ImagePost objects are stored as CloudKit mirroring stores them (one
// CD_Post type, CD_entityName), each query is rewritten and run through the engine, and the
// answer is compared with the objects filtered directly in Swift.

import Cirrus
import CirrusShell
import CirrusTestSupport
import Foundation
import RecordLog
import RecordModel
import Testing

private let models = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("CoreDataMirrorTests/Models").path

@Suite struct MirroredQueryOracleTests {
    struct Object {
        var name: String
        var entity: String
        var title: String
        var version: Int64
    }

    @Test func rewrittenQueriesReturnWhatTheObjectsMatch() async throws {
        let seed = TestSeed.next()
        var rng = SeededRandom(seed: seed)
        let objects = (0..<300).map { i in
            Object(
                name: "p\(i)", entity: rng.chance(0.4) ? "ImagePost" : "Post",
                title: ["Apple", "Avocado", "Banana", "Cherry"][rng.below(4)], version: Int64(rng.below(6)))
        }
        let c = try Container.open(
            at: "/c", options: ContainerOptions(fileSystem: InMemoryFileSystem(), durability: .none))
        let db = c.publicDatabase(as: .user("_app"))
        let records = objects.map { o in
            Record(
                recordType: "CD_Post", recordID: RecordID(recordName: o.name),
                fields: [
                    "CD_entityName": .string(o.entity), "CD_title": .string(o.title), "CD_version": .int64(o.version),
                ])
        }
        _ = try await db.modifyRecords(saving: records, deleting: [])
        let cases: [(entity: String, predicate: String, matches: (Object) -> Bool)] = [
            ("Post", "title BEGINSWITH 'A' AND version <= 3", { $0.title.hasPrefix("A") && $0.version <= 3 }),
            (
                "ImagePost", "title BEGINSWITH 'A' AND version <= 3",
                {
                    $0.entity == "ImagePost" && $0.title.hasPrefix("A") && $0.version <= 3
                }
            ),
            ("ImagePost", "TRUEPREDICATE", { $0.entity == "ImagePost" }),
            ("Post", "version IN {1, 2}", { $0.version == 1 || $0.version == 2 }),
        ]
        for (entity, predicate, matches) in cases {
            let (r, _) = try QueryRequest(recordType: entity, predicate: predicate).mirrored(
                model: models + "/Blog.xcdatamodeld")
            var got: [String] = []
            var page = try await db.records(
                matching: RecordQuery(recordType: r.recordType, predicate: r.predicate), resultsLimit: 100)
            while true {
                got += page.matchResults.map(\.0.recordName)
                guard let cursor = page.queryCursor else { break }
                page = try await db.records(continuingMatchFrom: cursor, resultsLimit: 100)
            }
            let expected = objects.filter(matches).map(\.name)
            #expect(got.sorted() == expected.sorted(), "seed \(seed): \(entity) \(predicate)")
        }
        try c.close()
    }
}

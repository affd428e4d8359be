// Queries against Core Data entities run on mirrored records and give what a Core Data fetch
// would: generated Post / ImagePost objects are stored as CloudKit mirroring stores them (one
// CD_Post type, CD_entityName), each query is rewritten and run through the engine, and the
// answer is compared with the objects filtered directly in Swift.

import Cirrus
import CirrusIO
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

/// To-many relationships through the real query path: generated posts, tags and attachments are
/// stored as mirroring stores them — CDMR rows for Post.tags ↔ Tag.posts, `CD_post` on each
/// Attachment for Post.attachments — in a custom zone of a private database; each to-many test
/// runs its lookup and then the main query, and the answer is compared with the objects'
/// relationships followed directly in Swift.
@Suite struct ToManyOracleTests {
    struct Post {
        var name: String
        var entity: String
        var title: String
        var tags: Set<String>
        var attachments: Set<String>
    }

    static let zone = ZoneID(zoneName: "com.apple.coredata.cloudkit.zone")

    @Test func toManyTestsReturnWhatTheRelationshipsHold() async throws {
        let seed = TestSeed.next()
        var rng = SeededRandom(seed: seed)
        let tags = (0..<8).map { "tag-\($0)" }
        var posts = (0..<150).map { i in
            Post(
                name: "post-\(i)", entity: rng.chance(0.3) ? "ImagePost" : "Post",
                title: ["Apple", "Banana", "Cherry"][rng.below(3)],
                tags: Set(tags.filter { _ in rng.chance(0.25) }), attachments: [])
        }
        var attachments: [(name: String, post: String?)] = []
        for a in 0..<120 {
            let owner = rng.chance(0.8) ? rng.below(posts.count) : nil
            attachments.append((name: "att-\(a)", post: owner.map { posts[$0].name }))
            if let owner { posts[owner].attachments.insert("att-\(a)") }
        }
        let c = try Container.open(
            at: "/c", options: ContainerOptions(fileSystem: InMemoryFileSystem(), durability: .none))
        let db = c.privateDatabase(for: "_alice")
        try await db.save(zone: Self.zone)
        func id(_ n: String) -> RecordID { RecordID(recordName: n, zoneID: Self.zone) }
        var records: [Record] = []
        for p in posts {
            records.append(
                Record(
                    recordType: "CD_Post", recordID: id(p.name),
                    fields: ["CD_entityName": .string(p.entity), "CD_title": .string(p.title)]))
            for t in p.tags.sorted() {
                // Post before Tag: the post's record name first (docs/coredata.md).
                records.append(
                    Record(
                        recordType: "CDMR", recordID: id("cdmr-\(p.name)-\(t)"),
                        fields: [
                            "CD_entityNames": "Post:Tag", "CD_recordNames": .string("\(p.name):\(t)"),
                            "CD_relationships": "tags:posts",
                        ]))
            }
        }
        for t in tags { records.append(Record(recordType: "CD_Tag", recordID: id(t), fields: ["CD_name": .string(t)])) }
        for a in attachments {
            var fields: RecordFields = ["CD_entityName": "Attachment", "CD_fileName": .string(a.name)]
            if let p = a.post { fields["CD_post"] = .string(p) }
            records.append(Record(recordType: "CD_Attachment", recordID: id(a.name), fields: fields))
        }
        for start in stride(from: 0, to: records.count, by: 300) {
            _ = try await db.modifyRecords(
                saving: Array(records[start..<min(start + 300, records.count)]), deleting: [])
        }
        let t0 = tags[rng.below(tags.count)]
        let t1 = tags[rng.below(tags.count)]
        let a0 = attachments[rng.below(attachments.count)].name
        let a1 = attachments[rng.below(attachments.count)].name
        let cases: [(entity: String, predicate: String, matches: (Post) -> Bool)] = [
            ("Post", "tags CONTAINS '\(t0)'", { $0.tags.contains(t0) }),
            ("Post", "'\(t0)' IN tags AND title == 'Apple'", { $0.tags.contains(t0) && $0.title == "Apple" }),
            ("Post", "ANY tags == '\(t1)'", { $0.tags.contains(t1) }),
            ("Post", "ANY tags IN {'\(t0)', '\(t1)'}", { $0.tags.contains(t0) || $0.tags.contains(t1) }),
            ("Post", "ALL {'\(t0)', '\(t1)'} IN tags", { $0.tags.contains(t0) && $0.tags.contains(t1) }),
            ("Post", "NOT (tags CONTAINS '\(t0)')", { !$0.tags.contains(t0) }),
            ("ImagePost", "tags CONTAINS '\(t1)'", { $0.entity == "ImagePost" && $0.tags.contains(t1) }),
            ("Post", "tags CONTAINS 'no-such-tag'", { _ in false }),
            ("Post", "attachments CONTAINS '\(a0)'", { $0.attachments.contains(a0) }),
            (
                "Post", "ANY attachments IN {'\(a0)', '\(a1)'} AND tags CONTAINS '\(t0)'",
                { ($0.attachments.contains(a0) || $0.attachments.contains(a1)) && $0.tags.contains(t0) }
            ),
        ]
        for (entity, predicate, matches) in cases {
            let (mirrored, _) = try QueryRequest(recordType: entity, predicate: predicate).mirrored(
                model: models + "/Blog.xcdatamodeld")
            let r = try await mirrored.resolvingLookups(in: db)
            #expect(r.lookups.isEmpty)
            var got: [String] = []
            var page = try await db.records(matching: r.recordQuery, resultsLimit: 40)
            while true {
                got += page.matchResults.map(\.0.recordName)
                guard let cursor = page.queryCursor else { break }
                page = try await db.records(continuingMatchFrom: cursor, resultsLimit: 40)
            }
            let expected = posts.filter(matches).map(\.name)
            #expect(got.sorted() == expected.sorted(), "seed \(seed): \(entity) \(predicate)")
        }
        // The reverse side of the many-to-many: a tag's posts come first in CD_recordNames.
        let p0 = posts[rng.below(posts.count)]
        let (byPost, _) = try QueryRequest(recordType: "Tag", predicate: "posts CONTAINS '\(p0.name)'").mirrored(
            model: models + "/Blog.xcdatamodeld")
        let r = try await byPost.resolvingLookups(in: db)
        let page = try await db.records(matching: r.recordQuery, resultsLimit: 100)
        #expect(page.matchResults.map(\.0.recordName).sorted() == p0.tags.sorted(), "seed \(seed): \(p0.name)")
        try c.close()
    }
}

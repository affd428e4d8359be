// `cirrus coredata schema`: --dry-run prints the mirrored schema, a model that breaks the rules
// exits 1 listing every problem and imports nothing, --db adds the schema to development
// (keeping what the container had), and `cirrus schema --export` then shows it.

import Cirrus
import CirrusIO
import CirrusShell
import Foundation
import RecordLog
import RecordModel
import Testing

private let models = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("CoreDataMirrorTests/Models").path

@Suite struct CoreDataCommandsTests {
    @Test func dryRunPrintsTheSchemaInCloudKitsLanguage() throws {
        let out = CoreDataCommands.schema(model: models + "/Blog.xcdatamodeld", db: nil, dryRun: true)
        #expect(out.exitCode == 0, "\(out.stderr)")
        let schema = try Schema(schemaLanguage: out.stdout, environment: .development)
        #expect(schema.recordTypes.keys.sorted() == ["CDMR", "CD_Attachment", "CD_ImageData", "CD_Post", "CD_Tag"])
    }

    @Test func aModelThatBreaksTheRulesIsRefusedWithEveryProblem() throws {
        let fs = InMemoryFileSystem()
        let out = CoreDataCommands.schema(
            model: models + "/Invalid.xcdatamodel", db: "/c", dryRun: false, fileSystem: fs)
        #expect(out.exitCode == 1)
        #expect(out.stderr.contains("10 problems for CloudKit mirroring"))
        #expect(
            out.stderr.contains("line 9: Author.books: CloudKit integration does not support ordered relationships."))
        #expect(!fs.exists("/c"))  // nothing was imported
        let missing = CoreDataCommands.schema(model: models + "/Nope.xcdatamodeld", db: nil, dryRun: true)
        #expect(missing.exitCode == 1)
        #expect(missing.stderr.contains("no such file or directory"))
    }

    @Test func dbAddsTheSchemaToDevelopmentAndKeepsWhatWasThere() async throws {
        let fs = InMemoryFileSystem()
        let c = try Container.open(at: "/c", options: ContainerOptions(fileSystem: fs, durability: .none))
        try await c.publicDatabase(as: .user("_alice")).save(
            Record(recordType: "Note", recordID: RecordID(recordName: "n"), fields: ["title": "x"]))
        try c.close()
        let out = CoreDataCommands.schema(model: models + "/Blog.xcdatamodeld", db: "/c", dryRun: false, fileSystem: fs)
        #expect(out.exitCode == 0, "\(out.stderr)")
        #expect(out.stdout.contains("imported 5 record types"))
        let exported = SchemaCommands.run(db: "/c", action: .export, fileSystem: fs).stdout
        #expect(exported.contains("RECORD TYPE CD_Post ("))
        #expect(exported.contains("RECORD TYPE Note ("))
        // Importing again changes nothing and succeeds (add-only).
        #expect(
            CoreDataCommands.schema(model: models + "/Blog.xcdatamodeld", db: "/c", dryRun: false, fileSystem: fs)
                .exitCode == 0)
    }
}

/// `cirrus query` / `cirrus explain` with `--coredata` as the library runs them: the demo's
/// mirrored blog in a private zone, a to-many test resolved through its lookup before the main
/// query, and explain saying how many records the lookup gave.
@Suite struct MirroredQueryCommandsTests {
    func blog() async throws -> (InMemoryFileSystem, String) {
        let fs = InMemoryFileSystem()
        let c = try Container.open(at: "/blog", options: ContainerOptions(fileSystem: fs, durability: .none))
        let db = c.privateDatabase(for: "_demo")
        try await db.save(zone: DemoData.coreDataZone)
        let records = try await DemoData.blogRecords { try await db.storeAsset($0) }
        _ = try await db.modifyRecords(saving: records, deleting: [])
        try c.close()
        let model = NSTemporaryDirectory() + "cirrus-blog-\(UInt32.random(in: 0...UInt32.max)).xcdatamodel"
        try Data(DemoData.blogModelXML.utf8).write(to: URL(fileURLWithPath: model))
        return (fs, model)
    }

    @Test func aToManyTestRunsItsLookupThenTheQuery() async throws {
        let (fs, model) = try await blog()
        defer { try? FileManager.default.removeItem(atPath: model) }
        let target = DatabaseTarget(database: "private", user: "_demo")
        let (r, rewritten) = try QueryRequest(
            recordType: "Post", predicate: "tags CONTAINS 'tag-cloudkit' AND views >= 200", keys: ["title"]
        ).mirrored(model: model)
        #expect(
            rewritten.hasPrefix("Core Data entity Post → CD_Post WHERE recordName IN $CD_tags_1 AND CD_views >= 200"))
        let out = await QueryCommands.query(db: "/blog", request: r, json: true, target: target, fileSystem: fs)
        #expect(out.exitCode == 0, "\(out.stderr)")
        // tag-cloudkit: post-1 (120 views), post-2 (860), post-4 (310).
        #expect(out.stdout.contains("\"post-2\"") && out.stdout.contains("\"post-4\""))
        #expect(!out.stdout.contains("\"post-1\"") && !out.stdout.contains("\"post-3\""))
        let explained = await QueryCommands.explain(db: "/blog", request: r, target: target, fileSystem: fs)
        #expect(explained.stdout.hasPrefix("lookup $CD_tags_1: 3 Post records\n"), "\(explained.stdout)")
        // In the public database the lookup finds no rows: nothing matches, and it says so.
        let none = await QueryCommands.explain(db: "/blog", request: r, fileSystem: fs)
        #expect(none.stdout.hasPrefix("lookup $CD_tags_1: 0 Post records\n"), "\(none.stderr)")
    }

    @Test func whatCannotBeRewrittenIsAnErrorWithACaret() async throws {
        let (_, model) = try await blog()
        defer { try? FileManager.default.removeItem(atPath: model) }
        do {
            _ = try QueryRequest(recordType: "Post", predicate: "tags == 'x'").mirrored(model: model)
            Issue.record("tags == 'x' was rewritten")
        } catch {
            #expect(error.message.contains("  tags == 'x'\n       ^^\n"), "\(error.message)")
            #expect(error.message.contains("error: \"tags\" is a to-many relationship"))
        }
        #expect(throws: ShellError.self) {
            try QueryRequest(recordType: "Post", sorts: [.field("nope", ascending: true)]).mirrored(model: model)
        }
    }
}

// `cirrus coredata schema`: --dry-run prints the mirrored schema, a model that breaks the rules
// exits 1 listing every problem and imports nothing, --db adds the schema to development
// (keeping what the container had), and `cirrus schema --export` then shows it.

import Cirrus
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

// The container commands: `cirrus schema` (export, import, promote) and import/export/get of a
// chosen database with --database / --as.

import Cirrus
import CirrusIO
import CirrusShell
import Foundation
import RecordLog
import RecordModel
import Testing

@Suite struct ContainerCommandsTests {
    @Test func schemaExportImportPromote() async throws {
        let fs = InMemoryFileSystem()
        let c = try Container.open(at: "/c", options: ContainerOptions(fileSystem: fs, durability: .none))
        try await c.privateDatabase(for: "_alice").save(
            Record(recordType: "Note", recordID: RecordID(recordName: "a"), fields: ["title": "x"]))
        try c.close()
        let exported = SchemaCommands.run(db: "/c", action: .export, fileSystem: fs)
        #expect(exported.exitCode == 0)
        #expect(exported.stdout.contains("title STRING QUERYABLE SORTABLE SEARCHABLE"))
        try fs.writeAtomically(
            "/s.ckdb", Array("DEFINE SCHEMA RECORD TYPE Note (title STRING QUERYABLE, more INT64 SORTABLE);".utf8))
        let imported = SchemaCommands.run(db: "/c", action: .importFile("/s.ckdb"), fileSystem: fs)
        #expect(imported.exitCode == 0, "\(imported.stderr)")
        #expect(SchemaCommands.run(db: "/c", action: .export, fileSystem: fs).stdout.contains("more INT64 SORTABLE"))
        try fs.writeAtomically("/bad.ckdb", Array("DEFINE SCHEMA RECORD TYPE Note (more INT64);".utf8))
        let refused = SchemaCommands.run(db: "/c", action: .importFile("/bad.ckdb"), fileSystem: fs)
        #expect(refused.exitCode == 1)
        #expect(refused.stderr.contains("Note.title would be removed"))
        #expect(SchemaCommands.run(db: "/c", action: .importFile("/missing"), fileSystem: fs).exitCode == 1)
        #expect(SchemaCommands.run(db: "/c", action: .export, environment: .production, fileSystem: fs).exitCode == 1)
        #expect(SchemaCommands.run(db: "/c", action: .promote, fileSystem: fs).exitCode == 0)
        #expect(
            SchemaCommands.run(db: "/c", action: .export, environment: .production, fileSystem: fs).stdout.contains(
                "more INT64 SORTABLE"))
    }

    @Test func privateDatabaseNeedsItsOwner() async throws {
        let fs = InMemoryFileSystem()
        let c = try Container.open(at: "/c", options: ContainerOptions(fileSystem: fs, durability: .none))
        try await c.privateDatabase(for: "_alice").save(
            Record(recordType: "Note", recordID: RecordID(recordName: "a"), fields: ["n": 7]))
        try c.close()
        let mine = await StoreCommands.get(
            db: "/c", type: "Note", recordName: "a", json: false,
            target: DatabaseTarget(database: "private", user: "_alice"), fileSystem: fs)
        #expect(mine.exitCode == 0 && mine.stdout.contains("n INT64 = 7"))
        let theirs = await StoreCommands.get(
            db: "/c", type: "Note", recordName: "a", json: false,
            target: DatabaseTarget(database: "private", user: "_bob"), fileSystem: fs)
        #expect(theirs.exitCode == 1)  // bob's own private database has no such record
        let noUser = await StoreCommands.get(
            db: "/c", type: "Note", recordName: "a", json: false, target: DatabaseTarget(database: "private"),
            fileSystem: fs)
        #expect(noUser.exitCode == 2)
        // Not in the public database.
        #expect(
            await StoreCommands.get(db: "/c", type: "Note", recordName: "a", json: false, fileSystem: fs).exitCode == 1)
        var lines: [String] = []
        _ = StoreCommands.export(
            db: "/c", type: nil, target: DatabaseTarget(database: "private", user: "_alice"), fileSystem: fs
        ) { lines.append($0) }
        #expect(lines.count == 1)
        lines = []
        _ = StoreCommands.export(db: "/c", type: nil, fileSystem: fs) { lines.append($0) }
        #expect(lines.isEmpty)
    }

    @Test func importIntoProductionNeedsTheDeclaredSchema() throws {
        let tmp = NSTemporaryDirectory() + "cirrus-prod-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: tmp) }
        let file = tmp + "/in.jsonl"
        try Data(
            """
            {"recordName":"n1","recordType":"Note","fields":{"title":{"value":"Hello","type":"STRING"}}}
            {"recordName":"n2","recordType":"Note","fields":{"other":{"value":2,"type":"INT64"}}}
            {"recordName":"p1","recordType":"Place","fields":{}}
            """.utf8
        ).write(to: URL(fileURLWithPath: file))
        let schema = tmp + "/schema.ckdb"
        try Data("DEFINE SCHEMA RECORD TYPE Note (title STRING QUERYABLE);".utf8).write(
            to: URL(fileURLWithPath: schema))
        #expect(SchemaCommands.run(db: tmp + "/c", action: .importFile(schema)).exitCode == 0)
        #expect(SchemaCommands.run(db: tmp + "/c", action: .promote).exitCode == 0)
        let out = StoreCommands.importFiles(
            db: tmp + "/c", files: [file], target: DatabaseTarget(environment: .production))
        #expect(out.exitCode == 1)
        #expect(out.stdout.hasPrefix("imported 1 records (2 rejected)"))
        #expect(out.stderr.contains("in.jsonl:2:") && out.stderr.contains("Cannot create new field 'other'"))
        #expect(out.stderr.contains("in.jsonl:3:") && out.stderr.contains("Cannot create new type Place"))
        #expect(StoreCommands.verify(db: tmp + "/c", json: false).exitCode == 0)
    }
}

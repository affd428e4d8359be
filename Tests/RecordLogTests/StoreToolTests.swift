// The store commands as a library: verify/get/export/import outputs and exit codes.

import Foundation
import RecordModel
import Testing

@testable import RecordLog

@Suite struct StoreToolTests {
    @Test func verifyCleanAndDamaged() throws {
        let fs = InMemoryFileSystem()
        let s = try openStore(fs)
        try s.commit([.save(note("a")), .save(note("b", zone: ZoneID(zoneName: "Z"))), .createZone(ZoneID(zoneName: "Z"))])
        try s.save(note("c"))
        try s.close()
        let ok = StoreTool.verify(db: dbDir, json: false, fileSystem: fs)
        #expect(ok.exitCode == 0)
        #expect(ok.stdout.contains("live records: 3"))
        #expect(ok.stdout.contains("type Note: 3"))
        #expect(ok.stdout.hasSuffix("status: clean\n"))
        let offs = frameOffsets(try #require(fs.contents(segPath(1))))
        fs.flipBit(segPath(1), atByte: offs[1] + 30)
        let bad = StoreTool.verify(db: dbDir, json: true, fileSystem: fs)
        #expect(bad.exitCode == 1)
        let j = try JSONValue.parse(bad.stdout)
        #expect(j["clean"] == .bool(false))
        guard case .array(let cs) = j["corruptions"] else { Issue.record("no corruptions"); return }
        #expect(cs.first?["offset"] == .integer(Int64(offs[1])))
        #expect(StoreTool.verify(db: "/nowhere", json: false, fileSystem: fs).exitCode == 1)
    }

    @Test func getFindsOrSaysNotFound() throws {
        let fs = InMemoryFileSystem()
        let s = try openStore(fs)
        try s.save(note("a", 7))
        try s.close()
        let text = StoreTool.get(db: dbDir, type: "Note", recordName: "a", json: false, fileSystem: fs)
        #expect(text.exitCode == 0)
        #expect(text.stdout.contains("n INT64 = 7"))
        let json = StoreTool.get(db: dbDir, type: "Note", recordName: "a", json: true, fileSystem: fs)
        #expect(try Record(webServicesJSON: JSONValue.parse(json.stdout))["n"] == .int64(7))
        #expect(StoreTool.get(db: dbDir, type: "Note", recordName: "zz", json: false, fileSystem: fs).exitCode == 1)
        #expect(StoreTool.get(db: dbDir, type: "Other", recordName: "a", json: false, fileSystem: fs).exitCode == 1)
    }

    @Test func importThenExportOnDisk() throws {
        let tmp = NSTemporaryDirectory() + "cirrus-tool-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: tmp) }
        let file = tmp + "/in.jsonl"
        try Data(ImportExportTests.jsonl.utf8).write(to: URL(fileURLWithPath: file))
        let imp = StoreTool.importFiles(db: tmp + "/db", files: [file])
        #expect(imp.exitCode == 1)  // three rejected lines
        #expect(imp.stdout.hasPrefix("imported 3 records (3 rejected)"))
        #expect(imp.stderr.contains("in.jsonl:4:"))
        var lines: [String] = []
        let exp = StoreTool.export(db: tmp + "/db", type: "Note") { lines.append($0) }
        #expect(exp.exitCode == 0)
        #expect(lines.count == 2)
        #expect(StoreTool.verify(db: tmp + "/db", json: false).exitCode == 0)
    }
}

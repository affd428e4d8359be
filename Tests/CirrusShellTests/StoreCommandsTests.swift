// The store commands (`cirrus import/export/verify/get`) as a library: outputs and exit codes.

import CirrusIO
import CirrusShell
import Foundation
import RecordLog
import RecordModel
import Testing

// A container directory; its development environment's log is the store at /db/development.
private let dbDir = "/db"
private let storeDir = "/db/development"
private func segPath(_ n: UInt64) -> String { storeDir + "/" + Manifest.segmentFileName(n) }
private func openStore(_ fs: InMemoryFileSystem) throws -> RecordStore {
    try RecordStore.open(directory: storeDir, fileSystem: fs)
}
private func note(_ name: String, _ i: Int = 0, zone: ZoneID = .default) -> Record {
    Record(
        recordType: "Note", recordID: RecordID(recordName: name, zoneID: zone),
        fields: ["title": .string(name), "n": .int64(Int64(i))])
}
private func frameOffsets(_ bytes: [UInt8]) -> [Int] {
    var out: [Int] = []
    var p = LogFormat.segmentHeaderSize
    bytes.withUnsafeBytes { b in
        while let h = Frame.validFrame(in: b, at: p) {
            out.append(p)
            p = h.end
        }
    }
    return out
}
private let sampleJSONL = """
    {"recordName":"n1","recordType":"Note","fields":{"title":{"value":"Hello","type":"STRING"}}}
    {"recordName":"n2","recordType":"Note","fields":{"n":{"value":2,"type":"INT64"}}}
    {"recordName":"bad name","recordType":"Note","fields":{}}
    {"recordName":"n3","recordType":"Place","fields":{}}
    """

@Suite struct StoreCommandsTests {
    @Test func verifyCleanAndDamaged() throws {
        let fs = InMemoryFileSystem()
        let s = try openStore(fs)
        try s.commit([
            .save(note("a")), .save(note("b", zone: ZoneID(zoneName: "Z"))), .createZone(ZoneID(zoneName: "Z")),
        ])
        try s.save(note("c"))
        try s.close()
        let ok = StoreCommands.verify(db: dbDir, json: false, fileSystem: fs)
        #expect(ok.exitCode == 0)
        #expect(ok.stdout.contains("live records: 3"))
        #expect(ok.stdout.contains("type Note: 3"))
        #expect(ok.stdout.hasSuffix("indexes: ok\nstatus: clean\n"))
        let offs = frameOffsets(try #require(fs.contents(segPath(1))))
        fs.flipBit(segPath(1), atByte: offs[1] + 30)
        let bad = StoreCommands.verify(db: dbDir, json: true, fileSystem: fs)
        #expect(bad.exitCode == 1)
        let j = try JSONValue.parse(bad.stdout)
        #expect(j["clean"] == .bool(false))
        guard case .array(let cs) = j["environments"]?["development"]?["corruptions"] else {
            Issue.record("no corruptions"); return
        }
        #expect(cs.first?["offset"] == .integer(Int64(offs[1])))
        #expect(StoreCommands.verify(db: "/nowhere", json: false, fileSystem: fs).exitCode == 1)
    }

    @Test func getFindsOrSaysNotFound() async throws {
        let fs = InMemoryFileSystem()
        let s = try openStore(fs)
        try s.save(note("a", 7))
        try s.close()
        let text = await StoreCommands.get(db: dbDir, type: "Note", recordName: "a", json: false, fileSystem: fs)
        #expect(text.exitCode == 0)
        #expect(text.stdout.contains("n INT64 = 7"))
        let json = await StoreCommands.get(db: dbDir, type: "Note", recordName: "a", json: true, fileSystem: fs)
        #expect(try Record(webServicesJSON: JSONValue.parse(json.stdout))["n"] == .int64(7))
        #expect(
            await StoreCommands.get(db: dbDir, type: "Note", recordName: "zz", json: false, fileSystem: fs).exitCode
                == 1)
        #expect(
            await StoreCommands.get(db: dbDir, type: "Other", recordName: "a", json: false, fileSystem: fs).exitCode
                == 1)
    }

    @Test func importThenExportOnDisk() throws {
        let tmp = NSTemporaryDirectory() + "cirrus-tool-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: tmp) }
        let file = tmp + "/in.jsonl"
        try Data(sampleJSONL.utf8).write(to: URL(fileURLWithPath: file))
        let imp = StoreCommands.importFiles(db: tmp + "/db", files: [file])
        #expect(imp.exitCode == 1)  // one rejected line
        #expect(imp.stdout.hasPrefix("imported 3 records (1 rejected)"))
        #expect(imp.stderr.contains("in.jsonl:3:"))
        var lines: [String] = []
        let exp = StoreCommands.export(db: tmp + "/db", type: "Note") { lines.append($0) }
        #expect(exp.exitCode == 0)
        #expect(lines.count == 2)
        #expect(StoreCommands.verify(db: tmp + "/db", json: false).exitCode == 0)
    }
}

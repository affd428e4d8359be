// Import/export: JSON Lines with bad lines reported by number, gzip, XML and binary property
// lists, and import → export → import losslessness on random records.

import CirrusTestSupport
import Foundation
import RecordModel
import Testing

@testable import CirrusIO
@testable import RecordLog

@Suite struct ImportExportTests {
    func store() throws -> RecordStore { try openStore(InMemoryFileSystem(), durability: .none) }

    static let jsonl = """
        {"recordName":"n1","recordType":"Note","fields":{"title":{"value":"Hello","type":"STRING"},"n":{"value":3,"type":"INT64"}}}

        {"recordName":"n2","recordType":"Note","zoneID":{"zoneName":"Z"},"fields":{"tags":{"value":["a","b"],"type":"STRING_LIST"},"at":{"value":1700000000000,"type":"TIMESTAMP"}}}
        {"recordName":"bad name","recordType":"Note","fields":{}}
        {"recordName":"n3","recordType":"Note","fields":{"x":{"value":"nope","type":"INT64"}}}
        {not json
        {"recordName":"n4","recordType":"Place","fields":{"loc":{"value":{"latitude":48.85,"longitude":2.29},"type":"LOCATION"},"ref":{"value":{"recordName":"n1","action":"DELETE_SELF"},"type":"REFERENCE"},"b":{"value":"AAEC","type":"BYTES"}}}
        """

    @Test func jsonLinesReportsBadLinesAndGoesOn() throws {
        let s = try store()
        let sum = try RecordTransfer.importBytes(Array(Self.jsonl.utf8), name: "in.jsonl", into: s)
        #expect(sum.records == 3)
        #expect(sum.rejected == 3)
        #expect(sum.rejections.map(\.line) == [4, 5, 6])
        #expect(sum.rejections[0].reason.contains("record name"))
        #expect(sum.rejections[1].reason.contains("field \"x\""))
        #expect(sum.rejections[2].reason.hasPrefix("JSON"))
        #expect(names(s) == ["n1", "n2", "n4"])
        let n4 = try #require(try s.record(RecordID(recordName: "n4"))).record
        #expect(n4["b"] == .bytes([0, 1, 2]))
        #expect(try s.record(RecordID(recordName: "n2", zoneID: ZoneID(zoneName: "Z")))?.record["tags"] == ["a", "b"])
    }

    @Test func stopOnError() throws {
        let s = try store()
        var o = ImportOptions()
        o.stopOnError = true
        let sum = try RecordTransfer.importBytes(Array(Self.jsonl.utf8), name: "in", into: s, options: o)
        #expect(sum.records == 2)
        #expect(sum.rejected == 1)
    }

    @Test func gzipJSONLines() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", "gzip -c"]
        let inPipe = Pipe()
        let outPipe = Pipe()
        p.standardInput = inPipe
        p.standardOutput = outPipe
        try p.run()
        inPipe.fileHandleForWriting.write(Data(Self.jsonl.utf8))
        try inPipe.fileHandleForWriting.close()
        let gz = [UInt8](outPipe.fileHandleForReading.readDataToEndOfFile())
        p.waitUntilExit()
        #expect(Gzip.isGzip(gz))
        let s = try store()
        let sum = try RecordTransfer.importBytes(gz, name: "in.jsonl.gz", into: s)
        #expect(sum.records == 3)
        #expect(sum.rejected == 3)
        #expect(sum.bytes == Self.jsonl.utf8.count)
        #expect(throws: GzipError.self) { try Gzip.decompress(Array(gz.prefix(gz.count / 2))) }
    }

    @Test(arguments: [PropertyListSerialization.PropertyListFormat.xml, .binary])
    func propertyLists(_ format: PropertyListSerialization.PropertyListFormat) throws {
        let items: [Any] = [
            [
                "recordName": "p1", "recordType": "Place",
                "fields": [
                    "name": ["value": "Louvre", "type": "STRING"], "n": ["value": 7, "type": "INT64"],
                    "d": ["value": 2.5, "type": "DOUBLE"],
                    "when": ["value": Date(timeIntervalSince1970: 1_700_000_000), "type": "TIMESTAMP"],
                    "blob": ["value": Data([1, 2, 3]), "type": "BYTES"],
                ],
            ] as [String: Any],
            ["recordName": "p2"] as [String: Any],
        ]
        let data = try PropertyListSerialization.data(fromPropertyList: items, format: format, options: 0)
        let s = try store()
        let sum = try RecordTransfer.importBytes([UInt8](data), name: "in.plist", into: s)
        #expect(sum.records == 1)
        #expect(sum.rejections.map(\.line) == [2])
        let r = try #require(try s.record(RecordID(recordName: "p1"))).record
        #expect(identical(r["n"] ?? "", .int64(7)))
        #expect(identical(r["d"] ?? "", .double(2.5)))
        // XML plist dates have whole seconds.
        #expect(r["when"] == .date(Timestamp(millisecondsSince1970: 1_700_000_000_000)))
        #expect(r["blob"] == .bytes([1, 2, 3]))
    }

    @Test func importExportImportIsLossless() throws {
        let seed = TestSeed.next()
        print("ImportExportTests.importExportImportIsLossless seed \(seed)")
        var g = SeededRandom(seed: seed)
        let a = try store()
        var ops: [LogOperation] = []
        for i in 0..<500 {
            var r = TestRecords.record(&g, id: RecordID(recordName: "r\(i)", zoneID: TestRecords.zone(&g)))
            // JSON has no -0.0; CloudKit equality treats it as 0 anyway.
            func plusZero(_ v: FieldValue) -> FieldValue {
                if case .double(let d) = v, d == 0 { return .double(0) }
                if case .list(let items) = v { return .list(items.map(plusZero)) }
                return v
            }
            r.fields = r.fields.mapValues(plusZero)
            ops.append(.save(r))
        }
        try a.commit(ops)
        var text = ""
        let n = try RecordTransfer.exportJSONLines(a.snapshot()) { text += $0 }
        #expect(n == 500)
        let b = try store()
        let sum = try RecordTransfer.importBytes(Array(text.utf8), name: "export", into: b)
        #expect(sum.rejected == 0, "\(sum.rejections.prefix(3))")
        for (id, v) in try a.snapshot().records {
            let other = try #require(try b.record(id), "seed \(seed): \(id) missing")
            #expect(identical(v.record, other.record), "seed \(seed): \(id)")
        }
        var text2 = ""
        try RecordTransfer.exportJSONLines(b.snapshot()) { text2 += $0 }
        #expect(text2 == text)
        var onlyNotes = 0
        try RecordTransfer.exportJSONLines(a.snapshot(), type: "Note") { _ in onlyNotes += 1 }
        #expect(onlyNotes == a.snapshot().countsByType["Note"])
    }

    /// `ImportSummary.add(_:options:)` keeps as many rejections as the option says, both fewer
    /// and more than the default 100, and never more than that in total.
    @Test(arguments: [3, 150])
    func summaryAddKeepsMaximumReportedRejections(limit: Int) throws {
        var o = ImportOptions()
        o.maximumReportedRejections = limit
        let bad = Array(String(repeating: "{not json\n", count: 120).utf8)
        var total = ImportSummary()
        for name in ["a", "b"] {
            let s = try openStore(InMemoryFileSystem(), durability: .none)
            let sum = try RecordTransfer.importBytes(bad, name: name, into: s, options: o)
            #expect(sum.rejected == 120)
            #expect(sum.rejections.count == min(limit, 120))
            total.add(sum, options: o)
        }
        #expect(total.rejected == 240)
        #expect(total.rejections.count == limit)
        let files = Array(repeating: "a", count: min(limit, 120)) + Array(repeating: "b", count: 120)
        #expect(total.rejections.map(\.file) == Array(files.prefix(limit)))
        // A smaller limit trims what the summary already holds.
        o.maximumReportedRejections = 1
        total.add(ImportSummary(), options: o)
        #expect(total.rejections.map(\.file) == ["a"])
        #expect(total.rejected == 240)
    }
}

@Suite struct StreamingImportTests {
    /// Line numbers and counts are right when a file is streamed in pieces (tiny pieces here
    /// through `importFile` would need a 32 MiB file, so the piece logic is driven directly).
    @Test func piecesKeepLineNumbers() throws {
        let s = try openStore(InMemoryFileSystem(), durability: .none)
        var imp = RecordTransfer.Importer(name: "f", options: ImportOptions(), sink: RecordTransfer.storeSink(s))
        let text = Array(ImportExportTests.jsonl.utf8) + [0x0A]
        // split after the 3rd newline
        var newlines = 0
        var cut = 0
        for (i, b) in text.enumerated() where b == 0x0A {
            newlines += 1
            if newlines == 3 { cut = i + 1; break }
        }
        try imp.importJSONLines(Array(text[..<cut]))
        try imp.importJSONLines(Array(text[cut...]))
        let sum = try imp.finish()
        #expect(sum.records == 3)
        #expect(sum.rejections.map(\.line) == [4, 5, 6])
    }

    @Test func importFileStreamsPlainJSONLines() throws {
        let path = NSTemporaryDirectory() + "cirrus-stream-\(getpid()).jsonl"
        try Data(ImportExportTests.jsonl.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let s = try openStore(InMemoryFileSystem(), durability: .none)
        let sum = try RecordTransfer.importFile(path, into: s)
        #expect(sum.records == 3)
        #expect(sum.rejections.map(\.line) == [4, 5, 6])
        #expect(sum.bytes == ImportExportTests.jsonl.utf8.count)
    }
}

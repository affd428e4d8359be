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
    /// Line numbers, counts and bytes are right however the input is cut into pieces — one
    /// byte at a time, in the middle of lines, at newlines, whole — and without a last newline.
    @Test(arguments: [1, 5, 64, 1 << 20]) func piecesKeepLineNumbers(pieceSize: Int) throws {
        let s = try openStore(InMemoryFileSystem(), durability: .none)
        var imp = RecordTransfer.Importer(name: "f", options: ImportOptions(), sink: RecordTransfer.storeSink(s))
        let text = Array(ImportExportTests.jsonl.utf8)
        try RecordTransfer.importJSONLines(&imp, read: PieceFeeder(text, size: pieceSize).next)
        let sum = try imp.finish()
        #expect(sum.records == 3)
        #expect(sum.rejections.map(\.line) == [4, 5, 6])
        #expect(sum.bytes == text.count)
        #expect(try s.snapshot().records(ofType: nil, in: nil).count == 3)
    }

    /// More lines than a window: every record arrives, in input order, with its own line
    /// number (a rejection placed past the first window's end proves the numbering).
    @Test func windowsKeepInputOrder() throws {
        let n = RecordTransfer.windowLines + 100
        var text = ""
        for i in 1...n {
            text +=
                i == n - 50
                ? "{\"recordName\":\"bad name\",\"recordType\":\"N\",\"fields\":{}}\n"
                : "{\"recordName\":\"r\(i)\",\"recordType\":\"N\",\"fields\":{\"i\":{\"value\":\(i),\"type\":\"INT64\"}}}\n"
        }
        var order: [Int] = []
        var imp = RecordTransfer.Importer(name: "f", options: ImportOptions()) { batch in
            order += batch.map(\.line)
            return []
        }
        try RecordTransfer.importJSONLines(&imp, read: PieceFeeder(Array(text.utf8), size: 100_000).next)
        let sum = try imp.finish()
        #expect(sum.records == n - 1)
        #expect(sum.rejections.map(\.line) == [n - 50])
        #expect(order == Array(1...n).filter { $0 != n - 50 })
    }

    /// A read that fails is rethrown to the committing thread, after the windows read before it.
    @Test func aFailingReadIsRethrown() throws {
        struct ReadFailed: Error {}
        let feeder = PieceFeeder(
            Array(ImportExportTests.jsonl.utf8.prefix(200)), size: 1 << 20, failAtEnd: ReadFailed())
        var committed = 0
        var imp = RecordTransfer.Importer(name: "f", options: ImportOptions()) { batch in
            committed += batch.count
            return []
        }
        #expect(throws: ReadFailed.self) { try RecordTransfer.importJSONLines(&imp, read: feeder.next) }
        try imp.flush()
        #expect(committed == 1)  // the first record's line was whole before the failure
    }

    /// Stopping at the first error stops the reader too: nothing after it is committed.
    @Test func stopOnErrorStopsTheReader() throws {
        var o = ImportOptions()
        o.stopOnError = true
        let s = try openStore(InMemoryFileSystem(), durability: .none)
        var imp = RecordTransfer.Importer(name: "f", options: o, sink: RecordTransfer.storeSink(s))
        try RecordTransfer.importJSONLines(&imp, read: PieceFeeder(Array(ImportExportTests.jsonl.utf8), size: 7).next)
        let sum = try imp.finish()
        #expect(sum.rejections.map(\.line) == [4])
        #expect(sum.records == 2)
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

/// An input handed out in pieces of `size` bytes (then nil, or `failAtEnd` thrown), as a file is
/// read; called by the reader job only.
final class PieceFeeder: @unchecked Sendable {
    private let bytes: [UInt8]
    private let size: Int
    private let failAtEnd: (any Error)?
    private var at = 0

    init(_ bytes: [UInt8], size: Int, failAtEnd: (any Error)? = nil) {
        self.bytes = bytes
        self.size = size
        self.failAtEnd = failAtEnd
    }

    func next() throws -> [UInt8]? {
        guard at < bytes.count else {
            if let failAtEnd { throw failAtEnd }
            return nil
        }
        let end = min(bytes.count, at + size)
        defer { at = end }
        return Array(bytes[at..<end])
    }
}

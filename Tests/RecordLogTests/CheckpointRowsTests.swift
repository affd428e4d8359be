// CheckpointRows split into parts (a checkpoint reads a large table's rows on all cores): the
// parts cover every row once, in order, numbered from the layer's start, and the failure they
// share names the lowest row that does not decode whichever part read it first.

import CirrusIO
import CirrusTestSupport
import Foundation
import RecordModel
import Testing

@testable import RecordLog

@Suite struct CheckpointRowsTests {
    func rows(_ n: Int, garbage: Set<Int> = [], fs: any FileSystem, path: String = "/rows") throws -> RowSection {
        var w = try DataSegmentWriter(fileSystem: fs, path: path)
        var rw = try RowSectionWriter(into: &w)
        for i in 0..<n {
            let id = RecordID(recordName: "r" + String(String(10_000 + i).dropFirst()))
            var r = Record(recordType: "Note", recordID: id)
            r["n"] = .int64(Int64(i))
            let payload = garbage.contains(i) ? [0xFF, 0x01, 0x02] : RecordCodec.encode(r)
            try payload.withUnsafeBytes { try rw.add(id, sequence: UInt64(i + 1), payload: $0, into: &w) }
        }
        try rw.finish(into: &w)
        try w.finish()
        return try RowSection(segment: try DataSegment.open(path, fileSystem: fs))
    }

    @Test(arguments: [0, 1, 5, 97])
    func partsCoverEveryRowOnceInOrder(_ n: Int) throws {
        let section = try rows(n, fs: InMemoryFileSystem())
        let all = CheckpointRows(key: TableKey(owner: "_o", recordType: "Note"), rows: section, start: 1000)
        let whole = all.map { ($0.0, $0.1.recordID.recordName) }
        #expect(whole.map(\.0) == Array(1000..<(1000 + n)))
        for count in [1, 2, 3, 8] {
            let parts = all.parts(count, minimum: 10)
            #expect(parts.count == max(1, min(count, n / 10)))
            #expect(parts.map(\.count).reduce(0, +) == n)
            #expect(parts.allSatisfy { $0.layerStart == 1000 })
            let joined = parts.flatMap { p in p.map { ($0.0, $0.1.recordID.recordName) } }
            #expect(joined.map(\.0) == whole.map(\.0) && joined.map(\.1) == whole.map(\.1), "\(count) parts")
        }
    }

    @Test func theSharedFailureIsTheLowestUndecodableRow() throws {
        let section = try rows(60, garbage: [12, 45], fs: InMemoryFileSystem())
        let all = CheckpointRows(key: TableKey(owner: "_o", recordType: "Note"), rows: section)
        let parts = all.parts(3, minimum: 20)
        #expect(parts.count == 3)
        // The last part first: it meets row 45 before any part meets row 12.
        #expect(parts[2].map(\.0) == Array(40..<45))
        #expect(all.failure.value?.row == 45)
        #expect(parts[0].map(\.0) == Array(0..<12))
        #expect(all.failure.value?.row == 12)
        #expect(parts[1].map(\.0) == Array(20..<40))
        #expect(all.failure.value?.row == 12)
    }

    /// A pass over a mapped layer releases the pages of the rows it has read (an index build over a layer
    /// larger than memory): the mapping's resident set falls, and every row reads the same
    /// afterwards, whole passes and ranges released out of order included.
    @Test func aPassReleasesWhatItReadAndTheRowsReadTheSame() throws {
        let dir = NSTemporaryDirectory() + "cirrus-rows-\(UInt64.random(in: 0...UInt64.max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let n = 3 * CheckpointRows.Iterator.releaseEvery + 77
        let section = try rows(n, fs: POSIXFileSystem(), path: dir + "/rows")
        let all = CheckpointRows(key: TableKey(owner: "_o", recordType: "Note"), rows: section)
        let file = section.segment.file
        var sum = 0
        for b in file.bytes { sum &+= Int(b) }  // every page resident
        let touched = try #require(Self.resident(file.path))
        let first = all.map { $0.1["n"] }
        let afterPass = try #require(Self.resident(file.path))
        #expect(touched * 1024 > file.bytes.count / 2 && afterPass < touched / 2, "\(touched) → \(afterPass) KiB")
        #expect(first == (0..<n).map { .int64(Int64($0)) })
        for r in [5000..<9000, 0..<1, 40_000..<n, 1..<n] { section.releaseResidentPages(rows: r) }
        #expect(all.map { $0.1["n"] } == first)
        var again = 0
        for b in file.bytes { again &+= Int(b) }
        #expect(again == sum)
    }

    /// The resident KiB of the mapping of `path` in this process (/proc/self/smaps); nil where
    /// there is none.
    static func resident(_ path: String) -> Int? {
        // Read to the end: /proc files report no size.
        guard let h = FileHandle(forReadingAtPath: "/proc/self/smaps"),
            let smaps = String(data: h.readDataToEndOfFile(), encoding: .utf8)
        else { return nil }
        var inFile = false
        var total: Int?
        for line in smaps.split(separator: "\n") {
            if let c = line.first, c.isHexDigit, line.contains("-") {
                inFile = line.hasSuffix(" " + path)
            } else if inFile, line.hasPrefix("Rss:") {
                total = (total ?? 0) + (Int(line.split(separator: " ")[1]) ?? 0)
            }
        }
        return total
    }
}

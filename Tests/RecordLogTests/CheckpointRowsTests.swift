// CheckpointRows split into parts (a checkpoint reads a large table's rows on all cores): the
// parts cover every row once, in order, numbered from the layer's start, and the failure they
// share names the lowest row that does not decode whichever part read it first.

import CirrusIO
import CirrusTestSupport
import RecordModel
import Testing

@testable import RecordLog

@Suite struct CheckpointRowsTests {
    func rows(_ n: Int, garbage: Set<Int> = [], fs: InMemoryFileSystem) throws -> RowSection {
        var w = try DataSegmentWriter(fileSystem: fs, path: "/rows")
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
        return try RowSection(segment: try DataSegment.open("/rows", fileSystem: fs))
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
}

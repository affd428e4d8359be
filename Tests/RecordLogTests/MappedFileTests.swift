// MappedFile over a real file: releasing the resident pages of a mapping keeps its bytes valid
// and unchanged (they come back from the page cache when read).

import CirrusIO
import Foundation
import Testing

@Suite struct MappedFileTests {
    @Test func releasedPagesReadTheSameBytes() throws {
        let dir = NSTemporaryDirectory() + "cirrus-mapped-\(UInt64.random(in: 0...UInt64.max))"
        let fs = POSIXFileSystem()
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/f"
        // Several pages of bytes that differ page to page.
        let bytes = (0..<(5 * 4096 + 123)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 12) }
        try fs.writeAtomically(path, bytes)
        let m = try fs.map(path)
        #expect(Array(m.bytes) == bytes)
        m.releaseResidentPages()
        #expect(Array(m.bytes) == bytes)
        m.releaseResidentPages()
        #expect(m.bytes[4096 * 3 + 7] == bytes[4096 * 3 + 7])
        // A heap copy (no mapping): nothing to release, the bytes unchanged.
        let copy = MappedFile(path: path, copying: bytes)
        copy.releaseResidentPages()
        #expect(Array(copy.bytes) == bytes)
    }
}

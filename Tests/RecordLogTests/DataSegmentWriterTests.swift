// DataSegmentWriter: sections of 1 MiB or more are written from the caller's bytes without
// passing through the write buffer. The file must be byte for byte the one written in small
// appends, every section must read back as written, and every block's CRC must hold.

import CirrusIO
import CirrusTestSupport
import Testing

@testable import RecordLog

@Suite struct DataSegmentWriterTests {
    @Test func largeSectionsWriteTheFileSmallAppendsWrite() throws {
        var rng = SeededRandom(seed: TestSeed.next())
        let sizes = [0, 5, (1 << 20) - 1, 1 << 20, (3 << 20) + 17, 100, (1 << 20) + 1, 7]
        let sections = sizes.enumerated().map { (k, n) in
            ("s\(k)", (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
        }
        let fs = InMemoryFileSystem()
        var whole = try DataSegmentWriter(fileSystem: fs, path: "/whole")
        var pieces = try DataSegmentWriter(fileSystem: fs, path: "/pieces")
        for (name, bytes) in sections {
            try whole.addSection(name, bytes)
            try pieces.beginSection(name)
            var at = 0
            while at < bytes.count {
                let n = min(bytes.count - at, 1 + rng.below(40_000))
                try pieces.append(Array(bytes[at..<(at + n)]))
                at += n
            }
            pieces.endSection()
        }
        try whole.finish()
        try pieces.finish()
        #expect(try fs.read("/whole") == fs.read("/pieces"))
        let seg = try DataSegment.open("/whole", fileSystem: fs)
        for (name, bytes) in sections {
            let read = try #require(seg.section(name))
            #expect(Array(read) == bytes, "\(name)")
        }
        #expect(seg.verifyBlocks().isEmpty)
    }
}

// One named test per damage case (LevelDB log_test style): torn header, torn frame, bad CRC in
// the last frame, bad CRC mid-log, truncated segment, zero-filled tail, failed fsync, torn batch.

import CirrusIO
import CirrusTestSupport
import Foundation
import RecordModel
import Testing

@testable import RecordLog

@Suite struct DamageTests {
    /// A store with records a, b, c (one commit each) in segment 1.
    func threeRecords() throws -> InMemoryFileSystem {
        let fs = InMemoryFileSystem()
        let s = try openStore(fs)
        for n in ["a", "b", "c"] { try s.save(note(n)) }
        try s.close()
        return fs
    }

    @Test func reopenIsClean() throws {
        let fs = try threeRecords()
        let s = try openStore(fs)
        #expect(s.openReport.isClean)
        #expect(names(s) == ["a", "b", "c"])
        #expect(s.lastSequence == 3)
        #expect(try s.save(note("d")) == 4)
    }

    @Test func tornHeader() throws {
        let fs = InMemoryFileSystem()
        let s = try openStore(fs, segmentSize: 60)
        try s.save(note("a"))
        try s.save(note("b"))  // rotates into segment 2 first
        try s.save(note("c"))  // segment 3
        try s.close()
        // Segment 3 loses most of its header (and its frame).
        fs.damageTruncate(segPath(3), to: 10)
        let r = try openStore(fs)
        #expect(names(r) == ["a", "b"])
        #expect(r.openReport.tornTail?.segment == 3)
        #expect(r.openReport.tornTail?.offset == 0)
        try r.save(note("d"))
        try r.close()
        let again = try openStore(fs)
        #expect(again.openReport.isClean)
        #expect(names(again) == ["a", "b", "d"])
    }

    @Test func damagedHeaderWithFramesAfterIsCorruption() throws {
        let fs = try threeRecords()
        fs.flipBit(segPath(1), atByte: 3)
        #expect(throws: LogError.corruption(segment: 1, offset: 0, reason: "segment header: bad segment magic")) {
            try openStore(fs)
        }
        let r = try openStore(fs, repair: true)
        #expect(names(r) == ["a", "b", "c"])
        #expect(r.openReport.repaired)
    }

    @Test func tornFrame() throws {
        let fs = try threeRecords()
        let bytes = try #require(fs.contents(segPath(1)))
        let offs = frameOffsets(bytes)
        fs.damageTruncate(segPath(1), to: offs[2] + 30)
        let r = try openStore(fs)
        #expect(names(r) == ["a", "b"])
        #expect(
            r.openReport.tornTail
                == TornTail(segment: 1, offset: offs[2], bytesDropped: 30, framesDropped: 0, truncated: true))
        #expect(fs.contents(segPath(1))?.count == offs[2])
    }

    @Test func badCRCInLastFrame() throws {
        let fs = try threeRecords()
        let offs = frameOffsets(try #require(fs.contents(segPath(1))))
        fs.flipBit(segPath(1), atByte: offs[2] + 30, bit: 4)
        let r = try openStore(fs)
        #expect(names(r) == ["a", "b"])
        #expect(r.openReport.tornTail?.offset == offs[2])
        #expect(r.openReport.corruptions.isEmpty)
    }

    @Test func badCRCMidLog() throws {
        let fs = try threeRecords()
        let offs = frameOffsets(try #require(fs.contents(segPath(1))))
        fs.flipBit(segPath(1), atByte: offs[0] + 40, bit: 2)
        #expect(throws: LogError.corruption(segment: 1, offset: offs[0], reason: "frame checksum mismatch")) {
            try openStore(fs)
        }
        // verify reports without changing anything
        let v = try RecordStore.verify(directory: dbDir, fileSystem: fs)
        #expect(v.isDamaged)
        #expect(v.open.corruptions.first?.offset == offs[0])
        #expect(v.liveRecords == 2)
        // repair salvages every intact frame after it, then rewrites the store
        let r = try openStore(fs, repair: true)
        #expect(names(r) == ["b", "c"])
        #expect(r.openReport.repaired)
        #expect(r.openReport.corruptions.count == 1)
        try r.close()
        let clean = try openStore(fs)
        #expect(clean.openReport.isClean)
        #expect(names(clean) == ["b", "c"])
        #expect(try !RecordStore.verify(directory: dbDir, fileSystem: fs).isDamaged)
    }

    @Test func truncatedSegment() throws {
        let fs = InMemoryFileSystem()
        let s = try openStore(fs, segmentSize: 60)
        for n in ["a", "b", "c", "d"] { try s.save(note(n)) }
        try s.close()
        let segs = try fs.list(dbDir).filter { $0.hasPrefix("seg-") }
        #expect(segs.count >= 2)
        // A sealed (not last) segment loses its tail: that is corruption, not a torn tail.
        let bytes = try #require(fs.contents(segPath(1)))
        fs.damageTruncate(segPath(1), to: bytes.count - 5)
        #expect(throws: LogError.self) { try openStore(fs) }
        do {
            _ = try openStore(fs)
        } catch let LogError.corruption(segment, offset, _) {
            #expect(segment == 1)
            #expect(offset == frameOffsets(bytes).last)
        }
        let r = try openStore(fs, repair: true)
        #expect(!names(r).isEmpty)
        #expect(!names(r).contains("a") || names(r).count < 4)
    }

    @Test func zeroFilledTail() throws {
        let fs = try threeRecords()
        let size = try fs.size(segPath(1))
        fs.zeroFill(segPath(1), from: size, through: size + 4096)
        let r = try openStore(fs)
        #expect(names(r) == ["a", "b", "c"])
        #expect(
            r.openReport.tornTail
                == TornTail(segment: 1, offset: size, bytesDropped: 4096, framesDropped: 0, truncated: true))
    }

    @Test func failedFsync() throws {
        let fs = InMemoryFileSystem()
        let s = try openStore(fs)
        try s.save(note("a"))
        fs.setFailSyncs(true)
        #expect(throws: LogError.self) { try s.save(note("b")) }
        fs.setFailSyncs(false)
        // After a failed fsync nothing more is accepted: the data in the page cache is suspect.
        #expect(throws: LogError.self) { try s.save(note("c")) }
        #expect(names(s) == ["a"])
        fs.crash()
        let r = try openStore(fs)
        #expect(names(r) == ["a"])
        try r.save(note("d"))
        #expect(names(r) == ["a", "d"])
    }

    @Test func tornBatchIsAllOrNothing() throws {
        // Every possible prefix of an unsynced 3-record batch survives a crash: all or nothing.
        let probe = InMemoryFileSystem()
        let lazy = Durability.batched(milliseconds: 1_000_000_000, bytes: 1 << 40)
        let p = try openStore(probe, durability: lazy)
        try p.save(note("a"))
        try p.sync()
        let before = try probe.size(segPath(1))
        try p.commit([.save(note("x")), .save(note("y")), .save(note("z"))])
        try p.sync()
        let batchBytes = try probe.size(segPath(1)) - before
        for keep in 0...batchBytes {
            let fs = InMemoryFileSystem()
            let s = try openStore(fs, durability: lazy)
            try s.save(note("a"))
            try s.sync()
            try s.commit([.save(note("x")), .save(note("y")), .save(note("z"))])
            fs.crash(keepUnsynced: { _, n in min(keep, n) })
            let r = try openStore(fs)
            let got = names(r)
            #expect(got == ["a"] || got == ["a", "x", "y", "z"], "keep \(keep): \(got)")
            #expect(r.openReport.corruptions.isEmpty)
        }
    }
}

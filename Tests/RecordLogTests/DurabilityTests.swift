// Durability policies with an injected clock: when .batched and .none fsync, and that a
// read-only open (verify) never changes a file.

import CirrusIO
import Foundation
import RecordModel
import Synchronization
import Testing

@testable import RecordLog

/// A clock the test moves by hand.
final class ManualClock: LogClock {
    let nanos = Atomic<UInt64>(0)
    func wallMilliseconds() -> Int64 { 1_700_000_000_000 + Int64(nanos.load(ordering: .relaxed) / 1_000_000) }
    func monotonicNanoseconds() -> UInt64 { nanos.load(ordering: .relaxed) }
    func advance(milliseconds: UInt64) { nanos.add(milliseconds * 1_000_000, ordering: .relaxed) }
}

@Suite struct DurabilityTests {
    @Test func batchedSyncsByTimeAndBytes() throws {
        let fs = InMemoryFileSystem()
        let clock = ManualClock()
        let s = try RecordStore.open(
            directory: dbDir, fileSystem: fs,
            options: RecordStoreOptions(durability: .batched(milliseconds: 100, bytes: 1000), clock: clock))
        let base = s.stats().syncs
        try s.save(note("a"))
        try s.save(note("b"))
        #expect(s.stats().syncs == base)  // neither 100 ms nor 1000 bytes yet
        clock.advance(milliseconds: 150)
        try s.save(note("c"))
        #expect(s.stats().syncs == base + 1)  // time
        try s.commit((0..<20).map { .save(note("x\($0)")) })
        #expect(s.stats().syncs == base + 2)  // bytes
        try s.save(note("d"))
        fs.crash()  // "d" was written but not synced
        let r = try openStore(fs)
        #expect(names(r).contains("c"))
        #expect(names(r).contains("x19"))
        #expect(!names(r).contains("d"))
    }

    @Test func noneBuffersUntilSync() throws {
        let fs = InMemoryFileSystem()
        let s = try openStore(fs, durability: .none)
        try s.save(note("a"))
        #expect(try fs.size(segPath(1)) == LogFormat.segmentHeaderSize)  // still in the buffer
        try s.sync()
        #expect(try fs.size(segPath(1)) > LogFormat.segmentHeaderSize)
        try s.save(note("b"))
        try s.close()
        #expect(names(try openStore(fs)) == ["a", "b"])
    }

    @Test func readOnlyOpenChangesNothing() throws {
        let fs = InMemoryFileSystem()
        let s = try openStore(fs)
        try s.save(note("a"))
        try s.save(note("b"))
        try s.close()
        let size = try fs.size(segPath(1))
        fs.zeroFill(segPath(1), from: size, through: size + 100)
        let before = fs.contents(segPath(1))
        let v = try RecordStore.verify(directory: dbDir, fileSystem: fs)
        #expect(v.open.tornTail?.truncated == false)
        #expect(v.isDamaged)
        #expect(fs.contents(segPath(1)) == before)
        let ro = try openStore(fs, readOnly: true)
        #expect(throws: LogError.readOnly) { try ro.save(note("c")) }
        #expect(fs.contents(segPath(1)) == before)
        // a writable open repairs the tail; then verify is clean
        _ = try openStore(fs)
        #expect(try !RecordStore.verify(directory: dbDir, fileSystem: fs).isDamaged)
    }

    @Test func manifestDamageIsReportedAndRepairable() throws {
        let fs = InMemoryFileSystem()
        let s = try openStore(fs)
        try s.save(note("a"))
        try s.close()
        fs.flipBit(dbDir + "/CURRENT", atByte: 2)
        #expect(throws: LogError.self) { try openStore(fs) }
        let r = try openStore(fs, repair: true)
        #expect(names(r) == ["a"])
        #expect(r.openReport.repaired)
        try r.close()
        #expect(try openStore(fs).openReport.isClean)
    }
}

@Suite struct LockTests {
    @Test func oneWriterPerDirectory() throws {
        let fs = InMemoryFileSystem()
        let a = try openStore(fs)
        try a.save(note("a"))
        #expect(throws: LogError.self) { try openStore(fs) }
        let ro = try openStore(fs, readOnly: true)  // readers need no lock
        #expect(names(ro) == ["a"])
        try a.close()
        let b = try openStore(fs)
        #expect(names(b) == ["a"])
    }

    @Test func posixLockExcludesASecondWriter() throws {
        let dir = NSTemporaryDirectory() + "cirrus-lock-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let a = try RecordStore.open(directory: dir)
        do {
            _ = try RecordStore.open(directory: dir)
            Issue.record("second writer opened")
        } catch let LogError.locked(d, _) {
            #expect(d == dir)
        }
        try a.close()
        try RecordStore.open(directory: dir).close()
    }
}

// Group commit and snapshots under concurrency: concurrent committers get distinct, monotonic
// sequence numbers and share fsyncs; readers never observe half a batch.

import CirrusIO
import Foundation
import RecordModel
import Synchronization
import Testing

@testable import RecordLog

@Suite struct ConcurrencyTests {
    @Test func concurrentCommittersShareGroupsAndFsyncs() throws {
        let fs = InMemoryFileSystem()
        let s = try openStore(fs)
        let threads = 8
        let perThread = 200
        let seqs = Mutex<[UInt64]>([])
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            for i in 0..<perThread {
                if let q = try? s.commit([.save(note("t\(t)-\(i)", i)), .save(note("u\(t)-\(i)", i))]) {
                    seqs.withLock { $0.append(q) }
                }
            }
        }
        let all = seqs.withLock { $0 }
        #expect(all.count == threads * perThread)
        #expect(Set(all).count == all.count)
        let st = s.stats()
        #expect(st.commits == threads * perThread)
        #expect(st.liveRecords == threads * perThread * 2)
        #expect(st.syncs == st.groups)
        print("group commit: \(st.commits) commits in \(st.groups) groups")
        try s.close()
        let r = try openStore(fs)
        #expect(try r.snapshot().records.count == threads * perThread * 2)
        #expect(r.lastSequence == UInt64(threads * perThread * 2))
    }

    @Test func readersNeverSeeHalfABatch() throws {
        let s = try openStore(InMemoryFileSystem(), durability: .none)
        let stop = Atomic<Bool>(false)
        let torn = Atomic<Int>(0)
        let observed = Mutex<[UInt64]>([])
        s.addCommitObserver { entries in observed.withLock { $0.append(contentsOf: entries.map(\.sequence)) } }
        DispatchQueue.concurrentPerform(iterations: 2) { role in
            if role == 0 {
                for i in 0..<2000 { _ = try? s.commit([.save(note("a\(i)")), .save(note("b\(i)"))]) }
                stop.store(true, ordering: .releasing)
            } else {
                while !stop.load(ordering: .acquiring) {
                    let snap = s.snapshot()
                    let records = liveRecords(snap)
                    let a = records.keys.filter { $0.recordName.hasPrefix("a") }.count
                    if a * 2 != records.count { torn.add(1, ordering: .relaxed) }
                }
            }
        }
        #expect(torn.load(ordering: .relaxed) == 0)
        let seqs = observed.withLock { $0 }
        #expect(seqs == Array(1...4000))
    }
}

@Suite struct FailureFanOutTests {
    @Test func queuedCommittersFailAfterAFailedGroup() throws {
        let fs = InMemoryFileSystem()
        let s = try openStore(fs)
        try s.save(note("a"))
        fs.setFailSyncs(true)
        let ok = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 8) { t in
            for i in 0..<20 where (try? s.commit([.save(note("t\(t)-\(i)"))])) != nil { ok.withLock { $0 += 1 } }
        }
        #expect(ok.withLock { $0 } == 0)
        fs.crash()
        let r = try openStore(fs)
        #expect(names(r) == ["a"])
    }
}

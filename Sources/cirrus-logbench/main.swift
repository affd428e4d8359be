// cirrus-logbench: measurements of the record log (release build; no timing in unit tests).
//
//   cirrus-logbench append DIR N none|batched|every   bulk append of N small (~10 field) records, 1000 per commit
//   cirrus-logbench reopen DIR                         time to open (replay) a store
//   cirrus-logbench latency DIR N                      N sequential single-record .everyCommit commits
//   cirrus-logbench group DIR THREADS N                THREADS concurrent .everyCommit writers, N commits each
//   cirrus-logbench fsync DIR N                        baseline: N × (append 200 bytes + fdatasync) on a plain file
// cirrus-logbench commits DIR N THREADS              N single-record .none commits over THREADS threads (lock/queue
// overhead)

import CirrusIO
import Foundation
import RecordLog
import RecordModel

func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

func small(_ i: Int) -> Record {
    var r = Record(recordType: "Item", recordID: RecordID(recordName: "r\(i)"))
    r["title"] = .string("item number \(i)")
    r["count"] = .int64(Int64(i))
    r["price"] = .double(Double(i) * 0.25)
    r["when"] = .date(Timestamp(millisecondsSince1970: 1_700_000_000_000 + Int64(i)))
    r["kind"] = .string(["cafe", "bar", "shop"][i % 3])
    r["rank"] = .int64(Int64(i % 100))
    r["score"] = .double(Double(i % 1000) / 7)
    r["flag"] = .int64(Int64(i & 1))
    r["tags"] = .list([.string("t\(i % 10)"), .string("u\(i % 7)")])
    r["where"] = .location(Location(latitude: Double(i % 180) - 90, longitude: Double(i % 360) - 180))
    return r
}

func fail(_ s: String) -> Never {
    FileHandle.standardError.write(Data((s + "\n").utf8))
    exit(2)
}

let a = CommandLine.arguments
guard a.count >= 3 else { fail("usage: cirrus-logbench append|reopen|latency|group DIR …") }
let dir = a[2]

do {
    switch a[1] {
    case "append":
        guard a.count >= 5, let n = Int(a[3]) else { fail("append DIR N none|batched|every") }
        let d: Durability =
            a[4] == "none" ? .none : a[4] == "every" ? .everyCommit : .batched(milliseconds: 50, bytes: 8 << 20)
        let store = try RecordStore.open(directory: dir, options: RecordStoreOptions(durability: d))
        var build = 0.0
        var commit = 0.0
        var i = 0
        let t0 = now()
        while i < n {
            let t = now()
            let batch = (i..<min(n, i + 1000)).map { LogOperation.save(small($0)) }
            build += now() - t
            let c = now()
            try store.commit(batch)
            commit += now() - c
            i += batch.count
        }
        let c = now()
        try store.sync()
        commit += now() - c
        let total = now() - t0
        let st = store.stats()
        try store.close()
        print(
            String(
                format:
                    "append %d records (%@): total %.3f s = %.0f rec/s; commit only %.3f s = %.0f rec/s (building "
                    + "records %.3f s)",
                n, a[4], total, Double(n) / total, commit, Double(n) / commit, build))
        print(
            String(
                format: "log %ld bytes, raw encoded records %ld bytes, ratio %.3f, %.1f bytes/record", st.logBytes,
                st.recordPayloadBytes, Double(st.logBytes) / Double(max(1, st.recordPayloadBytes)),
                Double(st.logBytes) / Double(n)))
    case "reopen":
        let t = now()
        let store = try RecordStore.open(directory: dir, options: RecordStoreOptions(readOnly: true))
        let dt = now() - t
        print(
            String(
                format: "reopen: %ld records, %ld frames, %ld bytes in %.3f s", store.snapshot().recordCount,
                store.openReport.frames, store.openReport.bytes, dt))
    case "latency":
        guard a.count >= 4, let n = Int(a[3]) else { fail("latency DIR N") }
        let store = try RecordStore.open(directory: dir, options: RecordStoreOptions(durability: .everyCommit))
        var lat: [Double] = []
        for i in 0..<n {
            let r = small(i)
            let t = now()
            try store.commit([.save(r)])
            lat.append(now() - t)
        }
        lat.sort()
        let mean = lat.reduce(0, +) / Double(n)
        print(
            String(
                format: "everyCommit latency over %d commits: mean %.3f ms, p50 %.3f ms, p99 %.3f ms, max %.3f ms", n,
                mean * 1e3, lat[n / 2] * 1e3, lat[min(n - 1, n * 99 / 100)] * 1e3, lat[n - 1] * 1e3))
    case "group":
        guard a.count >= 5, let threads = Int(a[3]), let n = Int(a[4]) else { fail("group DIR THREADS N") }
        let store = try RecordStore.open(directory: dir, options: RecordStoreOptions(durability: .everyCommit))
        // Real threads (concurrentPerform would run only as many as there are cores).
        let done = DispatchSemaphore(value: 0)
        let t = now()
        for k in 0..<threads {
            Thread.detachNewThread {
                // Throughput only; the correctness of commits is the tests' business.
                for i in 0..<n { _ = try? store.commit([.save(small(k * n + i))]) }
                done.signal()
            }
        }
        for _ in 0..<threads { done.wait() }
        let dt = now() - t
        let st = store.stats()
        print(
            String(
                format:
                    "group commit: %d threads × %d commits in %.3f s = %.0f commits/s; %d groups, %d fsyncs (%.1f "
                    + "commits per fsync)",
                threads, n, dt, Double(threads * n) / dt, st.groups, st.syncs,
                Double(st.commits) / Double(max(1, st.syncs))))
    case "fsync":
        guard a.count >= 4, let n = Int(a[3]) else { fail("fsync DIR N") }
        let fs = POSIXFileSystem()
        try fs.createDirectory(dir)
        let f = try fs.openForAppend(dir + "/fsync-baseline", create: true)
        let bytes = [UInt8](repeating: 7, count: 200)
        var lat: [Double] = []
        for _ in 0..<n {
            let t = now()
            try f.append(bytes)
            try f.sync()
            lat.append(now() - t)
        }
        try f.close()
        lat.sort()
        print(
            String(
                format: "append+fdatasync baseline over %d: mean %.3f ms, p50 %.3f ms, p99 %.3f ms", n,
                lat.reduce(0, +) / Double(n) * 1e3, lat[n / 2] * 1e3, lat[min(n - 1, n * 99 / 100)] * 1e3))
    case "commits":
        guard a.count >= 5, let n = Int(a[3]), let threads = Int(a[4]) else { fail("commits DIR N THREADS") }
        let store = try RecordStore.open(directory: dir, options: RecordStoreOptions(durability: .none))
        let per = n / max(1, threads)
        let records = (0..<per * threads).map { small($0) }
        let t = now()
        DispatchQueue.concurrentPerform(iterations: threads) { k in
            // Throughput only; the correctness of commits is the tests' business.
            for i in 0..<per { _ = try? store.commit([.save(records[k * per + i])]) }
        }
        let dt = now() - t
        let st = store.stats()
        print(
            String(
                format:
                    "%d single-record commits on %d threads (.none): %.3f s = %.0f commits/s, %.2f µs/commit, %d "
                    + "groups",
                per * threads, threads, dt, Double(per * threads) / dt, dt / Double(per * threads) * 1e6, st.groups))
    default:
        fail("unknown mode \(a[1])")
    }
} catch {
    fail("error: \(error)")
}

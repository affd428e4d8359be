// cirrus-logwriter: the child process of the kill test (Tests/RecordLogTests/KillTests.swift,
// scripts/killtest.sh). Writes batches with durability .everyCommit from several threads, and
// prints "try <names>" before and "ack <seq> <names>" after each commit, one write(2) per line,
// so the parent that SIGKILLs it knows what was acknowledged (must survive) and what was
// attempted (must be all or nothing).
//
//   cirrus-logwriter DIR [--threads N] [--seed S] [--compact-every K] [--checkpoint-every K]
//                        [--segment-size BYTES] [--prefix P]
//
// Record names are `P-t<thread>-<i>` (P defaults to `p<pid>`). The kill harness passes a prefix
// unique to its round: pids wrap (pid_max is often 32 768) and a reused pid would make a later
// process write names an earlier one already committed.
//
// With --checkpoint-every, thread 0 also writes checkpoints (data segments), alternating the
// one-step form with the three-step form that lets the other threads commit meanwhile, and
// now and then a bulk load (printed like a batch: "try" before, "ack" after it lands).

import Foundation
import RecordLog
import RecordModel

#if canImport(Glibc)
    import Glibc
#endif

func say(_ line: String) {
    var s = line + "\n"
    s.withUTF8 { p in _ = write(1, p.baseAddress, p.count) }
}

let args = CommandLine.arguments
guard args.count >= 2 else {
    say("usage: cirrus-logwriter DIR [--threads N] [--seed S] [--compact-every K] [--segment-size BYTES]")
    exit(2)
}
func option(_ name: String, _ def: Int) -> Int {
    guard let i = args.firstIndex(of: name), i + 1 < args.count, let v = Int(args[i + 1]) else { return def }
    return v
}
let dir = args[1]
let threads = max(1, option("--threads", 3))
let seed = UInt64(option("--seed", Int(getpid())))
let compactEvery = option("--compact-every", 0)
let checkpointEvery = option("--checkpoint-every", 0)
let segmentSize = option("--segment-size", 64 << 10)
let prefix = args.firstIndex(of: "--prefix").flatMap { $0 + 1 < args.count ? args[$0 + 1] : nil } ?? "p\(getpid())"

let store: RecordStore
do {
    store = try RecordStore.open(
        directory: dir, options: RecordStoreOptions(durability: .everyCommit, segmentSize: segmentSize))
} catch {
    say("error \(error)")
    exit(1)
}
say("open \(store.lastSequence) clean=\(store.openReport.isClean)")

let group = DispatchGroup()
for t in 0..<threads {
    group.enter()
    Thread.detachNewThread {
        var g = SplitMix64(seed: seed &+ UInt64(t))
        func rnd(_ n: Int) -> Int { g.below(n) }
        var i = 0
        while true {
            let count = rnd(4) + 1
            var ops: [LogOperation] = []
            var names: [String] = []
            for _ in 0..<count {
                let name = "\(prefix)-t\(t)-\(i)"
                i += 1
                var r = Record(recordType: "Kill", recordID: RecordID(recordName: name))
                r["n"] = .int64(Int64(i))
                r["pad"] = .string(String(repeating: "x", count: rnd(200)))
                ops.append(.save(r))
                names.append(name)
            }
            let list = names.joined(separator: ",")
            say("try \(list)")
            do {
                let seq = try store.commit(ops)
                say("ack \(seq) \(list)")
                if compactEvery > 0, t == 0, i % compactEvery < count { try store.compact() }
                if checkpointEvery > 0, t == 0, i % checkpointEvery < count {
                    switch rnd(3) {
                    case 0: try store.checkpoint()
                    case 1:
                        let job = try store.beginCheckpoint()
                        let p = try store.writeCheckpoint(job, userState: [])
                        try store.installCheckpoint(p, job: job)
                    default:
                        var bulk: [Record] = []
                        var names: [String] = []
                        for _ in 0..<(rnd(50) + 1) {
                            let name = "\(prefix)-t\(t)-\(i)"
                            i += 1
                            var r = Record(recordType: "Kill", recordID: RecordID(recordName: name))
                            r["n"] = .int64(Int64(i))
                            bulk.append(r)
                            names.append(name)
                        }
                        say("try \(names.joined(separator: ","))")
                        let load = try store.beginBulkLoad(memoryBudget: 4096)
                        try load.add(bulk)
                        try load.finish()
                        say("ack \(store.lastSequence) \(names.joined(separator: ","))")
                    }
                }
            } catch {
                say("error \(error)")
                exit(1)
            }
        }
    }
}
group.wait()

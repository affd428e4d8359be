// Kill test: a real writer process (cirrus-logwriter, .everyCommit, three threads, occasional
// compactions) is SIGKILLed at random moments; after each kill the store is reopened and every
// acknowledged commit must be present, every attempted batch all-or-nothing, and verify clean.
// More rounds: scripts/killtest.sh ROUNDS.

import CirrusTestSupport
import Foundation
import RecordModel
import Testing

@testable import RecordLog

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct KillTests {
    /// The writer binary, next to the test bundle in the build products directory.
    static func writerPath() -> String? {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<3 {
            let p = dir.appendingPathComponent("cirrus-logwriter").path
            if FileManager.default.isExecutableFile(atPath: p) { return p }
            dir = dir.deletingLastPathComponent()
        }
        return ProcessInfo.processInfo.environment["CIRRUS_LOGWRITER"]
    }

    // The limit is for long runs (scripts/killtest.sh 1000 takes about an hour on a loaded
    // 2-core machine); CI's 60 rounds take seconds.
    @Test(.timeLimit(.minutes(240))) func killedWriterLosesNoAcknowledgedCommit() throws {
        guard let writer = Self.writerPath() else {
            Issue.record("cirrus-logwriter not found next to \(CommandLine.arguments[0]); run `swift build` first")
            return
        }
        let seed = TestSeed.next()
        print("KillTests seed \(seed)")
        let rounds = Int(ProcessInfo.processInfo.environment["CIRRUS_KILL_ROUNDS"] ?? "") ?? 60
        let result = try KillHarness.run(writer: writer, rounds: rounds, seed: seed)
        #expect(result.failures.isEmpty, "seed \(seed): \(result.failures.prefix(5))")
        #expect(result.acknowledged > 0)
        print("KillTests: \(rounds) rounds, \(result.acknowledged) acknowledged batches, \(result.liveRecords) records")
    }
}

enum KillHarness {
    struct Outcome {
        var failures: [String] = []
        var acknowledged = 0
        var liveRecords = 0
    }

    static func run(writer: String, rounds: Int, seed: UInt64) throws -> Outcome {
        var g = SeededRandom(seed: seed)
        let dir = NSTemporaryDirectory() + "cirrus-kill-\(getpid())-\(seed % 100000)"
        try? FileManager.default.removeItem(atPath: dir)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var acked: [String] = []
        // Every batch ever tried, with the round that tried it and how many of its records the
        // last check found (so a failure tells a lost landed batch from a resurrected one).
        var attempted: [(names: [String], round: Int, seen: Int?)] = []
        var out = Outcome()
        for round in 0..<rounds {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: writer)
            // Names unique to the round: a pid can come back in a later round (pids wrap), and names
            // made from it would collide with records an earlier round committed.
            var args = [
                dir, "--seed", "\(g.next() % 1_000_000)", "--segment-size", "\(16_384 + g.below(65_536))",
                "--prefix", "r\(round)",
            ]
            if g.chance(0.3) { args += ["--compact-every", "\(10 + g.below(40))"] }
            if g.chance(0.5) { args += ["--checkpoint-every", "\(5 + g.below(30))"] }
            p.arguments = args
            let pipe = Pipe()
            p.standardOutput = pipe
            try p.run()
            // Wait until the writer has opened the store, so every round kills it mid-write.
            var data = Data()
            while !String(decoding: data, as: UTF8.self).contains("\n") {
                let more = pipe.fileHandleForReading.availableData
                if more.isEmpty { break }
                data.append(more)
            }
            usleep(UInt32(1_000 + g.below(40_000)))
            kill(p.processIdentifier, SIGKILL)
            data.append(pipe.fileHandleForReading.readDataToEndOfFile())
            p.waitUntilExit()
            for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
                let parts = line.split(separator: " ")
                if parts.first == "ack", parts.count == 3 {
                    acked += parts[2].split(separator: ",").map(String.init)
                    out.acknowledged += 1
                } else if parts.first == "try", parts.count == 2 {
                    attempted.append((parts[1].split(separator: ",").map(String.init), round, nil))
                } else if parts.first == "error" {
                    out.failures.append("round \(round): writer said \(line)")
                }
            }
            // Reopen (truncates a torn tail), then check.
            let store = try RecordStore.open(directory: dir)
            let live = Set(try store.snapshot().records.keys.map(\.recordName))
            try store.close()
            for name in acked where !live.contains(name) {
                out.failures.append("round \(round): acknowledged \(name) is missing")
            }
            for k in attempted.indices {
                let batch = attempted[k]
                let present = batch.names.filter { live.contains($0) }.count
                if present != 0 && present != batch.names.count {
                    out.failures.append(
                        "round \(round): batch \(batch.names) (tried in round \(batch.round), "
                            + "\(batch.seen.map { "\($0) present at the last check" } ?? "not checked before")) "
                            + "is partly present (\(present)/\(batch.names.count)); "
                            + "missing: \(batch.names.filter { !live.contains($0) })")
                }
                attempted[k].seen = present
            }
            let v = try RecordStore.verify(directory: dir)
            if v.isDamaged { out.failures.append("round \(round): verify after reopen: \(v.open)") }
            out.liveRecords = live.count
            if !out.failures.isEmpty { break }
            if (round + 1) % 100 == 0 {
                print("KillTests: \(round + 1) rounds, \(out.acknowledged) acknowledged batches, \(live.count) records")
            }
        }
        return out
    }
}

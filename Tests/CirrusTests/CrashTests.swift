// Crashes: with `.everyCommit` every acknowledged save survives a crash; with lazy fsyncs a crash
// at any byte of the unsynced tail reopens to a consistent container — records, schema and
// indexes agree (the schema growth is in the same log batch as the records that caused it).
// (Each round drops a random suffix of what was written but not fsynced.)

import CirrusTestSupport
import RecordLog
import RecordModel
import Testing

@testable import CirrusEmbedded
@testable import CirrusFacade

@Suite struct CrashTests {
    func options(_ env: TestEnv, _ d: Durability) -> ContainerOptions {
        var o = env.options()
        o.durability = d
        return o
    }

    @Test func acknowledgedSavesSurviveACrash() async throws {
        let env = TestEnv()
        let c = try Container.open(at: env.dir, options: options(env, .everyCommit))
        let db = c.privateDatabase(for: "_alice")
        for i in 0..<20 { try await db.save(rec("r\(i)", ["n": .int64(Int64(i)), "f\(i % 3)": "x"])) }
        env.fs.crash()
        let again = try Container.open(at: env.dir, options: options(env, .everyCommit))
        let snap = again.privateDatabase(for: "_alice").querySnapshot(recordType: "Note")!
        #expect(snap.rowCount == 20)
        #expect(Set(snap.schema?.fields.keys.map { $0 } ?? []) == ["n", "f0", "f1", "f2"])
        try again.checkInvariants()
    }

    @Test func aCrashAnywhereInTheUnsyncedTailReopensConsistently() async throws {
        let seed = TestSeed.next()
        var rng = SeededRandom(seed: seed)
        var kept: [Int] = []
        for round in 0..<8 {
            let env = TestEnv()
            // Written to the file on every commit, never fsynced by the test's fixed clock.
            let lazy = Durability.batched(milliseconds: 1 << 30, bytes: 1 << 30)
            let c = try Container.open(at: env.dir, options: options(env, lazy))
            let db = c.privateDatabase(for: "_alice")
            try await db.save(rec("base", ["n": 0]))
            try c.sync()
            for i in 0..<15 {
                _ = try await db.modifyRecords(
                    saving: [rec("r\(i)", ["n": .int64(Int64(i)), "g\(i)": .string("v")])], deleting: [])
            }
            env.fs.crash { _, extra in rng.below(extra + 1) }  // keep a random prefix of the unsynced bytes
            let again = try Container.open(at: env.dir, options: options(env, lazy))
            let adb = again.privateDatabase(for: "_alice")
            let snap = adb.querySnapshot(recordType: "Note")!
            #expect(snap.rowCount >= 1 && snap.rowCount <= 16, "seed \(seed) round \(round)")
            kept.append(snap.rowCount)
            for row in snap.allRows() {
                guard let r = snap.record(row) else { continue }
                for f in r.fields.keys { #expect(snap.schema?.fields[f] != nil, "seed \(seed) round \(round): \(f)") }
            }
            try again.checkInvariants()
        }
        #expect(kept.contains { $0 < 16 }, "seed \(seed): no round lost anything: \(kept)")
    }
}

// Readers never see half a commit: while a writer commits batches of ten new records, readers
// keep taking query snapshots, and every snapshot holds a whole number of batches with rows,
// row map and indexes from the same commit. Background checkpoints rebuild the tables over their
// new layers beside commits and catch up with the commits made meanwhile: nothing is lost.

import CirrusTestSupport
import Indexes
import RecordModel
import Testing

@testable import CirrusEmbedded
@testable import CirrusFacade

@Suite struct ConcurrencyTests {
    @Test func snapshotsSeeWholeCommits() async throws {
        let c = try TestEnv().open()
        let db = c.privateDatabase(for: "_alice")
        try await db.save(rec("seed0", ["n": 0, "title": "apple"]))
        _ = try await db.modifyRecords(
            saving: (1..<10).map { rec("seed\($0)", ["n": .int64(Int64($0)), "title": "apple"]) }, deleting: []
        ).get()
        let batches = 40
        async let writer: Void = {
            for b in 1...batches {
                let recs = (0..<10).map { rec("b\(b)-\($0)", ["n": .int64(Int64($0)), "title": "apple pear"]) }
                _ = try await db.modifyRecords(saving: recs, deleting: []).get()
            }
        }()
        let readers = (0..<3).map { _ in
            Task.detached { () -> Int in
                var seen = 0
                for _ in 0..<200 {
                    let snap = db.querySnapshot(recordType: "Note")!
                    let n = snap.rowCount
                    #expect(n % 10 == 0)
                    #expect(snap.allRows().count == n)
                    #expect(snap.indexes.rowCount == n)
                    #expect(snap.indexes.ordered[.user("n")]?.count == n)
                    #expect(snap.indexes.text?.rows(matchingAny: ["apple"]).count == n)
                    seen = max(seen, n)
                    await Task.yield()
                }
                return seen
            }
        }
        try await writer
        for r in readers { _ = await r.value }
        #expect(db.querySnapshot(recordType: "Note")!.rowCount == 10 * (batches + 1))
        try c.checkInvariants()
    }

    /// Saves, updates, type changes, deletions and custom-zone deletions committed while
    /// background checkpoints (every 40 changes) write their layers: the tables each checkpoint
    /// builds over its new base and catches up beside commits end equal to a model, before and
    /// after reopening.
    @Test func backgroundCheckpointsCatchUpWithCommitsMadeMeanwhile() async throws {
        let seed = TestSeed.next()
        var rng = SeededRandom(seed: seed)
        var env = TestEnv()
        env.checkpointThreshold = 40
        let c = try env.open()
        let db = c.privateDatabase(for: "_alice")
        let zones = ["z0", "z1"].map { ZoneID(zoneName: $0) }
        var model: [RecordID: Record] = [:]
        var commits = 0
        while commits < 3_000
            && (commits < 400 || c.embedded!.writeLock.withLock({ c.embedded!.rebaseChanges.besideCommits }) == 0)
        {
            commits += 1
            switch rng.below(40) {
            case 0:
                let z = zones[rng.below(zones.count)]
                if (try? await db.deleteZone(z)) != nil {
                    for id in model.keys where id.zoneID == z { model[id] = nil }
                }
            case 1...4:
                let z = zones[rng.below(zones.count)]
                _ = try await db.save(zone: z)
            default:
                var saving: [Record] = []
                var deleting: [RecordID] = []
                for _ in 0..<(1 + rng.below(4)) {
                    let zone = rng.chance(0.7) ? ZoneID.default : zones[rng.below(zones.count)]
                    let id = RecordID(recordName: "r\(rng.below(300))", zoneID: zone)
                    if saving.contains(where: { $0.recordID == id }) || deleting.contains(id) { continue }
                    if model[id] != nil && rng.chance(0.2) {
                        deleting.append(id)
                    } else {
                        let type = model[id]?.recordType ?? (rng.chance(0.5) ? "Note" : "Task")
                        saving.append(
                            rec(
                                id.recordName, type, zone: zone,
                                ["n": .int64(Int64(rng.below(50))), "title": .string("w\(rng.below(9))")]))
                    }
                }
                let result = try await db.modifyRecords(saving: saving, deleting: deleting, savePolicy: .allKeys)
                for (_, r) in result.saveResults { if case .success(let r) = r { model[r.recordID] = r } }
                for (id, r) in result.deleteResults { if case .success = r { model[id] = nil } }
            }
        }
        let (beside, _) = c.embedded!.writeLock.withLock { c.embedded!.rebaseChanges }
        #expect(beside > 0, "seed \(seed): no checkpoint caught up beside commits in \(commits) commits")
        func check(_ c: Container, _ when: String) async throws {
            let db = c.privateDatabase(for: "_alice")
            let existing = try await db.allZones()
            for type in ["Note", "Task"] {
                for zone in [ZoneID.default] + zones {
                    let want = model.values.filter { $0.recordType == type && $0.recordID.zoneID == zone }
                        .map { "\($0.recordID.recordName) \($0.fields["n"].map { "\($0)" } ?? "")" }.sorted()
                    var got: [String] = []
                    if zone.isDefaultZone || existing.contains(zone) {
                        let q = RecordQuery(
                            recordType: type, predicate: "n >= 0", sortDescriptors: [.field("n", ascending: true)])
                        var (page, cursor) = try await db.records(matching: q, inZoneWith: zone, resultsLimit: 50)
                        got += try page.map { "\($0.0.recordName) \(try $0.1.get().fields["n"].map { "\($0)" } ?? "")" }
                        while let k = cursor {
                            (page, cursor) = try await db.records(continuingMatchFrom: k, resultsLimit: 50)
                            got += try page.map {
                                "\($0.0.recordName) \(try $0.1.get().fields["n"].map { "\($0)" } ?? "")"
                            }
                        }
                    }
                    #expect(got.sorted() == want, "seed \(seed): \(type) in \(zone.zoneName) \(when)")
                }
            }
            try c.checkInvariants()
        }
        c.embedded!.waitForCheckpoints()
        try await check(c, "before reopening")
        try c.close()
        try await check(try env.open(), "after reopening")
    }
}

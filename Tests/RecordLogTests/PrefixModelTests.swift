// Model-based test for the non-fsyncing durabilities (.batched, .none): after a crash the store
// must hold the last explicitly synced state plus a *prefix* of the batches committed after it
// (never a hole, never part of a batch). Seed printed; replay with CIRRUS_SEED=<seed>.

import CirrusIO
import CirrusTestSupport
import Foundation
import RecordModel
import Testing

@testable import RecordLog

@Suite struct PrefixModelTests {
    @Test func crashKeepsASyncedPrefix() throws {
        let seed = TestSeed.next()
        print("PrefixModelTests.crashKeepsASyncedPrefix seed \(seed) (replay: CIRRUS_SEED=\(seed))")
        var g = SeededRandom(seed: seed)
        for round in 0..<6 {
            let fs = InMemoryFileSystem()
            let durability: Durability =
                round % 2 == 0 ? .none : .batched(milliseconds: 1_000_000, bytes: 200 + g.below(3000))
            let segmentSize = [400, 5000, 64 << 20][g.below(3)]
            var store = try openStore(fs, durability: durability, segmentSize: segmentSize)
            var durable = LiveState()
            var since: [[LogOperation]] = []
            let ids = (0..<15).map { RecordID(recordName: "r\($0)") }
            for step in 0..<250 {
                let dice = g.below(100)
                if dice < 75 {
                    let batch: [LogOperation] = (0..<(g.below(4) + 1)).map { _ in
                        let id = ids[g.below(ids.count)]
                        return g.chance(0.8)
                            ? .save(TestRecords.record(&g, id: id, type: "Note")) : .delete(id, recordType: "Note")
                    }
                    try store.commit(batch)
                    since.append(batch)
                } else if dice < 85 {
                    try store.sync()
                    for b in since { for op in b { durable.apply(op) } }
                    since = []
                } else if dice < 95 {
                    fs.crash(keepUnsynced: { _, n in g.chance(0.5) ? g.below(n + 1) : (g.chance(0.5) ? n : 0) })
                    store = try openStore(fs, durability: durability, segmentSize: segmentSize)
                    let got = LiveState(store.snapshot())
                    var candidate = durable
                    var matched = got == candidate ? 0 : -1
                    for (k, b) in since.enumerated() where matched < 0 {
                        for op in b { candidate.apply(op) }
                        if got == candidate { matched = k + 1 }
                    }
                    #expect(
                        matched >= 0,
                        "seed \(seed) round \(round) step \(step): state after crash is no synced prefix (\(since.count) batches since sync)"
                    )
                    #expect(store.openReport.corruptions.isEmpty, "seed \(seed) round \(round) step \(step)")
                    if matched < 0 { return }
                    durable = got
                    since = []
                } else {
                    try store.compact()
                    for b in since { for op in b { durable.apply(op) } }
                    since = []
                }
            }
        }
    }
}

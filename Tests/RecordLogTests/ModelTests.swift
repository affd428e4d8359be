// Model-based test: random saves, deletes, batches, zone changes, reopenings, compactions,
// crashes and injected faults (failed fsync, torn writes, power-off) against an in-memory
// model. Acknowledged commits must survive; a commit that failed may or may not be there, but
// only whole. Seed printed; replay with CIRRUS_SEED=<seed>.

import CirrusIO
import CirrusTestSupport
import Foundation
import RecordModel
import Testing

@testable import RecordLog

@Suite struct ModelTests {
    @Test func randomOperationsAgainstModel() throws {
        let seed = TestSeed.next()
        print("ModelTests.randomOperationsAgainstModel seed \(seed) (replay: CIRRUS_SEED=\(seed))")
        for round in 0..<8 {
            try run(seed: seed &+ UInt64(round), steps: 300)
        }
    }

    func run(seed: UInt64, steps: Int) throws {
        var g = SeededRandom(seed: seed)
        let fs = InMemoryFileSystem()
        let segmentSize = [300, 2000, 64 << 20][g.below(3)]
        var store = try openStore(fs, segmentSize: segmentSize)
        var model = LiveState()
        /// A commit that failed: after a crash its batch may or may not be present.
        var uncertain: [LogOperation]?
        let ids = (0..<25).map {
            RecordID(recordName: "r\($0)", zoneID: $0 % 5 == 0 ? ZoneID(zoneName: "Z") : .default)
        }

        func reopen(crash: Bool) throws {
            if crash {
                fs.crash(keepUnsynced: { _, n in g.chance(0.5) ? g.below(n + 1) : 0 })
            } else {
                try? store.close()
            }
            store = try openStore(fs, segmentSize: segmentSize)
            #expect(store.openReport.corruptions.isEmpty, "seed \(seed): \(store.openReport.corruptions)")
            let got = LiveState(store.snapshot())
            if got != model, let u = uncertain {
                var with = model
                for op in u { with.apply(op) }
                #expect(
                    got == with,
                    "seed \(seed): state after reopen matches neither model\n got \(got)\n want \(model)\n or \(with)")
                model = with
            } else {
                #expect(got == model, "seed \(seed): state after reopen\n got \(got)\n want \(model)")
            }
            uncertain = nil
        }

        for step in 0..<steps {
            let dice = g.below(100)
            if dice < 70 {
                var batch: [LogOperation] = []
                for _ in 0..<(g.chance(0.3) ? g.below(6) + 1 : 1) {
                    let id = ids[g.below(ids.count)]
                    switch g.below(10) {
                    case 0..<7: batch.append(.save(TestRecords.record(&g, id: id, type: "Note")))
                    case 7, 8: batch.append(.delete(id, recordType: "Note"))
                    default:
                        batch.append(
                            g.chance(0.5) ? .createZone(ZoneID(zoneName: "Y")) : .deleteZone(ZoneID(zoneName: "Y")))
                    }
                }
                let fault = g.below(100)
                if fault < 4 { fs.setFailSyncs(true) } else if fault < 8 { fs.tearNextAppend(keeping: g.below(200)) }
                do {
                    try store.commit(batch)
                    for op in batch { model.apply(op) }
                    #expect(LiveState(store.snapshot()) == model, "seed \(seed) step \(step)")
                } catch {
                    #expect(fault < 8, "seed \(seed) step \(step): unexpected \(error)")
                    uncertain = batch
                    try reopen(crash: true)
                }
                fs.setFailSyncs(false)
            } else if dice < 80 {
                try reopen(crash: false)
            } else if dice < 90 {
                try reopen(crash: true)
            } else if dice < 93 {
                try store.compact()
                #expect(LiveState(store.snapshot()) == model, "seed \(seed) step \(step) after compaction")
            } else if dice < 96 {
                try store.checkpoint(userState: [UInt8(step & 0xFF)])
                #expect(store.deltaCount == 0)
                #expect(store.checkpointUserState == [UInt8(step & 0xFF)])
                #expect(LiveState(store.snapshot()) == model, "seed \(seed) step \(step) after checkpoint")
            } else {
                // power off in the middle of a compaction or a checkpoint
                fs.powerOff(afterOperations: g.below(25))
                if g.chance(0.5) { _ = try? store.compact() } else { _ = try? store.checkpoint() }
                try reopen(crash: true)
            }
        }
        try reopen(crash: false)
        let v = try RecordStore.verify(directory: dbDir, fileSystem: fs)
        #expect(!v.isDamaged, "seed \(seed)")
        #expect(v.liveRecords == model.records.count)
    }
}

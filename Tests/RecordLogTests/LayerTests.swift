// Layers of a table's base (BaseRows.swift, docs/storage-format.md "Layers"): random saves,
// deletions, zone deletions and bulk loads with checkpoints, compactions and reopens between
// them, checked against a model after every step; the number of layers stays logarithmic,
// every dead row is accounted for, and an id's lookup finds its one live row or none.

import CirrusIO
import CirrusTestSupport
import Foundation
import RecordModel
import Testing

@testable import RecordLog

@Suite struct LayerTests {
    /// Every table's layers hold consecutive rows, the dead set is what the layers recorded, the
    /// live rows are exactly the snapshot's, and there are few layers.
    func checkLayers(_ snap: StoreSnapshot, seed: UInt64) {
        for (key, t) in snap.base {
            var start = 0
            for l in t.layers {
                #expect(l.start == start, "seed \(seed): \(key) layer starts at \(l.start), expected \(start)")
                start += l.rows.count
                #expect(l.dead.allSatisfy { Int($0) < l.start }, "seed \(seed): \(key) a layer names a newer row dead")
            }
            #expect(t.rows.count == start)
            for (k, l) in t.layers.enumerated() {
                let live = (l.start..<(l.start + l.rows.count)).filter { t.rows.isLive($0) }.count
                #expect(t.rows.liveCount(layer: k) == live, "seed \(seed): \(key) layer \(k)'s live rows")
            }
            #expect(t.layers.count <= RecordStore.maximumLayers, "seed \(seed): \(key) has \(t.layers.count) layers")
            // Each live id appears once among the live rows.
            var seen = Set<RecordID>()
            for i in 0..<t.rows.count where t.rows.isLive(i) {
                if let id = t.rows.recordID(i, owner: key.owner) {
                    #expect(seen.insert(id).inserted, "seed \(seed): \(key) \(id) live twice")
                    #expect(t.rows.row(of: id) == i, "seed \(seed): \(key) row(of: \(id)) is not its live row")
                }
            }
            // An id whose every row is dead (deleted, or saved again under another type) has none,
            // whichever layer the search (largest first) meets it in.
            for i in 0..<t.rows.count where !t.rows.isLive(i) {
                if let id = t.rows.recordID(i, owner: key.owner), !seen.contains(id) {
                    #expect(t.rows.row(of: id) == nil, "seed \(seed): \(key) row(of: \(id)) found only dead rows")
                }
            }
        }
    }

    @Test func randomWorkWithCheckpointsMatchesTheModel() throws {
        let seed = TestSeed.next()
        var g = SeededRandom(seed: seed)
        let fs = InMemoryFileSystem()
        var store = try openStore(fs)
        var model = LiveState()
        let zones = [ZoneID.default, ZoneID(zoneName: "Z"), ZoneID(zoneName: "Y", ownerName: "alice")]
        var maxLayers = 0
        for step in 0..<600 {
            switch g.below(100) {
            case 0..<55:
                let z = zones[g.below(zones.count)]
                if !z.isDefaultZone, !model.zones.contains(z) {
                    try store.commit([.createZone(z)])
                    model.apply(.createZone(z))
                }
                let count = 1 + g.below(6)
                var ops: [LogOperation] = []
                for _ in 0..<count {
                    var r = note("r\(g.below(120))", step, zone: z)
                    if g.chance(0.2) {
                        var t = Record(recordType: "Task", recordID: r.recordID)
                        t["n"] = r["n"]
                        r = t
                    }
                    ops.append(.save(r))
                }
                // One version per id in a batch (the model applies them in order, as the store).
                var seenIDs = Set<RecordID>()
                ops = ops.filter {
                    if case .save(let r) = $0 { return seenIDs.insert(r.recordID).inserted } else { return true }
                }
                try store.commit(ops)
                for op in ops { model.apply(op) }
            case 55..<75:
                let ids = model.records.keys.sorted()
                guard !ids.isEmpty else { continue }
                let id = ids[g.below(ids.count)]
                let op = LogOperation.delete(id, recordType: model.records[id]!.recordType)
                try store.commit([op])
                model.apply(op)
            case 75..<77:
                let z = zones[1 + g.below(2)]
                guard model.zones.contains(z) else { continue }
                try store.commit([.deleteZone(z)])
                model.apply(.deleteZone(z))
            case 77..<92:
                try store.checkpoint()
                let snap = store.snapshot()
                checkLayers(snap, seed: seed)
                maxLayers = max(maxLayers, snap.base.values.map(\.layers.count).max() ?? 0)
            case 92..<95:
                // A bulk load of new and existing ids into the default zone.
                let load = try store.beginBulkLoad(memoryBudget: 2_000)
                var batch: [Record] = []
                var ids = Set<RecordID>()
                for _ in 0..<(1 + g.below(40)) {
                    let r = note("r\(g.below(120))", 10_000 + step)
                    if ids.insert(r.recordID).inserted { batch.append(r) }
                }
                try load.add(batch)
                try load.finish()
                for r in batch { model.apply(.save(r)) }
                checkLayers(store.snapshot(), seed: seed)
            case 95..<97:
                try store.compact()
                let snap = store.snapshot()
                #expect(snap.base.values.allSatisfy { $0.layers.count == 1 && $0.rows.dead.count == 0 }, "seed \(seed)")
            default:
                try store.close()
                store = try openStore(fs)
            }
            let live = LiveState(store.snapshot())
            #expect(live == model, "seed \(seed) step \(step): \(live) vs model \(model)")
            #expect(store.snapshot().recordCount == model.records.count, "seed \(seed) step \(step)")
            if live != model || store.snapshot().recordCount != model.records.count {
                for (id, r) in model.records where live.records[id].map({ !identical($0, r) }) ?? true {
                    Issue.record(
                        "seed \(seed) step \(step): \(id) model \(r) store \(String(describing: live.records[id]))")
                }
                for (id, r) in live.records where model.records[id] == nil {
                    Issue.record("seed \(seed) step \(step): \(id) only in the store: \(r)")
                }
                for (key, t) in store.snapshot().base {
                    Issue.record(
                        "\(key): layers \(t.layers.map { ($0.start, $0.rows.count, $0.dead) }) live \(t.rows.liveCount)"
                    )
                }
                return
            }
        }
        try store.close()
        #expect(LiveState(try openStore(fs).snapshot()) == model, "seed \(seed) after reopen")
        let v = try RecordStore.verify(directory: dbDir, fileSystem: fs)
        #expect(!v.isDamaged, "seed \(seed): \(v.open.corruptions)")
        #expect(maxLayers >= 2, "seed \(seed): the run never had two layers")
    }

    @Test func aDeletedRowInAnOlderLayerStaysDeadAcrossReopen() throws {
        let fs = InMemoryFileSystem()
        let store = try openStore(fs)
        for i in 0..<20 { try store.commit([.save(note("n\(i)", i))]) }
        try store.checkpoint()
        try store.commit([.delete(RecordID(recordName: "n3"), recordType: "Note")])
        try store.commit([.save(note("n4", 99))])
        try store.checkpoint()
        try store.close()
        let again = try openStore(fs)
        let t = try #require(again.snapshot().base[TableKey(owner: ZoneID.defaultOwnerName, recordType: "Note")])
        #expect(t.layers.count == 2)
        #expect(try again.snapshot().record(RecordID(recordName: "n3")) == nil)
        #expect(try again.snapshot().record(RecordID(recordName: "n4"))?.record["n"] == .int64(99))
        #expect(again.snapshot().recordCount == 19)
        #expect(again.snapshot().changes(since: 0)?.changed.count == 19)
    }

    /// Prefetch hints read nothing outside the sections and change nothing: every row (and rows
    /// past either end) hinted at both stages, over two layers, then every row reads the same.
    /// A small table is not worth prefetching; with no threshold it is.
    @Test func prefetchingRowsChangesNothing() throws {
        let fs = InMemoryFileSystem()
        let store = try openStore(fs)
        for i in 0..<30 { try store.commit([.save(note("n\(i)", i))]) }
        try store.checkpoint()
        for i in 26..<32 { try store.commit([.save(note("n\(i)", 100 + i))]) }
        try store.checkpoint()
        let t = try #require(store.snapshot().base[TableKey(owner: ZoneID.defaultOwnerName, recordType: "Note")])
        #expect(t.layers.count == 2)
        #expect(!t.rows.worthPrefetching)
        let rows = BaseRows(layers: t.layers, prefetchAbove: 0)
        #expect(rows.worthPrefetching)
        let before = (0..<rows.count).map { try? rows.record($0) }
        let hinted = ([UInt32.max, UInt32(rows.count), UInt32(rows.count + 1)] + (0..<UInt32(rows.count)).reversed())
        for payload in [false, true] {
            rows.prefetch(hinted[...], payload: payload)
            t.rows.prefetch(hinted[...], payload: payload)
        }
        #expect((0..<rows.count).map { try? rows.record($0) } == before)
        #expect(before.compactMap { $0 }.count == rows.count)
        try store.close()
    }

    @Test func aDamagedDeadSectionFailsTheOpenNamingTheFile() throws {
        let fs = InMemoryFileSystem()
        let store = try openStore(fs)
        for i in 0..<20 { try store.commit([.save(note("n\(i)", i))]) }
        try store.checkpoint()
        try store.commit([.delete(RecordID(recordName: "n3"), recordType: "Note")])
        try store.checkpoint()
        try store.close()
        let m = try Manifest.decode(fs.read(dbDir + "/CURRENT")).get()
        let layer = try #require(m.checkpoint?.tables.values.first?.last)
        let path = dbDir + "/" + DataSegmentFormat.fileName(layer.rows)
        let seg = try DataSegment.open(path, fileSystem: fs)
        let dead = try #require(seg.sections.first { $0.name == "dead" })
        // Name a row of the layer itself (not an older layer's): the section is damaged.
        var bytes = try fs.read(path)
        bytes[dead.offset + 16] = 0xFF
        bytes[dead.offset + 17] = 0xFF
        fs.overwrite(path, with: bytes)
        do {
            _ = try openStore(fs)
            Issue.record("a damaged dead section was accepted")
        } catch let e as LogError {
            #expect("\(e)".contains(path) && "\(e)".contains("dead section"), "\(e)")
        }
        // Repair drops the table's checkpointed rows and says so.
        let repaired = try openStore(fs, repair: true)
        #expect(repaired.openReport.corruptions.contains { $0.reason.contains("dead section") })
    }
}

/// A power cut at every step of a checkpoint that appends a layer, one that merges layers and a
/// compaction: after the crash the store holds exactly the acknowledged state, no unnamed data
/// segment survives the open, and verify finds nothing damaged.
@Suite struct LayerCrashTests {
    func dataFiles(_ fs: InMemoryFileSystem) throws -> Set<UInt64> {
        Set(try fs.list(dbDir).compactMap { DataSegmentFormat.number(fileName: $0) })
    }

    @Test(arguments: ["append", "merge", "compact"])
    func powerCutAtEveryStep(_ kind: String) throws {
        var completed = false
        var ops = 0
        while !completed {
            let fs = InMemoryFileSystem()
            let store = try openStore(fs)
            var model = LiveState()
            func commit(_ op: LogOperation) throws {
                try store.commit([op])
                model.apply(op)
            }
            for i in 0..<40 { try commit(.save(note("n\(i)", i))) }
            try store.checkpoint()
            // A small delta appends a layer; one as large as the base merges with it.
            let changes = kind == "append" ? 5 : 45
            for i in 0..<changes { try commit(.save(note("n\((i * 7) % 60)", 1000 + i))) }
            try commit(.delete(RecordID(recordName: "n3"), recordType: "Note"))
            if kind == "compact" {
                try store.checkpoint()
                try commit(.save(note("late", 1)))
            }
            fs.powerOff(afterOperations: ops)
            do {
                if kind == "compact" { try store.compact() } else { try store.checkpoint() }
                completed = true
            } catch {}
            fs.crash()
            let again = try openStore(fs)
            #expect(LiveState(again.snapshot()) == model, "\(kind): power cut after \(ops) operations")
            #expect(again.snapshot().recordCount == model.records.count, "\(kind): after \(ops)")
            #expect(try dataFiles(fs) == again.cond.withLock { again.dataSegments }, "\(kind): after \(ops)")
            if completed {
                let t = again.snapshot().base[TableKey(owner: ZoneID.defaultOwnerName, recordType: "Note")]
                let want = kind == "append" ? 2 : 1
                #expect(t?.layers.count == want, "\(kind): \(t?.layers.count ?? 0) layers")
            }
            try again.close()
            #expect(!(try RecordStore.verify(directory: dbDir, fileSystem: fs)).isDamaged, "\(kind): after \(ops)")
            ops += 1
            if ops > 500 {
                Issue.record("\(kind): the checkpoint never completed")
                break
            }
        }
    }
}

@Suite struct DeadRowCountTests {
    /// A layer's share of an ascending dead list, by binary search, against a filter.
    @Test func countsInRangesAgreeWithAFilter() {
        let rows: [UInt32] = [0, 3, 4, 9, 10, 11, 64, 4095, 4096, 9000]
        for lo in [0, 1, 4, 10, 12, 4095, 4096, 9001] {
            for hi in [lo, lo + 1, lo + 7, 4096, 10_000] where hi >= lo {
                let want = rows.filter { Int($0) >= lo && Int($0) < hi }.count
                #expect(BaseRows.Parts.countIn(rows, lo..<hi) == want, "\(lo)..<\(hi)")
            }
        }
        #expect(BaseRows.Parts.countIn([], 0..<10) == 0)
    }
}

// Compaction: content is preserved, sequence numbers survive, and a crash at every single
// file-system step of a compaction leaves a store that opens with nothing lost.

import CirrusIO
import CirrusTestSupport
import Foundation
import RecordModel
import Testing

@testable import RecordLog

@Suite struct CompactionTests {
    static let zone = ZoneID(zoneName: "Notes")
    static let schema = Schema(recordTypes: [
        RecordTypeSchema(name: "Note", fields: [FieldSchema(name: "title", type: .string, options: .queryable)])
    ])

    /// Builds the same store every time: saves, overwrites, deletes, a zone, a schema, two segments.
    func build(_ fs: InMemoryFileSystem) throws -> (RecordStore, LiveState) {
        let s = try openStore(fs, segmentSize: 600)
        var model = LiveState()
        var g = SeededRandom(seed: 42)
        let ops: [[LogOperation]] = [
            [.setSchema(Self.schema), .createZone(Self.zone)],
            (0..<10).map { .save(note("n\($0)", $0)) },
            [.save(note("z1", zone: Self.zone)), .save(TestRecords.record(&g, id: RecordID(recordName: "rnd")))],
            [.delete(RecordID(recordName: "n3"), recordType: "Note"), .save(note("n4", 44))],
            [.createZone(ZoneID(zoneName: "Gone")), .save(note("g1", zone: ZoneID(zoneName: "Gone")))],
            [.deleteZone(ZoneID(zoneName: "Gone"))],
        ]
        for batch in ops {
            try s.commit(batch)
            for op in batch { model.apply(op) }
        }
        return (s, model)
    }

    @Test func compactionKeepsLiveStateAndSequences() throws {
        let fs = InMemoryFileSystem()
        let (s, model) = try build(fs)
        let before = s.snapshot()
        let report = try s.compact()
        #expect(report.segmentsBefore.count >= 2)
        #expect(LiveState(s.snapshot()) == model)
        try s.save(note("after"))
        try s.close()
        let r = try openStore(fs)
        #expect(r.openReport.isClean)
        var expected = model
        expected.apply(.save(note("after")))
        #expect(LiveState(r.snapshot()) == expected)
        for (id, v) in try before.records { #expect(try r.record(id)?.sequence == v.sequence) }
        #expect(r.snapshot().horizon == before.lastSequence)
        #expect(r.lastSequence == before.lastSequence + 1)
        let left = try fs.list(dbDir).compactMap { Manifest.segmentNumber(fileName: $0) }
        #expect(left.allSatisfy { $0 >= report.segmentAfter }, "old segments removed: \(left)")
    }

    @Test func crashDuringCompactionAtEveryStep() throws {
        var step = 0
        var finished = false
        while !finished {
            for keepTorn in [false, true] {
                let fs = InMemoryFileSystem()
                let (s, model) = try build(fs)
                let start = fs.mutationCount
                fs.powerOff(afterOperations: step)
                do {
                    try s.compact()
                    finished = true
                } catch {}
                let used = fs.mutationCount - start
                fs.crash(keepUnsynced: { _, n in keepTorn ? n / 2 : 0 })
                let r = try openStore(fs)
                #expect(
                    LiveState(r.snapshot()) == model,
                    "crash after \(step) compaction steps (used \(used), torn \(keepTorn))")
                #expect(r.openReport.corruptions.isEmpty, "step \(step): \(r.openReport.corruptions)")
                try r.save(note("post"))
                try r.close()
                let again = try openStore(fs)
                #expect(again.openReport.isClean, "step \(step)")
                #expect(try again.snapshot().records.count == model.records.count + 1)
            }
            step += 1
            #expect(step < 100)
            if step >= 100 { break }
        }
        print("crashDuringCompactionAtEveryStep: \(step) steps")
    }
}

@Suite struct SnapshotTests {
    @Test func snapshotIsStableWhileTheStoreMovesOn() throws {
        let s = try openStore(InMemoryFileSystem(), durability: .none)
        for i in 0..<2000 { try s.save(note("n\(i)", i)) }
        let snap = s.snapshot()
        try s.save(note("n0", -1))
        try s.commit([.delete(RecordID(recordName: "n1"), recordType: "Note")])
        #expect(snap.recordCount == 2000)
        #expect(try snap.record(RecordID(recordName: "n0"))?.record["n"] == .int64(0))
        #expect(try s.record(RecordID(recordName: "n0"))?.record["n"] == .int64(-1))
        #expect(s.snapshot().recordCount == 1999)
        var seen = 0
        try snap.forEachRecord { _ in seen += 1 }
        #expect(seen == 2000)
        #expect(try snap.records(ofType: "Note").map(\.sequence) == Array(1...2000))
        #expect(snap.sequence(of: RecordID(recordName: "n5")) == 6)
        #expect(snap.countsByType == ["Note": 2000])
    }
}

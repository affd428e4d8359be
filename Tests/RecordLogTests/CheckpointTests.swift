// Checkpoints and data segments: round trips through reopen, the delta over the base, and one
// named test per damage case (docs/storage-format.md).

import CirrusIO
import CirrusTestSupport
import Foundation
import RecordModel
import Testing

@testable import RecordLog

@Suite struct CheckpointTests {
    func dataFiles(_ fs: InMemoryFileSystem) throws -> [String] {
        try fs.list(dbDir).filter { DataSegmentFormat.number(fileName: $0) != nil }.sorted()
    }

    /// A store with 40 notes in two zones, checkpointed, then changed in the delta.
    func populated(_ fs: InMemoryFileSystem) throws -> (RecordStore, LiveState) {
        let store = try openStore(fs)
        var model = LiveState()
        let z = ZoneID(zoneName: "Z")
        for op in [LogOperation.createZone(z)]
            + (0..<40).map({ LogOperation.save(note("n\($0)", $0, zone: $0 % 3 == 0 ? z : .default)) })
        {
            try store.commit([op])
            model.apply(op)
        }
        let report = try store.checkpoint(userState: [1, 2, 3])
        #expect(report.rowsWritten == 40)
        #expect(store.deltaCount == 0)
        for op in [
            LogOperation.save(note("n1", 100)), .delete(RecordID(recordName: "n2"), recordType: "Note"),
            .save(note("new", 7)),
        ] {
            try store.commit([op])
            model.apply(op)
        }
        #expect(LiveState(store.snapshot()) == model)
        return (store, model)
    }

    @Test func reopenSeesBasePlusDelta() throws {
        let fs = InMemoryFileSystem()
        let (store, model) = try populated(fs)
        try store.close()
        let again = try openStore(fs)
        #expect(LiveState(again.snapshot()) == model)
        #expect(again.checkpointUserState == [1, 2, 3])
        #expect(again.snapshot().checkpointSequence > 0)
        // Only the tail after the checkpoint was replayed: 3 frames.
        #expect(again.openReport.frames == 3)
        #expect(try again.snapshot().record(RecordID(recordName: "n1"))?.record["n"] == .int64(100))
        #expect(try again.snapshot().record(RecordID(recordName: "n2")) == nil)
    }

    @Test func smallDeltaBecomesASecondLayerAndCompactionMergesThem() throws {
        let fs = InMemoryFileSystem()
        let (store, model) = try populated(fs)
        let before = try dataFiles(fs)  // the table's one layer + the state segment
        let report = try store.checkpoint()
        // The delta (n1 saved again, "new"; n2 deleted) is a layer of its own: the 40-row layer
        // is not rewritten, only the state segment is replaced.
        #expect(report.rowsWritten == 2)
        let after = try dataFiles(fs)
        #expect(after.count == before.count + 1)
        #expect(Set(after).intersection(before).count == 1)
        let table = try #require(store.snapshot().base[TableKey(owner: ZoneID.defaultOwnerName, recordType: "Note")])
        #expect(table.layers.map(\.rows.count) == [40, 2])
        #expect(table.rows.dead.count == 2)  // the old n1 and the deleted n2
        #expect(table.layers[1].dead.count == 2)
        #expect(try fs.list(dbDir).filter { Manifest.segmentNumber(fileName: $0) != nil }.count == 1)
        #expect(LiveState(store.snapshot()) == model)
        try store.close()
        let again = try openStore(fs)
        #expect(LiveState(again.snapshot()) == model)
        #expect(again.snapshot().recordCount == model.records.count)
        // Compaction leaves one layer with nothing dead.
        try again.compact()
        let one = try #require(again.snapshot().base[TableKey(owner: ZoneID.defaultOwnerName, recordType: "Note")])
        #expect(one.layers.count == 1)
        #expect(one.rows.dead.count == 0 && one.rows.count == model.records.count)
        #expect(LiveState(again.snapshot()) == model)
    }

    @Test func changesSinceATokenSpanTheCheckpoint() throws {
        let fs = InMemoryFileSystem()
        let store = try openStore(fs)
        let z = ZoneID(zoneName: "Z")
        try store.commit([.createZone(z), .save(note("a", 1, zone: z)), .save(note("b", 2, zone: z))])
        let token = store.lastSequence
        try store.commit([.save(note("a", 3, zone: z))])
        try store.commit([.delete(RecordID(recordName: "b", zoneID: z), recordType: "Note")])
        try store.checkpoint()
        try store.close()
        let again = try openStore(fs)
        let changes = try #require(again.snapshot().changes(since: token, in: z))
        #expect(changes.changed.map(\.recordName) == ["a"])
        #expect(changes.deleted.map(\.recordID.recordName) == ["b"])
    }

    @Test func zoneDeletionRemovesBaseRows() throws {
        let fs = InMemoryFileSystem()
        let (store, _) = try populated(fs)
        try store.commit([.deleteZone(ZoneID(zoneName: "Z"))])
        #expect(try store.snapshot().records.keys.allSatisfy { $0.zoneID.zoneName != "Z" })
        try store.checkpoint()
        try store.close()
        #expect(try openStore(fs).snapshot().records.keys.allSatisfy { $0.zoneID.zoneName != "Z" })
    }

    @Test func crashBeforeManifestSwitchKeepsOldCheckpoint() throws {
        for ops in stride(from: 0, to: 30, by: 2) {
            let fs = InMemoryFileSystem()
            let (store, model) = try populated(fs)
            fs.powerOff(afterOperations: ops)
            _ = try? store.checkpoint()
            fs.crash()
            let again = try openStore(fs)
            #expect(LiveState(again.snapshot()) == model, "crash after \(ops) operations")
            #expect(again.openReport.corruptions.isEmpty)
            // No data segment the manifest does not name survives a writable open.
            let named = again.cond.withLock { again.dataSegments }
            #expect(Set(try dataFiles(fs).compactMap { DataSegmentFormat.number(fileName: $0) }) == named)
        }
    }

    // MARK: damage, one test per case

    func tableSegmentPath(_ fs: InMemoryFileSystem) throws -> String {
        let m = try Manifest.decode(fs.read(dbDir + "/CURRENT")).get()
        let n = try #require(m.checkpoint?.tables.values.first?.first?.rows)
        return dbDir + "/" + DataSegmentFormat.fileName(n)
    }

    func expectBadSegment(_ fs: InMemoryFileSystem, _ path: String, _ fragment: String) {
        do {
            _ = try openStore(fs)
            Issue.record("open should fail")
        } catch {
            guard let e = error as? LogError, case .badSegment(let p, _, let reason) = e else {
                Issue.record("wrong error \(error)"); return
            }
            #expect(p == path)
            #expect(reason.contains(fragment), "\(reason)")
        }
    }

    @Test func tornSegmentWriteIsDetected() throws {
        let fs = InMemoryFileSystem()
        let (store, _) = try populated(fs)
        try store.close()
        let path = try tableSegmentPath(fs)
        fs.damageTruncate(path, to: try fs.size(path) - 10)
        expectBadSegment(fs, path, "footer")
    }

    @Test func truncatedFooterIsDetected() throws {
        let fs = InMemoryFileSystem()
        let (store, _) = try populated(fs)
        try store.close()
        let path = try tableSegmentPath(fs)
        fs.damageTruncate(path, to: 20)
        expectBadSegment(fs, path, "footer")
    }

    @Test func badBlockCRCIsFoundByVerifyBlocks() throws {
        let fs = InMemoryFileSystem()
        let (store, _) = try populated(fs)
        try store.close()
        let path = try tableSegmentPath(fs)
        fs.flipBit(path, atByte: 200)
        let seg = try DataSegment.open(path, fileSystem: fs)
        let damaged = seg.verifyBlocks()
        #expect(damaged.count == 1)
        #expect(damaged.first?.section == "rows")
        #expect(damaged.first?.offset == 16)
    }

    @Test func damagedDirectoryIsDetected() throws {
        let fs = InMemoryFileSystem()
        let (store, _) = try populated(fs)
        try store.close()
        let path = try tableSegmentPath(fs)
        let size = try fs.size(path)
        fs.flipBit(path, atByte: size - DataSegmentFormat.footerSize - 3)
        expectBadSegment(fs, path, "directory checksum")
    }

    @Test func missingSegmentFileIsDetectedAndRepairSalvages() throws {
        let fs = InMemoryFileSystem()
        let (store, model) = try populated(fs)
        try store.close()
        let path = try tableSegmentPath(fs)
        try fs.remove(path)
        expectBadSegment(fs, path, "missing")
        let repaired = try openStore(fs, repair: true)
        #expect(repaired.openReport.corruptions.count == 1)
        #expect(repaired.openReport.corruptions[0].reason.contains("Note"))
        // The delta (replayed from the log) survives; the checkpoint's rows of the table are lost.
        let got = LiveState(repaired.snapshot())
        #expect(got.records.count < model.records.count)
        #expect(got.records[RecordID(recordName: "new")] != nil)
    }

    @Test func tornManifestKeepsThePreviousOne() throws {
        let fs = InMemoryFileSystem()
        let (store, model) = try populated(fs)
        try store.close()
        // A manifest being written (CURRENT.tmp, torn) is ignored and removed.
        try fs.openForAppend(dbDir + "/CURRENT.tmp", create: true).append(Array("cirrus-log 2\nsegm".utf8))
        let again = try openStore(fs)
        #expect(LiveState(again.snapshot()) == model)
        #expect(!fs.exists(dbDir + "/CURRENT.tmp"))
    }

    @Test func damagedManifestIsReported() throws {
        let fs = InMemoryFileSystem()
        let (store, _) = try populated(fs)
        try store.close()
        fs.flipBit(dbDir + "/CURRENT", atByte: 30)
        #expect(throws: LogError.self) { _ = try openStore(fs) }
    }

    @Test func staleManifestNamingRemovedSegmentFails() throws {
        let fs = InMemoryFileSystem()
        let (store, _) = try populated(fs)
        let old = try fs.read(dbDir + "/CURRENT")
        try store.checkpoint()
        try store.close()
        fs.overwrite(dbDir + "/CURRENT", with: old)  // a manifest from before the last checkpoint
        #expect(throws: LogError.self) { _ = try openStore(fs) }
    }

    // MARK: checkpoints beside commits

    @Test func checkpointInThreeStepsKeepsCommitsMadeWhileWriting() throws {
        let fs = InMemoryFileSystem()
        let (store, model0) = try populated(fs)
        var model = model0
        let job = try store.beginCheckpoint()
        // Commits while the segments are written: updates of base rows, deletions, new rows,
        // and a zone deletion.
        let ops: [LogOperation] = [
            .save(note("n4", 400)), .delete(RecordID(recordName: "n5"), recordType: "Note"), .save(note("late", 1)),
            .deleteZone(ZoneID(zoneName: "Z")), .save(note("n1", 101)),
        ]
        for op in ops { try store.commit([op]); model.apply(op) }
        let prepared = try store.writeCheckpoint(job, userState: [4])
        for op in [LogOperation.save(note("later", 2)), .delete(RecordID(recordName: "new"), recordType: "Note")] {
            try store.commit([op])
            model.apply(op)
        }
        try store.installCheckpoint(prepared, job: job)
        #expect(LiveState(store.snapshot()) == model)
        #expect(store.snapshot().checkpointSequence == job.sequence)
        #expect(store.deltaCount > 0)
        try store.close()
        let again = try openStore(fs)
        #expect(LiveState(again.snapshot()) == model)
        // A crash at any point of a three-step checkpoint loses nothing acknowledged.
        for cut in stride(from: 0, to: 40, by: 4) {
            let fs2 = InMemoryFileSystem()
            let (s2, m0) = try populated(fs2)
            var m = m0
            let j = try s2.beginCheckpoint()
            try s2.commit([.save(note("mid", 5))])
            m.apply(.save(note("mid", 5)))
            fs2.powerOff(afterOperations: cut)
            if let p = try? s2.writeCheckpoint(j, userState: []) { _ = try? s2.installCheckpoint(p, job: j) }
            fs2.crash()
            #expect(LiveState(try openStore(fs2).snapshot()) == m, "crash after \(cut) operations")
        }
    }

    /// A checkpoint cancelled while it writes (`isCancelled` answering true at its first or
    /// second question) throws, leaves no file behind and changes nothing the store reads; the
    /// next checkpoint is whole and a reopen sees every change.
    @Test func aCancelledCheckpointLeavesNoFilesAndLosesNothing() throws {
        let fs = InMemoryFileSystem()
        let (store, model0) = try populated(fs)
        var model = model0
        for i in 0..<50 {
            let op = LogOperation.save(note("c\(i)", i))
            try store.commit([op])
            model.apply(op)
        }
        let before = try dataFiles(fs)
        for stopAt in 1...2 {
            let job = try store.beginCheckpoint()
            let asked = Asked()
            #expect(throws: LogError.self) {
                _ = try store.writeCheckpoint(job, userState: [], isCancelled: { asked.next() >= stopAt })
            }
            #expect(asked.count >= stopAt)
            #expect(try dataFiles(fs) == before, "cancelled at question \(stopAt)")
            #expect(LiveState(store.snapshot()) == model)
        }
        try store.checkpoint()
        #expect(store.deltaCount == 0)
        try store.close()
        #expect(LiveState(try openStore(fs).snapshot()) == model)
    }

    /// An index build that fails after its first sections were written (a full disk, a row
    /// that does not decode) leaves no index file behind; one that succeeds writes each section
    /// as it is handed over, in that order, then the `dead/` sections.
    @Test func anIndexBuildFailingMidwayLeavesNoFile() throws {
        struct Full: Error {}
        let fs = InMemoryFileSystem()
        let (store, model) = try populated(fs)
        let before = try dataFiles(fs)
        let job = try store.beginCheckpoint()
        #expect(throws: (any Error).self) {
            _ = try store.writeCheckpoint(
                job, userState: [],
                sections: { _, add in
                    try add("first", [1, 2, 3])
                    throw Full()
                })
        }
        #expect(try dataFiles(fs) == before)
        #expect(LiveState(store.snapshot()) == model)
        try store.checkpoint(sections: { rows, add in
            try add("b:\(rows.key.recordType)", [9])
            try add("a", [])
        })
        let key = TableKey(owner: ZoneID.defaultOwnerName, recordType: "Note")
        let layer = try #require(store.snapshot().base[key]?.layers.last)
        // The new layer makes n1's and n2's old rows dead: their sections follow, same order.
        #expect(layer.indexes?.sections.map(\.name) == ["b:Note", "a", "dead/b:Note", "dead/a"])
        #expect(layer.indexes?.section("b:Note").map(Array.init) == [9])
        #expect(LiveState(store.snapshot()) == model)
    }

    // MARK: bulk load

    @Test func bulkLoadMergesWithBaseAndDeltaAndSpillsRuns() throws {
        let fs = InMemoryFileSystem()
        let (store, model0) = try populated(fs)
        var model = model0
        let bulk = try store.beginBulkLoad(memoryBudget: 2_000)  // tiny: several sorted runs
        var batch: [Record] = []
        for i in 0..<300 {
            let r = note(i % 7 == 0 ? "n\(i % 40)" : "bulk\(i)", 1_000 + i)  // some replace existing records
            batch.append(r)
            model.records[r.recordID] = r
            if batch.count == 50 {
                try bulk.add(batch)
                batch = []
            }
        }
        try bulk.add(batch)
        #expect(try dataFiles(fs).count > 2, "runs were spilled")
        try bulk.finish(userState: [9])
        #expect(LiveState(store.snapshot()) == model)
        try store.commit([.save(note("after", 1))])
        model.records[RecordID(recordName: "after")] = note("after", 1)
        try store.close()
        let again = try openStore(fs)
        #expect(LiveState(again.snapshot()) == model)
        #expect(again.checkpointUserState == [9])
    }

    /// A bulk load into a table with nothing else to merge (one run, no layers, no delta) lands
    /// its run as the table's layer, uncopied; with a delta to merge, or several runs, the layer
    /// is written anew. The records are the same either way, before and after a reopen.
    @Test func aWholeRunBecomesTheLayerUncopied() throws {
        for (withDelta, budget) in [(false, 1 << 20), (true, 1 << 20), (false, 2_000)] {
            let fs = InMemoryFileSystem()
            let store = try openStore(fs)
            var model = LiveState()
            if withDelta {
                try store.commit([.save(note("early", 1))])
                model.records[RecordID(recordName: "early")] = note("early", 1)
            }
            let bulk = try store.beginBulkLoad(memoryBudget: budget)
            let records = (0..<120).map { note("b\(($0 * 37) % 120)", $0) }
            for r in records { model.records[r.recordID] = r }
            try bulk.add(records)
            try bulk.finish()
            let key = TableKey(owner: records[0].recordID.zoneID.ownerName, recordType: records[0].recordType)
            let runs = bulk.runs[key] ?? []
            let layer = try #require(store.snapshot().base[key]?.layers.last)
            let adopted = runs.count == 1 && runs[0].segment.file.path == layer.rows.segment.file.path
            #expect(adopted == (!withDelta && budget > 2_000), "delta \(withDelta), budget \(budget)")
            #expect(layer.rows.hash != nil)
            #expect(LiveState(store.snapshot()) == model)
            try store.close()
            #expect(LiveState(try openStore(fs).snapshot()) == model)
        }
    }

    @Test func cancelledOrCrashedBulkLoadLeavesTheStoreAsItWas() throws {
        let fs = InMemoryFileSystem()
        let (store, model) = try populated(fs)
        let bulk = try store.beginBulkLoad(memoryBudget: 1_000)
        try bulk.add((0..<100).map { note("x\($0)", $0) })
        bulk.cancel()
        #expect(LiveState(store.snapshot()) == model)
        try store.commit([.save(note("y", 1))])  // the writer token was released
        var m2 = model
        m2.records[RecordID(recordName: "y")] = note("y", 1)
        for ops in stride(from: 0, to: 40, by: 3) {
            let fs2 = InMemoryFileSystem()
            let (s2, base) = try populated(fs2)
            let b2 = try s2.beginBulkLoad(memoryBudget: 1_000)
            try b2.add((0..<100).map { note("x\($0)", $0) })
            fs2.powerOff(afterOperations: ops)
            _ = try? b2.finish()
            fs2.crash()
            let again = try openStore(fs2)
            let got = LiveState(again.snapshot())
            var all = base
            for i in 0..<100 { all.records[RecordID(recordName: "x\(i)")] = note("x\(i)", i) }
            #expect(got == base || got == all, "crash after \(ops) operations: neither before nor after")
        }
        #expect(LiveState(store.snapshot()) == m2)
    }

    @Test func manifestVersion3RoundTrips() throws {
        let m = Manifest(
            segments: [7, 8],
            checkpoint: ManifestCheckpoint(
                sequence: 120, horizon: 100, state: 3,
                tables: [
                    TableKey(owner: "__defaultOwner__", recordType: "Place"): [
                        TableFiles(rows: 4, indexes: 9), TableFiles(rows: 11, indexes: 12),
                        TableFiles(rows: 13, indexes: nil),
                    ],
                    TableKey(owner: "a b", recordType: "Nöte"): [TableFiles(rows: 5, indexes: nil)],
                ]))
        #expect(try Manifest.decode(m.encoded).get() == m)
        let text = String(decoding: m.encoded, as: UTF8.self)
        #expect(text.hasPrefix("cirrus-log 3\n"))
        #expect(text.contains(" 4:9 11:12 13:-\n"))
        #expect(String(decoding: Manifest(segments: [1]).encoded, as: UTF8.self).hasPrefix("cirrus-log 1\n"))
    }

    @Test func manifestVersion2IsStillRead() throws {
        // What the previous version wrote: one layer per table, `table ROWS INDEXES OWNER TYPE`.
        let body =
            "cirrus-log 2\nsegments 7 8\ncheckpoint 120 horizon 100\nstate 3\n"
            + "table 4 9 \(Manifest.hex("__defaultOwner__")) \(Manifest.hex("Place"))\n"
            + "table 5 - \(Manifest.hex("alice")) \(Manifest.hex("Note"))\n"
        let bytes = Array((body + "crc " + String(CRC32C.checksum(Array(body.utf8)), radix: 16) + "\n").utf8)
        let m = try Manifest.decode(bytes).get()
        #expect(
            m.checkpoint?.tables == [
                TableKey(owner: "__defaultOwner__", recordType: "Place"): [TableFiles(rows: 4, indexes: 9)],
                TableKey(owner: "alice", recordType: "Note"): [TableFiles(rows: 5, indexes: nil)],
            ])
    }

    @Test func manifestWithTooManyLayersOrATableTwiceIsDamaged() throws {
        func manifest(_ lines: [String]) -> [UInt8] {
            let body = "cirrus-log 3\nsegments 7\ncheckpoint 120 horizon 100\nstate 3\n" + lines.joined()
            return Array((body + "crc " + String(CRC32C.checksum(Array(body.utf8)), radix: 16) + "\n").utf8)
        }
        let t = "table \(Manifest.hex("o")) \(Manifest.hex("T"))"
        let many = t + (0..<(Manifest.maximumLayers + 1)).map { " \(10 + $0):-" }.joined() + "\n"
        #expect(throws: CodecError.self) { try Manifest.decode(manifest([many])).get() }
        #expect(throws: CodecError.self) { try Manifest.decode(manifest([t + " 4:-\n", t + " 5:-\n"])).get() }
        #expect(throws: CodecError.self) { try Manifest.decode(manifest([t + " 4-5\n"])).get() }
        #expect((try? Manifest.decode(manifest([t + " 4:- 5:6\n"])).get()) != nil)
    }
}

@Suite struct SegmentVerifyTests {
    @Test func verifyReportsADamagedBlockWithFileAndOffset() throws {
        let fs = InMemoryFileSystem()
        let store = try openStore(fs)
        for i in 0..<30 { try store.commit([.save(note("n\(i)", i))]) }
        try store.checkpoint()
        try store.close()
        #expect(!(try RecordStore.verify(directory: dbDir, fileSystem: fs)).isDamaged)
        let m = try Manifest.decode(fs.read(dbDir + "/CURRENT")).get()
        let path =
            dbDir + "/" + DataSegmentFormat.fileName(try #require(m.checkpoint?.tables.values.first?.first?.rows))
        fs.flipBit(path, atByte: 100)
        let v = try RecordStore.verify(directory: dbDir, fileSystem: fs)
        #expect(v.isDamaged)
        #expect(
            v.open.corruptions.contains {
                $0.reason.contains(path) && $0.reason.contains("fails its CRC") && $0.offset == 16
            })
    }
}

/// Counts a checkpoint's cancellation questions (asked on the thread that writes it).
final class Asked: @unchecked Sendable {
    // @unchecked: read and written only by the test's own thread (the checkpoint is synchronous).
    private(set) var count = 0
    func next() -> Int {
        count += 1
        return count
    }
}

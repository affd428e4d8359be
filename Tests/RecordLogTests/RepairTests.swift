// `RecordStore.repair`: every record whose bytes check out survives unchanged, what is lost is
// named, nothing is deleted (the replaced files are kept under damaged/), and the result verifies.
// One named test per kind of damage (docs/storage-format.md, "Damage and repair").

import CirrusIO
import CirrusTestSupport
import Foundation
import RecordModel
import Testing

@testable import RecordLog

@Suite struct RepairTests {
    static let zone = ZoneID(zoneName: "Z")

    /// A note with a body long enough that 1 500 of them span several 64 KiB blocks.
    func wide(_ i: Int) -> Record {
        var r = note(String(format: "n%05d", i), i, zone: i % 5 == 0 ? Self.zone : .default)
        r["body"] = .string(String(repeating: "lorem ipsum \(i) ", count: 12))
        return r
    }

    /// A store whose 1 500 notes were checkpointed (one layer), then changed in the log: n00001
    /// saved again, n00002 deleted, n99999 added. Returns the model of its live records.
    func populated(_ fs: InMemoryFileSystem, changes: Bool = true) throws -> LiveState {
        let store = try openStore(fs)
        var model = LiveState()
        let ops = [LogOperation.createZone(Self.zone)] + (0..<1500).map { LogOperation.save(wide($0)) }
        for chunk in stride(from: 0, to: ops.count, by: 100) {
            let batch = Array(ops[chunk..<min(chunk + 100, ops.count)])
            try store.commit(batch)
            batch.forEach { model.apply($0) }
        }
        try store.checkpoint()
        if changes {
            for op in [
                LogOperation.save(wide(1)), .delete(RecordID(recordName: "n00002"), recordType: "Note"),
                .save(wide(99_999)),
            ] {
                try store.commit([op])
                model.apply(op)
            }
        }
        try store.close()
        return model
    }

    func manifest(_ fs: InMemoryFileSystem) throws -> Manifest {
        try Manifest.decode(try #require(fs.contents(dbDir + "/CURRENT"))).get()
    }

    func rowsSegment(_ fs: InMemoryFileSystem) throws -> String {
        let cp = try #require(try manifest(fs).checkpoint)
        let files = try #require(cp.tables[TableKey(owner: ZoneID.defaultOwnerName, recordType: "Note")]?.last)
        return dbDir + "/" + DataSegmentFormat.fileName(files.rows)
    }

    /// Checks the repaired store against the model: every record not reported lost is there,
    /// byte for byte; every lost one is named (unless `named` is false: lost past a cut); the store verifies; the replaced files are kept.
    func checkRepaired(
        _ fs: InMemoryFileSystem, _ model: LiveState, _ report: RepairReport, maxLost: Int, named: Bool = true,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let store = try openStore(fs, readOnly: true)
        let live = LiveState(store.snapshot())
        let lostNames = Set(report.losses.flatMap(\.names))
        for (id, r) in model.records {
            if let got = live.records[id] {
                #expect(identical(got, r), "\(id.recordName) changed", sourceLocation: sourceLocation)
            } else if named {
                #expect(
                    lostNames.contains(RowSalvage.name(id)), "\(id.recordName) lost unnamed",
                    sourceLocation: sourceLocation)
            }
        }
        #expect(
            live.records.keys.allSatisfy { model.records[$0] != nil }, "a record came back",
            sourceLocation: sourceLocation)
        let missing = model.records.count - live.records.count
        #expect(missing <= maxLost, "\(missing) lost", sourceLocation: sourceLocation)
        #expect(
            report.recordsLost == missing || report.losses.contains { $0.records == nil },
            sourceLocation: sourceLocation)
        #expect(report.records == live.records.count, sourceLocation: sourceLocation)
        #expect(
            try RecordStore.verify(directory: dbDir, fileSystem: fs).isDamaged == false, sourceLocation: sourceLocation)
        let keptIn = try #require(report.keptIn, sourceLocation: sourceLocation)
        for name in report.kept {
            #expect(fs.contents(keptIn + "/" + name) != nil, "\(name) not kept", sourceLocation: sourceLocation)
        }
        #expect(fs.contents(keptIn + "/REPORT.txt") != nil, sourceLocation: sourceLocation)
        // A writable open and a commit work afterwards.
        let w = try openStore(fs)
        try w.commit([.save(note("after-repair"))])
        try w.close()
    }

    @Test func aSoundStoreIsLeftAlone() throws {
        let fs = InMemoryFileSystem()
        _ = try populated(fs)
        let before = try fs.list(dbDir).map { fs.contents(dbDir + "/" + $0) }
        let report = try RecordStore.repair(directory: dbDir, fileSystem: fs)
        #expect(report.wasClean && !report.lostSomething && report.keptIn == nil)
        #expect(try fs.list(dbDir).map { fs.contents(dbDir + "/" + $0) } == before)
    }

    /// The other rows of the damaged block match their own CRCs (`rowsums`): only the row the
    /// flipped byte lies in is lost, and it is named.
    @Test func aFlippedByteInARowsPayloadLosesOnlyThatRowAndNamesIt() throws {
        let fs = InMemoryFileSystem()
        let model = try populated(fs)
        let path = try rowsSegment(fs)
        let rows = try #require(try DataSegment.open(path, fileSystem: fs).sections.first { $0.name == "rows" })
        fs.flipBit(path, atByte: rows.offset + 100_000)
        let report = try RecordStore.repair(directory: dbDir, fileSystem: fs)
        #expect(report.lostSomething)
        let lost = report.losses.filter { $0.what == .records }
        #expect(lost.count == 1 && lost.allSatisfy { $0.file == path && $0.names.count == 1 })
        try checkRepaired(fs, model, report, maxLost: 1)
        #expect(report.recordsLost == 1)
    }

    /// A flipped byte in a rows segment's block CRC table damages no data: the store opens and
    /// reads every record (the table is not read at open); `verify` names the table and its
    /// offset; repair keeps every record (the rows prove themselves by their own CRCs) and
    /// writes the segment out again, after which it verifies clean.
    @Test func aDamagedBlockCRCTableLosesNothingAndVerifyNamesIt() throws {
        let fs = InMemoryFileSystem()
        let model = try populated(fs)
        let path = try rowsSegment(fs)
        let seg = try DataSegment.open(path, fileSystem: fs)
        #expect(seg.crcTableIsSound && seg.verifyBlocks().isEmpty)
        fs.flipBit(path, atByte: seg.crcTableOffset + 5)
        let damaged = try DataSegment.open(path, fileSystem: fs)
        #expect(!damaged.crcTableIsSound)
        #expect(damaged.verifyBlocks().map(\.section) == [DataSegment.blockCRCTable])
        #expect(damaged.verifyBlocks().map(\.offset) == [seg.crcTableOffset])
        #expect(damaged.sections.allSatisfy { damaged.blockStatus($0) == nil })

        let store = try openStore(fs, readOnly: true)
        #expect(LiveState(store.snapshot()) == model)
        try store.close()
        let v = try RecordStore.verify(directory: dbDir, fileSystem: fs)
        #expect(v.isDamaged)
        #expect(v.open.corruptions.contains { $0.reason.contains(path) && $0.reason.contains("block CRC table") })

        let report = try RecordStore.repair(directory: dbDir, fileSystem: fs)
        try checkRepaired(fs, model, report, maxLost: 0)
        #expect(report.recordsLost == 0)
        #expect(!(try RecordStore.verify(directory: dbDir, fileSystem: fs)).isDamaged)
    }

    /// Without row CRCs (a segment written before `rowsums`, or one whose section is damaged)
    /// the block is the unit: its rows are lost and named.
    @Test func withoutRowSumsAFlippedByteLosesThatBlocksRecords() throws {
        let fs = InMemoryFileSystem()
        let model = try populated(fs)
        let path = try rowsSegment(fs)
        let seg = try DataSegment.open(path, fileSystem: fs)
        let rows = try #require(seg.sections.first { $0.name == "rows" })
        let sums = try #require(seg.sections.first { $0.name == "rowsums" })
        fs.flipBit(path, atByte: rows.offset + 100_000)
        fs.flipBit(path, atByte: sums.offset + 1)  // the section's magic: not used
        let report = try RecordStore.repair(directory: dbDir, fileSystem: fs)
        let lost = report.losses.filter { $0.what == .records }
        #expect(!lost.isEmpty && lost.allSatisfy { $0.file == path && !$0.names.isEmpty })
        // A 64 KiB block of ~280-byte payloads: a few hundred records of 1 500 at most.
        #expect(report.recordsLost > 100)
        try checkRepaired(fs, model, report, maxLost: 300)
    }

    @Test func aFlippedByteInTheEntriesIsReadBackFromThePayloads() throws {
        let fs = InMemoryFileSystem()
        let model = try populated(fs)
        let path = try rowsSegment(fs)
        let seg = try DataSegment.open(path, fileSystem: fs)
        let section = try #require(seg.sections.first { $0.name == "rows" })
        let rows = try RowSection(segment: seg)
        fs.flipBit(path, atByte: section.offset + rows.entriesAt + 32 * 700 + 3)
        let report = try RecordStore.repair(directory: dbDir, fileSystem: fs)
        #expect(report.recovered > 0)
        // Every payload lies in a sound block, so every record is read back.
        try checkRepaired(fs, model, report, maxLost: 0)
    }

    @Test func aRowsSegmentMissingItsTailIsSalvagedWhole() throws {
        let fs = InMemoryFileSystem()
        let model = try populated(fs)
        let path = try rowsSegment(fs)
        fs.damageTruncate(path, to: try fs.size(path) - 7)
        let report = try RecordStore.repair(directory: dbDir, fileSystem: fs)
        // The footer, directory and CRC table are gone, the rows section whole: nothing lost.
        #expect(report.recordsLost == 0)
        try checkRepaired(fs, model, report, maxLost: 0)
    }

    /// Where a one-layer table's only rows segment is cut (nothing in the log rewrites the table).
    enum Cut: CaseIterable, Sendable { case footer, sectionsAfterRows, entries, payloads }

    /// A table in one layer with nothing dead and no change in the log, its rows segment cut:
    /// what the salvage reads is written out again (never left under its damaged file, which
    /// would not verify), and a cut inside the rows section still reads back every payload
    /// before it.
    @Test(arguments: Cut.allCases)
    func aOneLayerTableWhoseRowsSegmentIsCutIsRewritten(_ cut: Cut) throws {
        let fs = InMemoryFileSystem()
        let model = try populated(fs, changes: false)
        let path = try rowsSegment(fs)
        let seg = try DataSegment.open(path, fileSystem: fs)
        let section = try #require(seg.sections.first { $0.name == "rows" })
        let rows = try RowSection(segment: seg)
        let at =
            switch cut {
            case .footer: try fs.size(path) - 7
            case .sectionsAfterRows: section.offset + section.length + 10
            case .entries: section.offset + rows.entriesAt + 32 * 700 + 5
            case .payloads: section.offset + 200_000
            }
        fs.damageTruncate(path, to: at)
        let report = try RecordStore.repair(directory: dbDir, fileSystem: fs)
        switch cut {
        case .footer, .sectionsAfterRows, .entries:
            try checkRepaired(fs, model, report, maxLost: 0)
            #expect(report.records == model.records.count)
        case .payloads:
            // The payloads before the cut come back; the rest are lost and counted, not named
            // (their keys were past the cut).
            try checkRepaired(fs, model, report, maxLost: 1_500, named: false)
            #expect(report.records > 500 && report.records < model.records.count)
            #expect(report.losses.contains { $0.file == path && $0.what == .records })
        }
    }

    /// The newer of two layers cut inside its rows section: its payloads before the cut are read
    /// back, and its dead section (which older rows it replaced or deleted) is lost with the
    /// file's end — said as a loss of deletions, since those older versions come back.
    @Test func aNewerLayerCutInsideItsRowsReportsItsDeletionsLost() throws {
        let fs = InMemoryFileSystem()
        let model = try populated(fs)
        let store = try openStore(fs)
        try store.checkpoint()
        try store.close()
        let cp = try #require(try manifest(fs).checkpoint)
        let layers = try #require(cp.tables[TableKey(owner: ZoneID.defaultOwnerName, recordType: "Note")])
        #expect(layers.count == 2)
        let path = dbDir + "/" + DataSegmentFormat.fileName(try #require(layers.last).rows)
        let rows = try #require(try DataSegment.open(path, fileSystem: fs).sections.first { $0.name == "rows" })
        fs.damageTruncate(path, to: rows.offset + RowSection.headerSize + 5)
        let report = try RecordStore.repair(directory: dbDir, fileSystem: fs)
        #expect(report.losses.contains { $0.file == path && $0.what == .deletions })
        #expect(report.losses.contains { $0.file == path && $0.what == .records })
        #expect(report.changeTokensExpired)
        #expect(try RecordStore.verify(directory: dbDir, fileSystem: fs).isDamaged == false)
        let live = LiveState(try openStore(fs, readOnly: true).snapshot())
        // The older layer's records as they were checkpointed, the deleted n00002 back among them.
        for i in 0..<1500 {
            let r = wide(i)
            #expect(live.records[r.recordID].map { identical($0, r) } == true, "\(r.recordID.recordName)")
        }
        #expect(live.records.count == 1500 && model.records.count == 1500)
    }

    /// A flipped byte in a section the reads do not need (the row hash): no record is lost, and
    /// the table is written out again so that the result verifies.
    @Test func aFlippedByteInTheRowHashRewritesTheLayerLosingNothing() throws {
        let fs = InMemoryFileSystem()
        let model = try populated(fs, changes: false)
        let path = try rowsSegment(fs)
        let hash = try #require(try DataSegment.open(path, fileSystem: fs).sections.first { $0.name == "rowhash" })
        fs.flipBit(path, atByte: hash.offset + 40)
        let report = try RecordStore.repair(directory: dbDir, fileSystem: fs)
        try checkRepaired(fs, model, report, maxLost: 0)
        #expect(report.records == model.records.count)
    }

    @Test func aZeroFilledPageInARowsSegmentLosesOnlyItsRows() throws {
        let fs = InMemoryFileSystem()
        let model = try populated(fs)
        let path = try rowsSegment(fs)
        let bytes = try #require(fs.contents(path))
        var damaged = bytes
        for i in 200_000..<(200_000 + 4096) { damaged[i] = 0 }
        fs.overwrite(path, with: damaged)
        let report = try RecordStore.repair(directory: dbDir, fileSystem: fs)
        #expect(report.lostSomething)
        // 4 KiB of ~280-byte payloads: the rows it touches, not the whole 64 KiB block.
        try checkRepaired(fs, model, report, maxLost: 20)
    }

    @Test func aDamagedManifestIsRebuiltFromTheStateSegment() throws {
        let fs = InMemoryFileSystem()
        let model = try populated(fs)
        fs.flipBit(dbDir + "/CURRENT", atByte: 20)
        let report = try RecordStore.repair(directory: dbDir, fileSystem: fs)
        #expect(report.manifestRebuilt && !report.lostSomething && !report.changeTokensExpired)
        try checkRepaired(fs, model, report, maxLost: 0)
    }

    @Test func aMissingManifestIsRebuiltFromTheStateSegment() throws {
        let fs = InMemoryFileSystem()
        let model = try populated(fs)
        try fs.remove(dbDir + "/CURRENT")
        let report = try RecordStore.repair(directory: dbDir, fileSystem: fs)
        #expect(report.manifestRebuilt && !report.lostSomething)
        try checkRepaired(fs, model, report, maxLost: 0)
    }

    /// Without a manifest and with a state segment that does not list its tables (as segments
    /// written before the `tables` section), every rows segment is adopted as a layer of the
    /// table its first row names. A rows segment that cannot be read is not skipped unnoticed:
    /// it is reported as records lost, naming the file.
    @Test(arguments: [false, true])
    func rowsSegmentsAreAdoptedWithoutAManifestAndAnUnreadableOneIsReported(rowsDamaged: Bool) throws {
        let fs = InMemoryFileSystem()
        let model = try populated(fs)
        let rows = try rowsSegment(fs)
        let state = dbDir + "/" + DataSegmentFormat.fileName(try #require(try manifest(fs).checkpoint?.state))
        // The state segment again, without its `tables` section.
        let old = try DataSegment.open(state, fileSystem: fs)
        let kept = try old.sections.filter { $0.name != "tables" }.map {
            ($0.name, Array(try #require(old.section($0.name))))
        }
        var w = try DataSegmentWriter(fileSystem: fs, path: state)
        for (name, bytes) in kept { try w.addSection(name, bytes) }
        try w.finish()
        try fs.remove(dbDir + "/CURRENT")
        if rowsDamaged { fs.damageTruncate(rows, to: 100) }
        let report = try RecordStore.repair(directory: dbDir, fileSystem: fs)
        #expect(report.manifestRebuilt)
        #expect(report.losses.contains { $0.what == .deletions })
        let rowsLoss = report.losses.first { $0.file == rows && $0.what == .records }
        #expect((rowsLoss != nil) == rowsDamaged, "\(report.losses.map(\.reason))")
        let live = LiveState(try openStore(fs, readOnly: true).snapshot())
        if rowsDamaged {
            #expect(live.records.count < model.records.count)
            #expect(rowsLoss?.reason.contains("does not open") == true)
        } else {
            #expect(live == model)
        }
    }

    @Test func aDamagedLogFrameLosesItsEntriesAndExpiresChangeTokens() throws {
        let fs = InMemoryFileSystem()
        let model = try populated(fs)
        let log = try #require(try manifest(fs).segments.last)
        let bytes = try #require(fs.contents(segPath(log)))
        let frames = frameOffsets(bytes)
        #expect(frames.count == 3)
        fs.flipBit(segPath(log), atByte: frames[1] + 30)  // the deletion of n00002
        let report = try RecordStore.repair(directory: dbDir, fileSystem: fs)
        #expect(report.changeTokensExpired)
        #expect(report.losses.contains { $0.what == .logEntries && $0.file == segPath(log) })
        // The deletion is lost: n00002 is back in its checkpointed version; everything else as saved.
        let store = try openStore(fs, readOnly: true)
        var expected = model
        expected.records[RecordID(recordName: "n00002")] = wide(2)
        #expect(LiveState(store.snapshot()) == expected)
        #expect(try RecordStore.verify(directory: dbDir, fileSystem: fs).isDamaged == false)
    }

    @Test func aDamagedStateSegmentRebuildsZonesAndExpiresChangeTokens() throws {
        let fs = InMemoryFileSystem()
        let model = try populated(fs)
        let state = try #require(try manifest(fs).checkpoint?.state)
        let path = dbDir + "/" + DataSegmentFormat.fileName(state)
        fs.damageTruncate(path, to: 30)
        let report = try RecordStore.repair(directory: dbDir, fileSystem: fs)
        #expect(report.changeTokensExpired && report.losses.contains { $0.what == .state })
        try checkRepaired(fs, model, report, maxLost: 0)
        let store = try openStore(fs, readOnly: true)
        #expect(Set(store.snapshot().zones.keys) == model.zones)
    }

    @Test func aStoreInUseIsRefused() throws {
        let fs = InMemoryFileSystem()
        _ = try populated(fs)
        fs.flipBit(dbDir + "/CURRENT", atByte: 20)
        let store = try openStore(fs, repair: true)
        #expect {
            _ = try RecordStore.repair(directory: dbDir, fileSystem: fs)
        } throws: { error in
            if case .locked = error as? LogError { return true }
            return false
        }
        try store.close()
    }
}

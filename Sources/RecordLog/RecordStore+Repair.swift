// RecordStore+Repair: `repair` — salvage every record whose bytes check out into a verified
// store, say exactly what was lost, and delete nothing (docs/storage-format.md, "Damage and
// repair"; SQLite's `.recover`, LevelDB's `RepairDB`).
//
// Steps, holding the directory's LOCK (a store another process has open is refused):
//  1. If `verify` finds the store sound, stop: nothing to do.
//  2. The manifest: `CURRENT`, or — missing or damaged — rebuilt from the newest state segment
//     whose `tables` section lists its checkpoint's tables (stores written before that section
//     existed: every rows segment adopted as a layer of the table its rows name).
//  3. The checkpoint's state (zones, schema, tombstones); when its segment is damaged those are
//     lost: zones are rebuilt from the records, and change tokens expire.
//  4. Every layer's rows through `RowSalvage`: damaged rows leave their layer (marked dead),
//     whole records read out of them go to a run; sound index segments are kept, damaged ones
//     dropped (the façade rebuilds them).
//  5. The log, replayed frame by frame past damage (SegmentScanner in repair mode); lost entries
//     make change tokens expire.
//  6. One checkpoint of it all (`writeCheckpoint`): damaged tables (a row lost or recovered, or
//     any block of a layer's file failing its CRC) merged into one fresh layer,
//     sound tables kept as they are, a fresh state segment, then a fresh, empty log segment.
//  7. Every file the new manifest does not name gets a second name in `DIR/damaged/<stamp>/`
//     (with REPORT.txt), then the new `CURRENT` is written, then the old names are removed: a
//     crash anywhere leaves either the old store or the new one, and the old files are never lost.
//  8. `verify` of the result.

import CirrusIO
import RecordModel

extension RecordStore {
    /// Repairs the store in `directory` (see the file header): salvages every record whose bytes
    /// check out, writes them into a verified store in place, keeps every file it replaces in
    /// `directory/damaged/<stamp>/`, and reports what was lost. `sections` gives, for the salvaged
    /// schema, the index sections to write beside the rewritten rows (the façade's indexes; nil:
    /// none, the façade builds them at its next open). Throws `.locked` when another writable store
    /// has the directory, `.notAStore` when it is not a store.
    public static func repair(
        directory: String, fileSystem fs: any FileSystem = POSIXFileSystem(), clock: any LogClock = SystemClock(),
        sections: (Schema?) -> SectionEncoder? = { _ in nil }
    ) throws(LogError) -> RepairReport {
        do {
            guard fs.exists(directory) else {
                throw LogError.notAStore(directory: directory, reason: "no such directory")
            }
            let lock = try lockDirectory(directory, fs: fs)
            defer { lock.unlock() }
            var r = Repair(directory: directory, fs: fs, clock: clock)
            return try r.run(sections: sections)
        } catch {
            throw LogError.wrap(error)
        }
    }
}

/// One repair under way (see the file header).
struct Repair {
    let directory: String
    let fs: any FileSystem
    let clock: any LogClock
    var report: RepairReport
    var snap = StoreSnapshot()
    /// Records read out of damaged rows, per table, waiting to become runs.
    var recovered: [TableKey: [RecoveredRow]] = [:]
    /// The checkpoint sequence the salvaged base covers (recovered rows without one get it).
    var checkpointSequence: UInt64 = 0
    /// Whether the store lost entries a change feed would have to report.
    var lossy = false
    /// Files this repair wrote that no manifest will name (runs), removed at the end.
    var scratch: [String] = []
    /// Tables with a layer read out of a damaged file: written out again whole.
    var remake: Set<TableKey> = []

    init(directory: String, fs: any FileSystem, clock: any LogClock) {
        self.directory = directory
        self.fs = fs
        self.clock = clock
        report = RepairReport(directory: directory)
    }

    func path(_ name: String) -> String { joinPath(directory, name) }

    mutating func run(sections: (Schema?) -> SectionEncoder?) throws -> RepairReport {
        if let v = try? RecordStore.verify(directory: directory, fileSystem: fs), !v.isDamaged {
            report.wasClean = true
            return report
        }
        let names = try fs.list(directory)
        let logFiles = names.compactMap { Manifest.segmentNumber(fileName: $0) }.sorted()
        let dataFiles = names.compactMap { DataSegmentFormat.number(fileName: $0) }.sorted()
        guard names.contains(Manifest.fileName) || !logFiles.isEmpty || !dataFiles.isEmpty else {
            throw LogError.notAStore(directory: directory, reason: "no CURRENT, log segment or data segment")
        }
        let manifest = try readManifest(logFiles: logFiles, dataFiles: dataFiles)
        if let cp = manifest.checkpoint {
            salvageState(cp)
            salvageTables(cp)
        }
        try replayLog(manifest.segments)
        forgiveLossesTheLogReplaced()
        if snap.schema == nil && snap.recordCount > 0 {
            report.rebuilt.append("the schema is lost; the container rebuilds it from the records")
        }
        let runs = try writeRuns()
        let store = RecordStore(
            directory: directory, fileSystem: fs, options: RecordStoreOptions(clock: clock), report: OpenReport(),
            state: snap, segments: [], segmentSize: 0, file: nil)
        store.dataSegments = Set(dataFiles)
        let prepared = try store.writeCheckpoint(
            snap, userState: [], raiseHorizon: lossy, rewrite: [], merge: Set(snap.base.keys).union(runs.keys),
            remake: remake, sections: sections(snap.schema), runs: runs)
        report.changeTokensExpired = lossy
        let logNumber = (logFiles.max() ?? 0) + 1
        try store.createSegment(logNumber, flags: 0).close()
        let next = Manifest(
            segments: [logNumber],
            checkpoint: ManifestCheckpoint(
                sequence: prepared.sequence, horizon: prepared.horizon, state: prepared.state, tables: prepared.tables))
        report.records = prepared.newTables.reduce(0) { $0 + $1.rows.liveCount }
        try switchTo(next, names: names)
        for p in scratch where fs.exists(p) { try fs.remove(p) }
        try fs.syncDirectory(directory)
        let v = try RecordStore.verify(directory: directory, fileSystem: fs)
        guard !v.isDamaged else {
            throw LogError.failed(
                reason: "the repaired store does not verify: "
                    + ((v.open.corruptions.map(\.description) + v.open.warnings.map(\.description)).first ?? "damaged"))
        }
        report.records = v.liveRecords
        return report
    }

    // MARK: manifest

    /// `CURRENT`, or one rebuilt from the segments present.
    mutating func readManifest(logFiles: [UInt64], dataFiles: [UInt64]) throws -> Manifest {
        let current = path(Manifest.fileName)
        let why: String
        if fs.exists(current) {
            switch Manifest.decode(try fs.read(current)) {
            case .success(let m): return m
            case .failure(let e): why = "CURRENT is damaged (\(e.message))"
            }
        } else {
            why = "CURRENT is missing"
        }
        report.manifestRebuilt = true
        // The newest checkpoint whose state segment lists its tables.
        var best: (ManifestCheckpoint, UInt64)?
        for n in dataFiles {
            guard let seg = try? DataSegment.open(path(DataSegmentFormat.fileName(n)), fileSystem: fs),
                let t = seg.section("tables"), let cp = Manifest.decodeCheckpoint(Array(t)), cp.state == n
            else { continue }
            if best.map({ cp.sequence > $0.0.sequence }) ?? true { best = (cp, n) }
        }
        var checkpoint = best?.0
        if checkpoint == nil, !dataFiles.isEmpty { checkpoint = adoptRowsSegments(dataFiles) }
        let after = checkpoint?.sequence ?? 0
        // The log segments holding entries after the checkpoint.
        let logs = try logFiles.filter { n in
            let b = try fs.read(path(Manifest.segmentFileName(n)))
            return b.withUnsafeBytes { Frame.resync(in: $0, from: 0, minimumSequence: after + 1) != nil }
        }
        report.rebuilt.append(
            "\(why): rebuilt from "
                + (best.map { "the state segment \(DataSegmentFormat.fileName($0.1)) (checkpoint at \($0.0.sequence))" }
                    ?? (checkpoint == nil ? "the log segments" : "every rows segment present"))
                + " and \(logs.count) log segments")
        return Manifest(segments: logs, checkpoint: checkpoint)
    }

    /// A checkpoint for a store whose state segments predate the `tables` section: every rows
    /// segment becomes a layer of the table its first row names, in file order; which rows they
    /// had made dead is not known (`.deletions` loss), and the newest version of a record wins.
    mutating func adoptRowsSegments(_ dataFiles: [UInt64]) -> ManifestCheckpoint? {
        var tables: [TableKey: [TableFiles]] = [:]
        var state: (UInt64, UInt64)?
        // A segment whose table cannot be told is not adopted: its records are reported lost.
        func unplaced(_ file: String, _ reason: String) {
            report.losses.append(
                RepairLoss(
                    file: file, reason: reason + "; the manifest is lost, so the segment was not adopted",
                    what: .records))
            lossy = true
        }
        for n in dataFiles {
            let file = path(DataSegmentFormat.fileName(n))
            let seg: DataSegment
            do { seg = try DataSegment.open(file, fileSystem: fs) } catch {
                unplaced(file, "the segment does not open: \(error)")
                continue
            }
            if let b = seg.section("state"), let st = try? CheckpointState.decode(b) {
                if state.map({ st.lastSequence > $0.0 }) ?? true { state = (st.lastSequence, n) }
            }
            // A segment without rows holds indexes or state: nothing of it is adopted.
            guard seg.section("rows") != nil else { continue }
            // Its table is named by its first row.
            do {
                let rows = try RowSection(segment: seg)
                guard rows.count > 0 else { continue }
                guard let p = rows.payload(0) else {
                    throw CodecError("the first row lies outside the section", offset: 0)
                }
                let rec = try RecordCodec.decode(p)
                tables[TableKey(owner: rec.recordID.zoneID.ownerName, recordType: rec.recordType), default: []]
                    .append(TableFiles(rows: n, indexes: nil))
            } catch {
                unplaced(file, "the rows segment's first row, which names its table, does not read: \(error)")
            }
        }
        guard let state else { return nil }
        report.losses.append(
            RepairLoss(
                file: directory,
                reason: "the manifest is lost and the segments do not list their tables: every rows "
                    + "segment was adopted, so records deleted or replaced before the last checkpoint may come back",
                records: 0, what: .deletions))
        lossy = true
        return ManifestCheckpoint(sequence: state.0, horizon: 0, state: state.1, tables: tables)
    }

    // MARK: checkpoint

    /// The checkpoint's zones, schema and tombstones; lost (and change tokens expire) when its
    /// state segment is damaged.
    mutating func salvageState(_ cp: ManifestCheckpoint) {
        checkpointSequence = cp.sequence
        snap.lastSequence = cp.sequence
        snap.horizon = cp.horizon
        let file = path(DataSegmentFormat.fileName(cp.state))
        switch RecordStore.loadState(cp.state, directory: directory, fs: fs) {
        case .success(let (st, _)):
            snap.zones = st.zones
            snap.schema = st.schema
            snap.schemaSequence = st.schemaSequence
            snap.tombstoneMap = st.tombstones
            snap.horizon = st.horizon
        case .failure(let e):
            var at = 0
            if case .badSegment(_, let o, _) = e { at = o }
            report.losses.append(
                RepairLoss(
                    file: file, offset: at,
                    reason: "\(e): the checkpoint's zones, schema and change history are lost "
                        + "(zones holding records are rebuilt from them)", what: .state))
            lossy = true
        }
    }

    /// Every table's layers through `RowSalvage` into the snapshot's base.
    mutating func salvageTables(_ cp: ManifestCheckpoint) {
        var tables: [BaseTable] = []
        for (key, list) in cp.tables.sorted(by: { $0.key < $1.key }) {
            var layers: [BaseLayer] = []
            var start = 0
            // Once a layer's rows are lost whole, later layers' dead rows past its start cannot
            // be placed (rows are numbered across layers): they are dropped, and said so.
            var unplaceableFrom: Int?
            for files in list {
                let rowsPath = path(DataSegmentFormat.fileName(files.rows))
                let s = RowSalvage(path: rowsPath, fileSystem: fs, start: start)
                report.losses += s.losses
                recovered[key, default: []] += s.recovered
                report.recovered += s.recovered.count
                if !s.sound { remake.insert(key) }
                if s.dead == nil { lossy = true }  // deletions lost: change feeds cannot say them
                guard let rows = s.rows else {
                    if unplaceableFrom == nil { unplaceableFrom = start }
                    continue
                }
                var dead = s.dead ?? []
                if let cut = unplaceableFrom { dead = dead.filter { Int($0) < cut } }
                dead += s.dropped.map { UInt32(start + $0) }
                let indexes = soundIndexSegment(files.indexes)
                layers.append(
                    BaseLayer(
                        files: TableFiles(rows: files.rows, indexes: indexes?.0), rows: rows, indexes: indexes?.1,
                        start: start, dead: dead))
                start += rows.count
            }
            if layers.contains(where: { $0.rows.count > 0 }) {
                tables.append(BaseTable(key: key, rows: BaseRows(layers: layers)))
            }
        }
        snap.setBase(tables, sequence: cp.sequence)
        // Zones lost with the state: every zone that holds records.
        if snap.zones.isEmpty {
            for t in tables {
                for l in t.layers {
                    for i in 0..<l.rows.count where t.rows.isLive(l.start + i) {
                        guard let id = l.rows.recordID(i, owner: t.key.owner), !id.zoneID.isDefaultZone else {
                            continue
                        }
                        if snap.zones[id.zoneID] == nil { snap.zones[id.zoneID] = cp.sequence }
                    }
                }
            }
        }
    }

    /// The index segment `n` when it opens and every block checks; else nil (rebuilt by the
    /// façade, and reported).
    mutating func soundIndexSegment(_ n: UInt64?) -> (UInt64, DataSegment)? {
        guard let n else { return nil }
        let p = path(DataSegmentFormat.fileName(n))
        do {
            let seg = try DataSegment.open(p, fileSystem: fs)
            if let bad = seg.verifyBlocks().first {
                report.rebuilt.append(
                    "\(p): block at byte \(bad.offset) of section '\(bad.section)' fails its CRC; "
                        + "its indexes are rebuilt from the rows")
                return nil
            }
            return (n, seg)
        } catch {
            report.rebuilt.append("\(error); its indexes are rebuilt from the rows")
            return nil
        }
    }

    // MARK: log

    /// Replays every log segment past damage; what is lost is named where its frames still say.
    mutating func replayLog(_ segments: [UInt64]) throws {
        var state = snap
        for (i, n) in segments.enumerated() {
            let p = path(Manifest.segmentFileName(n))
            guard fs.exists(p) else {
                report.losses.append(
                    RepairLoss(
                        file: p, reason: "the manifest names this log segment but it is missing", what: .logEntries))
                lossy = true
                continue
            }
            let bytes = try fs.read(p)
            var dropped: [String] = []
            let scan = try bytes.withUnsafeBytes { (b) throws(LogError) in
                try SegmentScanner.scan(
                    b, number: n, isLast: i == segments.count - 1, repair: true, minimumSequence: state.lastSequence,
                    apply: { batch in for (seq, e) in batch { state.apply(e, sequence: seq) } },
                    dropped: { batch in dropped += batch.compactMap { Self.name(of: $0.1) } })
            }
            for c in scan.corruptions {
                report.losses.append(
                    RepairLoss(
                        file: p, offset: c.offset, length: c.length, reason: c.reason, records: c.framesDropped,
                        names: dropped, what: .logEntries))
                dropped = []
                lossy = true
            }
            if let t = scan.tornTail, t.framesDropped > 0 || t.bytesDropped > 0 {
                // A torn tail is an unfinished batch: never acknowledged, so nothing is lost.
                report.rebuilt.append("\(p): a torn tail of \(t.bytesDropped) bytes (an unfinished write) is dropped")
            }
        }
        snap = state
    }

    /// Checkpointed rows that were lost but that the log saved again or deleted after the
    /// checkpoint are no loss: their current state is in the log.
    mutating func forgiveLossesTheLogReplaced() {
        var replaced = Set<String>()
        for id in snap.live.keys { replaced.insert(RowSalvage.name(id)) }
        for id in snap.deletions.keys { replaced.insert(RowSalvage.name(id)) }
        guard !replaced.isEmpty else { return }
        report.losses = report.losses.compactMap { loss in
            guard loss.what == .records, !loss.names.isEmpty else { return loss }
            var l = loss
            l.names = loss.names.filter { !replaced.contains($0) }
            if let n = l.records { l.records = n - (loss.names.count - l.names.count) }
            return l.names.isEmpty && l.records == 0 ? nil : l
        }
    }

    static func name(of change: StateChange) -> String? {
        switch change {
        case .record(let id, _, _): RowSalvage.name(id)
        case .other(.deletion(let id, _)): "deletion of " + RowSalvage.name(id)
        case .other(.recordVersion(let r)): RowSalvage.name(r.recordID)
        default: nil
        }
    }

    // MARK: runs and the switch

    /// The recovered records that are still the newest version of their id, as one run per table.
    mutating func writeRuns() throws -> [TableKey: [RowSection]] {
        var runs: [TableKey: [RowSection]] = [:]
        for (key, list) in recovered.sorted(by: { $0.key < $1.key }) {
            var byID: [RecordID: RecoveredRow] = [:]
            for r in list {
                var r = r
                r.id.zoneID.ownerName = key.owner
                if let old = byID[r.id], (old.sequence ?? 0) >= (r.sequence ?? 0) { continue }
                byID[r.id] = r
            }
            let keep = byID.values.filter { r in
                // The log has a newer word on it: saved again, deleted, or its zone deleted.
                if snap.live[r.id] != nil || snap.removed[r.id] != nil || snap.deletions[r.id] != nil { return false }
                if snap.zoneDeletions[r.id.zoneID] != nil { return false }
                guard let (t, row) = snap.baseLocation(r.id), t.rows.isLive(row) else { return true }
                return (r.sequence ?? 0) > t.rows.sequence(row)
            }.sorted { RowKeyOrder.less($0.id, $1.id) }
            guard !keep.isEmpty else { continue }
            let n = nextScratchNumber()
            let p = path(DataSegmentFormat.fileName(n))
            scratch.append(p)
            var w = try DataSegmentWriter(fileSystem: fs, path: p)
            var rw = try RowSectionWriter(into: &w)
            for r in keep {
                try r.payload.withUnsafeBytes {
                    try rw.add(r.id, sequence: r.sequence ?? checkpointSequence, payload: $0, into: &w)
                }
            }
            try rw.finish(into: &w, hashIndex: false)
            try w.finish()
            runs[key] = [try RowSection(segment: try DataSegment.open(p, fileSystem: fs))]
        }
        return runs
    }

    var lastScratch: UInt64 = 0

    mutating func nextScratchNumber() -> UInt64 {
        let onDisk = ((try? fs.list(directory)) ?? []).compactMap { DataSegmentFormat.number(fileName: $0) }
        lastScratch = max(lastScratch, onDisk.max() ?? 0) + 1
        return lastScratch
    }

    /// Keeps every file of `names` the new manifest does not name under `damaged/<stamp>/`,
    /// writes the new `CURRENT`, then removes the old names.
    mutating func switchTo(_ next: Manifest, names: [String]) throws {
        let named = next.dataSegments
        let scratchNames = Set(scratch.map { String($0.split(separator: "/").last ?? "") })
        let old = names.filter { name in
            if scratchNames.contains(name) { return false }
            if let n = DataSegmentFormat.number(fileName: name) { return !named.contains(n) }
            if let n = Manifest.segmentNumber(fileName: name) { return !next.segments.contains(n) }
            return name == Manifest.fileName || name == Manifest.fileName + ".tmp"
        }
        var area = try DamagedArea(
            storeDirectory: directory, fs: fs, clock: clock,
            title: "Files `cirrus repair` replaced (nothing was deleted):")
        for name in old { try area.keep(name, move: false, why: whyKept(name)) }
        area.note([""] + report.lines(allNames: true))
        try area.finish()
        try fs.writeAtomically(path(Manifest.fileName), next.encoded)
        for name in old where name != Manifest.fileName { try fs.remove(path(name)) }  // CURRENT was replaced
        try fs.syncDirectory(directory)
        report.keptIn = area.path
        report.kept = old
    }

    func whyKept(_ name: String) -> String {
        let p = path(name)
        let damaged =
            report.losses.contains { $0.file == p } || report.rebuilt.contains { $0.hasPrefix(p) }
            || (name == Manifest.fileName && report.manifestRebuilt)
        return damaged ? "damaged; see below" : "sound, replaced by the repaired store"
    }
}

// RecordStore+Checkpoint: move the delta into data segments (docs/storage-format.md).
//
// Steps, holding the writer token (commits wait; they resume on the new log segment):
//  1. flush and fsync the log;
//  2. for every table with changes since the last checkpoint, write its delta rows as a new
//     layer — merged, in key order, with the newest layers while the layer before them holds no
//     more live rows than they do (BaseRows.swift) — into a new data segment: the `rows`
//     section and the `dead` rows of the layers it keeps; then the layer's index segment from
//     the caller's sections (the façade's indexes) over its rows, plus the same sections over
//     its dead rows (named `dead/…`), fsync; a table named by the caller gets new index
//     segments for its layers;
//  3. write the state segment (`state` + the caller's `user` section), fsync; fsync the directory;
//  4. create the next log segment (header fsynced, directory fsynced);
//  5. replace CURRENT (write-tmp, fsync, rename, fsync dir) naming the new log segment, the
//     checkpoint sequence and the data segments — the switch;
//  6. map the new segments, make them the base with an empty delta, and remove the log and data
//     segments no longer named (fsync dir).
// A crash before 5 leaves the old manifest, whose files are all still there (the new ones are
// unnamed and removed by the next writable open); after 5, the new one.

import CirrusIO
import Foundation
import RecordModel

/// What a checkpoint did.
public struct CheckpointReport: Sendable, Hashable {
    /// The sequence the new base covers.
    public var sequence: UInt64
    /// Tables rewritten / kept as they were.
    public var tablesWritten: Int
    /// Tables whose data segments were kept as they were.
    public var tablesKept: Int
    /// Rows in the rewritten tables.
    public var rowsWritten: Int
    /// Bytes of the new data segments.
    public var bytesWritten: Int
}

/// A checkpoint under way beside commits (see `RecordStore.beginCheckpoint()`).
public struct CheckpointJob: Sendable {
    /// The state being checkpointed.
    public let snapshot: StoreSnapshot
    /// The first log segment written after the snapshot: it and later ones stay in the log.
    let firstLogSegment: UInt64
    /// Log segments the checkpoint covers (removed once it is installed).
    let before: ArraySlice<UInt64>
    /// The sequence the checkpoint covers.
    public var sequence: UInt64 { snapshot.lastSequence }
}

/// Index sections for a table, built from its rows (the façade's indexes): each handed to `add`
/// (its name and bytes) as soon as it is built, and written to the segment then, so that a
/// checkpoint never holds a layer's whole index segment in memory.
public typealias SectionEncoder = (CheckpointRows, _ add: (String, [UInt8]) throws -> Void) throws -> Void

extension RecordStore {
    /// The façade's state saved by the last checkpoint (`user` section), nil if none.
    public var checkpointUserState: [UInt8]? { cond.withLock { userState } }

    /// Writes the delta into data segments and drops the log segments it covered.
    ///
    /// - Parameters:
    ///   - userState: opaque bytes stored with the checkpoint (`checkpointUserState` after open).
    ///   - raiseHorizon: also forget deletions (change tokens older than now expire), as compaction does.
    ///   - rewrite: tables to rewrite even without changes (e.g. an index was added).
    ///   - merge: tables whose layers are merged into one even without changes (a read-triggered
    ///     merge: their extra layers cost reads more than the merge costs).
    ///   - sections: extra sections for a rewritten table, built from its rows in row order.
    @discardableResult
    public func checkpoint(
        userState: [UInt8] = [], raiseHorizon: Bool = false, rewrite: Set<TableKey> = [],
        merge: Set<TableKey> = [], sections: SectionEncoder? = nil
    ) throws(LogError) -> CheckpointReport {
        if options.readOnly { throw .readOnly }
        return try withWriterToken {
            try checkpointHoldingToken(
                userState: userState, raiseHorizon: raiseHorizon, rewrite: rewrite, merge: merge, sections: sections)
        }
    }

    /// Entries in the delta (versions and removals since the last checkpoint).
    public var deltaCount: Int { cond.withLock { state.live.count + state.removed.count } }

    func checkpointHoldingToken(
        userState user: [UInt8], raiseHorizon: Bool, rewrite: Set<TableKey>, merge: Set<TableKey> = [],
        sections: SectionEncoder?, bulk: BulkLoad? = nil
    ) throws -> CheckpointReport {
        try flushBuffer()
        try syncFile()
        var snap = cond.withLock { state }
        if let bulk {
            snap.lastSequence = max(snap.lastSequence, bulk.lastSequence)
            if let s = bulk.schema {
                snap.schema = s
                snap.schemaSequence = bulk.lastSequence
            }
            for z in bulk.zones where snap.zones[z] == nil { snap.zones[z] = bulk.lastSequence }
        }
        let prepared = try writeCheckpoint(
            snap, userState: user, raiseHorizon: raiseHorizon, rewrite: rewrite, merge: merge, sections: sections,
            runs: bulk?.runs ?? [:])
        let logNumber = (segments.last ?? 0) + 1
        let newFile: any AppendableFile
        do {
            newFile = try createSegment(logNumber, flags: 0)
        } catch {
            // Nothing is named yet: take back what this checkpoint wrote; the store is as it was.
            try? fileSystem.remove(segmentPath(logNumber))
            removeDataSegments(prepared.files)
            throw IntactFailure(error)
        }
        do {
            try switchManifest(prepared, logs: [logNumber])
        } catch let e as IntactFailure {
            try? newFile.close()
            try? fileSystem.remove(segmentPath(logNumber))
            removeDataSegments(prepared.files)
            throw e
        }
        try? file?.close()  // the old log segment was synced; new commits go to newFile
        file = newFile
        segmentSize = LogFormat.segmentHeaderSize
        let before = cond.withLock {
            let b = segments
            segments.append(logNumber)
            if let bulk {
                // The loaded records are in the new base only: the live state must carry the
                // bulk's schema, zones and sequences before it is rebased.
                state.lastSequence = snap.lastSequence
                state.schema = snap.schema
                state.schemaSequence = snap.schemaSequence
                state.zones = snap.zones
                nextSequence = max(nextSequence, bulk.lastSequence + 1)
            }
            return b
        }
        return try installCheckpoint(prepared, keepingLogFrom: logNumber, removing: before)
    }

    /// What a written, not yet installed checkpoint is.
    public struct PreparedCheckpoint: Sendable {
        let sequence: UInt64
        let horizon: UInt64
        let state: UInt64
        let tables: [TableKey: [TableFiles]]
        let newTables: [BaseTable]
        let userState: [UInt8]
        /// Every data segment the checkpoint wrote (what a failed switch takes back).
        let files: Set<UInt64>
        var report: CheckpointReport
        /// The base the checkpoint makes, one table per key (mapped, ready to read before the
        /// switch: a caller can build its own structures over them beside commits).
        public var baseTables: [BaseTable] { newTables }
    }

    /// The most layers a table keeps; past it a checkpoint merges more of them.
    static let maximumLayers = 12

    /// Writes a checkpoint of `snap` into data segments no manifest names yet (see
    /// `writeCheckpointFiles`); when it fails, the files it wrote are removed and the error is an
    /// `IntactFailure`: nothing the store reads has changed. `remake`: tables whose every layer is
    /// written out again whatever their shape (a repair's tables read from damaged files).
    func writeCheckpoint(
        _ snap: StoreSnapshot, userState user: [UInt8], raiseHorizon: Bool, rewrite: Set<TableKey>,
        merge: Set<TableKey> = [], remake: Set<TableKey> = [], sections: SectionEncoder?,
        runs: [TableKey: [RowSection]] = [:], isCancelled: (@Sendable () -> Bool)? = nil
    ) throws -> PreparedCheckpoint {
        let before = Set(
            ((try? fileSystem.list(directory)) ?? []).compactMap { DataSegmentFormat.number(fileName: $0) })
        do {
            return try writeCheckpointFiles(
                snap, userState: user, raiseHorizon: raiseHorizon, rewrite: rewrite, merge: merge, remake: remake,
                sections: sections, runs: runs, isCancelled: isCancelled)
        } catch {
            let now = Set(
                ((try? fileSystem.list(directory)) ?? []).compactMap { DataSegmentFormat.number(fileName: $0) })
            removeDataSegments(now.subtracting(before))
            throw IntactFailure(error)
        }
    }

    /// Writes a checkpoint of `snap` into data segments no manifest names yet (no token needed:
    /// it reads only the snapshot and writes only new files): CheckpointWriter.
    func writeCheckpointFiles(
        _ snap: StoreSnapshot, userState user: [UInt8], raiseHorizon: Bool, rewrite: Set<TableKey>,
        merge: Set<TableKey> = [], remake: Set<TableKey> = [], sections: SectionEncoder?,
        runs: [TableKey: [RowSection]] = [:], isCancelled: (@Sendable () -> Bool)? = nil
    ) throws -> PreparedCheckpoint {
        var w = CheckpointWriter(
            store: self, snap: snap, user: user, raiseHorizon: raiseHorizon, rewrite: rewrite, merge: merge,
            remake: remake, sections: sections, runs: runs, isCancelled: isCancelled)
        return try w.write()
    }

    /// Replaces `CURRENT` with the manifest of checkpoint `p` and log segments `logs` — the
    /// switch. A failure before the rename leaves the old manifest: `IntactFailure`. A failure
    /// after it (the directory's fsync) leaves a new manifest that may not be durable: the store
    /// cannot tell which one a crash would keep, so that error poisons it.
    func switchManifest(_ p: PreparedCheckpoint, logs: [UInt64]) throws {
        let manifest = Manifest(
            segments: logs,
            checkpoint: ManifestCheckpoint(sequence: p.sequence, horizon: p.horizon, state: p.state, tables: p.tables))
        let path = joinPath(directory, Manifest.fileName)
        do {
            try fileSystem.writeAtomically(path, manifest.encoded)
        } catch {
            if (try? fileSystem.read(path)) == manifest.encoded { throw error }
            try? fileSystem.remove(path + ".tmp")
            throw IntactFailure(error)
        }
    }

    /// Takes back the data segments a checkpoint wrote but could not name (best effort: a file
    /// left behind is unnamed, and the next checkpoint or writable open removes it).
    func removeDataSegments(_ numbers: Set<UInt64>) {
        for n in numbers { try? fileSystem.remove(joinPath(directory, DataSegmentFormat.fileName(n))) }
        cond.withLock { pendingDataSegments.subtract(numbers) }
    }

    /// Names a written checkpoint in the manifest (the switch), rebases the live state onto it
    /// and removes the files it replaced: log segments before `keepingLogFrom` (they hold only
    /// entries the checkpoint covers) and data segments no longer named. Token held.
    func installCheckpoint(
        _ p: PreparedCheckpoint, keepingLogFrom first: UInt64, removing: [UInt64]
    ) throws -> CheckpointReport {
        let (logs, cur) = cond.withLock { (segments.filter { $0 >= first }, state) }
        let manifest = Manifest(
            segments: logs,
            checkpoint: ManifestCheckpoint(sequence: p.sequence, horizon: p.horizon, state: p.state, tables: p.tables))
        if (try? fileSystem.read(joinPath(directory, Manifest.fileName))) != manifest.encoded {
            try switchManifest(p, logs: logs)
        }
        cond.withLock {
            segments = logs
            dataSegments = manifest.dataSegments
            pendingDataSegments = []
            manifestCheckpoint = manifest.checkpoint
            userState = p.userState
            state = cur.rebased(onto: p.newTables, sequence: p.sequence, horizon: p.horizon)
        }
        // The switch is done: the old files are garbage, and one left behind (a failed unlink)
        // is unnamed and removed by the next checkpoint or writable open.
        for o in removing where o < first { try? fileSystem.remove(segmentPath(o)) }
        try? removeUnnamedDataSegments()
        try? fileSystem.syncDirectory(directory)
        return p.report
    }

    // MARK: checkpoints beside commits

    /// First step of a checkpoint that runs beside commits: flush, fsync, start a new log
    /// segment (commits continue there) and take the snapshot to write. Then call
    /// `writeCheckpoint(_:)` from any thread and `installCheckpoint(_:)` to switch. One at a time.
    public func beginCheckpoint() throws(LogError) -> CheckpointJob {
        if options.readOnly { throw .readOnly }
        return try withWriterToken {
            try flushBuffer()
            try syncFile()
            try rotate()
            let (snap, segs) = cond.withLock { (state, segments) }
            return CheckpointJob(snapshot: snap, firstLogSegment: segs.last ?? 0, before: segs.dropLast())
        }
    }

    /// Second step: writes the job's data segments (no lock held; commits go on). `isCancelled`
    /// is asked between tables and every few thousand rows; when it answers true the files
    /// written so far are removed and the checkpoint fails (the log still holds every change).
    public func writeCheckpoint(
        _ job: CheckpointJob, userState: [UInt8], raiseHorizon: Bool = false, rewrite: Set<TableKey> = [],
        merge: Set<TableKey> = [], sections: SectionEncoder? = nil, isCancelled: (@Sendable () -> Bool)? = nil
    ) throws(LogError) -> PreparedCheckpoint {
        do {
            return try writeCheckpoint(
                job.snapshot, userState: userState, raiseHorizon: raiseHorizon, rewrite: rewrite, merge: merge,
                sections: sections, isCancelled: isCancelled)
        } catch {
            // Nothing is named yet: the store is intact; the unnamed files go at the next install or open.
            throw LogError.wrap(error)
        }
    }

    /// Last step: the manifest switch; the delta written since `beginCheckpoint` stays the delta.
    @discardableResult
    public func installCheckpoint(_ p: PreparedCheckpoint, job: CheckpointJob) throws(LogError) -> CheckpointReport {
        acquireToken()
        defer { releaseToken() }
        if let f = cond.withLock({ failure }) { throw .failed(reason: "\(f)") }
        let current = cond.withLock { state.checkpointSequence }
        guard p.sequence >= current, job.firstLogSegment >= (cond.withLock { segments.first } ?? 0) else {
            // Another checkpoint was installed since this one began: this one is stale (its
            // files are unnamed and go at the next install or open).
            throw .badManifest(
                path: joinPath(directory, Manifest.fileName),
                reason: "checkpoint at \(p.sequence) is older than the installed one at \(current)")
        }
        do {
            return try installCheckpoint(p, keepingLogFrom: job.firstLogSegment, removing: Array(job.before))
        } catch let e as IntactFailure {
            removeDataSegments(p.files)
            throw LogError.wrap(e)
        } catch {
            let e = LogError.wrap(error)
            cond.withLock { failure = e }
            throw e
        }
    }

    /// Merges sorted sources into `emit` in key order: for an id in several sources the version
    /// with the highest sequence wins (dead layer rows were skipped by their sources).
    func merge(
        _ sources: inout [MergeSource], _ emit: (RecordID, UInt64, UnsafeRawBufferPointer) throws -> Void
    ) throws {
        while true {
            var best: Int? = nil
            for k in sources.indices {
                guard let h = sources[k].head else { continue }
                guard let b = best, let bh = sources[b].head else { best = k; continue }
                if RowKeyOrder.less(h, bh) || (h == bh && sources[k].sequence > sources[b].sequence) { best = k }
            }
            guard let b = best, let id = sources[b].head else { return }
            let seq = sources[b].sequence
            try sources[b].withPayload { try emit(id, seq, $0) }
            for k in sources.indices where sources[k].head == id { sources[k].advance() }
        }
    }

    /// Writes a layer's index segment from its rows (table rows from `start`), with the `dead/`
    /// sections of the rows `dead` of the older layers in `base` that the layer makes dead; nil
    /// when there is no encoder or nothing to write.
    func writeIndexSegment(
        _ rows: RowSection, start: Int, _ key: TableKey, _ sections: SectionEncoder?, dead: [UInt32] = [],
        of base: BaseRows? = nil
    ) throws -> (number: UInt64, segment: DataSegment)? {
        guard let sections else { return nil }
        // The file is created with the first section: a table without indexes writes none.
        var writer: DataSegmentWriter?
        var number: UInt64 = 0
        func add(_ name: String, _ bytes: [UInt8]) throws {
            if writer == nil {
                number = nextDataSegmentNumber()
                writer = try DataSegmentWriter(
                    fileSystem: fileSystem, path: joinPath(directory, DataSegmentFormat.fileName(number)))
            }
            try writer?.addSection(name, bytes)
        }
        func encode(_ table: CheckpointRows, prefix: String = "") throws {
            try sections(table) { name, bytes in try add(prefix + name, bytes) }
            if let (i, error) = table.failure.value {
                throw LogError.badSegment(
                    path: "table \(key.owner)/\(key.recordType)", offset: i,
                    reason: "row \(i) does not decode: \(error)")
            }
        }
        do {
            try encode(CheckpointRows(key: key, rows: rows, start: start))
            if writer != nil, let base, !dead.isEmpty {
                try encode(CheckpointRows(key: key, dead: dead, of: base), prefix: BaseLayer.deadSectionPrefix)
            }
            guard var w = writer else { return nil }
            try w.finish()
            return (number, try DataSegment.open(w.path, fileSystem: fileSystem))
        } catch {
            // A failed or cancelled build leaves no file behind (it is in no manifest).
            if let path = writer?.path { try? fileSystem.remove(path) }
            throw error
        }
    }

    /// A data segment number no file and no manifest uses.
    func nextDataSegmentNumber() -> UInt64 {
        // Unlisted names are still avoided: the manifest's and pending numbers are excluded below.
        let onDisk = ((try? fileSystem.list(directory)) ?? []).compactMap { DataSegmentFormat.number(fileName: $0) }
        return cond.withLock {
            let n = max(onDisk.max() ?? 0, dataSegments.max() ?? 0, pendingDataSegments.max() ?? 0, lastDataSegment) + 1
            lastDataSegment = n
            return n
        }
    }

    /// Removes data segment files the manifest does not name and no checkpoint under way is
    /// writing (token held or opening).
    func removeUnnamedDataSegments() throws {
        let (named, damaged) = cond.withLock { (dataSegments.union(pendingDataSegments), damagedDataSegments) }
        var area: DamagedArea?
        for name in try fileSystem.list(directory) {
            guard let n = DataSegmentFormat.number(fileName: name), !named.contains(n) else { continue }
            if let why = damaged[n] {
                // Damaged, and replaced by this checkpoint: kept for inspection, never deleted.
                if area == nil {
                    area = try DamagedArea(
                        storeDirectory: directory, fs: fileSystem, clock: options.clock,
                        title: "Damaged data segments a checkpoint replaced (their data was rebuilt from the rows):")
                }
                try area?.keep(name, move: true, why: why)
                cond.withLock { _ = damagedDataSegments.removeValue(forKey: n) }
            } else {
                try fileSystem.remove(joinPath(directory, name))
            }
        }
        try area?.finish()
    }

    /// Records that a named data segment is damaged (derived data the open rebuilt, named by
    /// `warning`), so that the checkpoint that replaces it moves it into `damaged/` instead of
    /// removing it. Warnings about other files are ignored.
    public func noteDamaged(_ warning: OpenWarning) {
        guard parentDirectory(of: warning.path) == directory || parentDirectory(of: warning.path) == directory + "/",
            let n = DataSegmentFormat.number(fileName: String(warning.path.split(separator: "/").last ?? ""))
        else { return }
        cond.withLock { damagedDataSegments[n] = "\(warning.reason) at byte \(warning.offset); \(warning.consequence)" }
    }
}

// RecordStore+Checkpoint: move the delta into data segments (docs/storage-format.md).
//
// Steps, holding the writer token (commits wait; they resume on the new log segment):
//  1. flush and fsync the log;
//  2. for every table with changes since the last checkpoint (or named by the caller), merge its
//     base rows not removed with its delta rows, in key order, into a new data segment: the
//     `rows` section, then the caller's sections (the façade's indexes), fsync;
//  3. write the state segment (`state` + the caller's `user` section), fsync; fsync the directory;
//  4. create the next log segment (header fsynced, directory fsynced);
//  5. replace CURRENT (write-tmp, fsync, rename, fsync dir) naming the new log segment, the
//     checkpoint sequence and the data segments — the switch;
//  6. map the new segments, make them the base with an empty delta, and remove the log and data
//     segments no longer named (fsync dir).
// A crash before 5 leaves the old manifest, whose files are all still there (the new ones are
// unnamed and removed by the next writable open); after 5, the new one.

import RecordModel

/// What a checkpoint did.
public struct CheckpointReport: Sendable, Hashable {
    /// The sequence the new base covers.
    public var sequence: UInt64
    /// Tables rewritten / kept as they were.
    public var tablesWritten: Int
    public var tablesKept: Int
    /// Rows in the rewritten tables.
    public var rowsWritten: Int
    /// Bytes of the new data segments.
    public var bytesWritten: Int
}

/// The rows of one table being checkpointed, in row order (RowID 0, 1, …), decoded one at a
/// time: what a section encoder reads to build the table's indexes.
public struct CheckpointRows: Sequence {
    enum Source {
        case base(RowSection, Int)
        case delta([UInt8])
    }
    public let key: TableKey
    let items: [(id: RecordID, sequence: UInt64, source: Source)]

    /// Number of rows.
    public var count: Int { items.count }

    func withPayload<T>(_ i: Int, _ body: (UnsafeRawBufferPointer) -> T) -> T? {
        switch items[i].source {
        case .base(let rows, let j): return rows.payload(j).map(body)
        case .delta(let bytes): return bytes.withUnsafeBytes(body)
        }
    }

    public struct Iterator: IteratorProtocol {
        let rows: CheckpointRows
        var i = 0
        /// The next row and its record (storage form); rows that fail to decode are skipped
        /// (they were CRC-checked when written; `verify` reports them).
        public mutating func next() -> (Int, Record)? {
            while i < rows.items.count {
                defer { i += 1 }
                if let r = rows.withPayload(i, { try? RecordCodec.decode($0) }) ?? nil {
                    return (i, r)
                }
            }
            return nil
        }
    }

    public func makeIterator() -> Iterator { Iterator(rows: self) }
}

extension RecordStore {
    /// The façade's state saved by the last checkpoint (`user` section), nil if none.
    public var checkpointUserState: [UInt8]? { cond.withLock { userState } }

    /// Writes the delta into data segments and drops the log segments it covered.
    ///
    /// - Parameters:
    ///   - userState: opaque bytes stored with the checkpoint (`checkpointUserState` after open).
    ///   - raiseHorizon: also forget deletions (change tokens older than now expire), as compaction does.
    ///   - rewrite: tables to rewrite even without changes (e.g. an index was added).
    ///   - sections: extra sections for a rewritten table, built from its rows in row order.
    @discardableResult
    public func checkpoint(
        userState: [UInt8] = [], raiseHorizon: Bool = false, rewrite: Set<TableKey> = [],
        sections: ((CheckpointRows) throws -> [(name: String, bytes: [UInt8])])? = nil
    ) throws(LogError) -> CheckpointReport {
        if options.readOnly { throw .readOnly }
        acquireToken()
        defer { releaseToken() }
        if let f = cond.withLock({ failure }) { throw .failed(reason: "\(f)") }
        do {
            return try checkpointHoldingToken(userState: userState, raiseHorizon: raiseHorizon, rewrite: rewrite, sections: sections)
        } catch {
            let e = LogError.wrap(error)
            cond.withLock { failure = e }
            throw e
        }
    }

    /// Entries in the delta (versions and removals since the last checkpoint).
    public var deltaCount: Int { cond.withLock { state.live.count + state.removed.count } }

    func checkpointHoldingToken(
        userState user: [UInt8], raiseHorizon: Bool, rewrite: Set<TableKey>,
        sections: ((CheckpointRows) throws -> [(name: String, bytes: [UInt8])])?
    ) throws -> CheckpointReport {
        try flushBuffer()
        try syncFile()
        let snap = cond.withLock { state }
        let seq = snap.lastSequence

        // Which tables change: every delta version's and every removal's.
        var deltaByTable: [TableKey: [(RecordID, LiveRecord)]] = [:]
        for (id, l) in snap.live { deltaByTable[TableKey(owner: id.zoneID.ownerName, recordType: l.recordType), default: []].append((id, l)) }
        var changed = Set(deltaByTable.keys).union(rewrite)
        for (id, _) in snap.removed {
            if let (t, _) = snap.baseLocation(id) { changed.insert(t.key) }
        }

        var tables: [TableKey: UInt64] = [:]
        var newTables: [BaseTable] = []
        var kept = 0
        var rowsWritten = 0
        var bytesWritten = 0
        for (key, t) in snap.base where !changed.contains(key) {
            tables[key] = t.segmentNumber
            newTables.append(t)
            kept += 1
        }
        for key in changed.sorted() {
            var items: [(id: RecordID, sequence: UInt64, source: CheckpointRows.Source)] = []
            if let t = snap.base[key] {
                items.reserveCapacity(t.rows.count)
                for i in 0..<t.rows.count {
                    if let id = t.rows.recordID(i, owner: key.owner), snap.removed[id] == nil {
                        items.append((id, t.rows.sequence(i), .base(t.rows, i)))
                    }
                }
            }
            for (id, l) in deltaByTable[key] ?? [] { items.append((id, l.sequence, .delta(l.payload))) }
            if items.isEmpty { continue }  // the table emptied: it leaves the manifest
            items.sort { RowKeyOrder.less($0.id, $1.id) }
            let rows = CheckpointRows(key: key, items: items)
            var rw = RowSectionWriter()
            for i in 0..<rows.count {
                _ = rows.withPayload(i) { rw.add(items[i].id, sequence: items[i].sequence, payload: $0) }
            }
            let n = nextDataSegmentNumber()
            let path = joinPath(directory, DataSegmentFormat.fileName(n))
            var w = try DataSegmentWriter(fileSystem: fileSystem, path: path)
            try w.addSection("rows", rw.finish())
            for s in try sections?(rows) ?? [] { try w.addSection(s.name, s.bytes) }
            try w.finish()
            tables[key] = n
            rowsWritten += items.count
            bytesWritten += (try? fileSystem.size(path)) ?? 0
            let seg = try DataSegment.open(path, fileSystem: fileSystem)
            newTables.append(BaseTable(key: key, segmentNumber: n, rows: try RowSection(segment: seg)))
        }

        // The state segment.
        var st = CheckpointState(
            lastSequence: seq, horizon: raiseHorizon ? seq : snap.horizon, schemaSequence: snap.schemaSequence,
            schema: snap.schema, zones: snap.zones, tombstones: raiseHorizon ? [:] : snap.tombstoneMap)
        if raiseHorizon { st.tombstones = [:] }
        let stateNumber = nextDataSegmentNumber()
        let statePath = joinPath(directory, DataSegmentFormat.fileName(stateNumber))
        var sw = try DataSegmentWriter(fileSystem: fileSystem, path: statePath)
        try sw.addSection("state", st.encoded())
        try sw.addSection("user", user)
        try sw.finish()
        try fileSystem.syncDirectory(directory)

        // The next log segment, then the switch.
        let before = segments
        let logNumber = (before.last ?? 0) + 1
        let newFile = try createSegment(logNumber, flags: 0)
        let manifest = Manifest(
            segments: [logNumber],
            checkpoint: ManifestCheckpoint(sequence: seq, horizon: st.horizon, state: stateNumber, tables: tables))
        try fileSystem.writeAtomically(joinPath(directory, Manifest.fileName), manifest.encoded)

        try? file?.close()
        file = newFile
        segmentSize = LogFormat.segmentHeaderSize
        cond.withLock {
            segments = [logNumber]
            dataSegments = manifest.dataSegments
            manifestCheckpoint = manifest.checkpoint
            userState = user
            var next = StoreSnapshot()
            next.setBase(newTables, sequence: seq)
            next.zones = snap.zones
            next.schema = snap.schema
            next.schemaSequence = snap.schemaSequence
            next.lastSequence = seq
            next.horizon = st.horizon
            next.tombstoneMap = st.tombstones
            state = next
        }
        for o in before { try fileSystem.remove(segmentPath(o)) }
        try removeUnnamedDataSegments()
        try fileSystem.syncDirectory(directory)
        return CheckpointReport(
            sequence: seq, tablesWritten: tables.count - kept, tablesKept: kept, rowsWritten: rowsWritten,
            bytesWritten: bytesWritten)
    }

    /// A data segment number no file and no manifest uses.
    func nextDataSegmentNumber() -> UInt64 {
        let onDisk = ((try? fileSystem.list(directory)) ?? []).compactMap { DataSegmentFormat.number(fileName: $0) }
        let n = max(onDisk.max() ?? 0, cond.withLock { dataSegments.max() ?? 0 }) + 1
        return n
    }

    /// Removes data segment files the manifest does not name (token held or opening).
    func removeUnnamedDataSegments() throws {
        let named = cond.withLock { dataSegments }
        for name in try fileSystem.list(directory) {
            if let n = DataSegmentFormat.number(fileName: name), !named.contains(n) {
                try fileSystem.remove(joinPath(directory, name))
            }
        }
    }
}

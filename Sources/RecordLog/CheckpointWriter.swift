// CheckpointWriter: the files of one checkpoint — per changed table a new layer (its rows, then
// its index segment built from them), the unchanged tables kept or re-indexed, and the state
// segment — written into data segments no manifest names yet (docs/storage-format.md,
// "Checkpoint" and "Merge"). The switch that names them is RecordStore+Checkpoint's.
//
// Per changed table the delta (and any bulk runs) becomes a new layer, merged with the newest
// layers while the layer before them holds no more live rows than they do (or when compacting,
// or past `maximumLayers`): BaseRows.swift. A table of `merge` with more than one layer, or with
// dead rows (rows a repair dropped), is rewritten into one, changed or not; a table of `remake`
// (a repair's, read out of a damaged file) is rewritten into one whatever its shape, so that no
// layer of the result is a file that fails its checks.

import CirrusIO
import RecordModel

struct CheckpointWriter {
    let store: RecordStore
    let snap: StoreSnapshot
    let user: [UInt8]
    let raiseHorizon: Bool
    let rewrite: Set<TableKey>
    let merge: Set<TableKey>
    let remake: Set<TableKey>
    let sections: SectionEncoder?
    let runs: [TableKey: [RowSection]]
    /// Asked between tables and every few thousand rows: true stops the checkpoint (its files are
    /// then removed by `RecordStore.writeCheckpoint`, and nothing the store reads has changed).
    let isCancelled: (@Sendable () -> Bool)?

    // What the checkpoint has written so far.
    var tables: [TableKey: [TableFiles]] = [:]
    var newTables: [BaseTable] = []
    var written = 0
    var rowsWritten = 0
    var bytesWritten = 0
    var created: [UInt64] = []

    /// Every delta version by its table (see `plan`), and the base rows each table loses.
    var deltaByTable: [TableKey: [(RecordID, LiveRecord)]] = [:]
    var newDead: [TableKey: [Int]] = [:]

    init(
        store: RecordStore, snap: StoreSnapshot, user: [UInt8], raiseHorizon: Bool, rewrite: Set<TableKey>,
        merge: Set<TableKey>, remake: Set<TableKey> = [], sections: SectionEncoder?, runs: [TableKey: [RowSection]],
        isCancelled: (@Sendable () -> Bool)? = nil
    ) {
        self.remake = remake
        self.isCancelled = isCancelled
        self.store = store
        self.snap = snap
        self.user = user
        self.raiseHorizon = raiseHorizon
        self.rewrite = rewrite
        self.merge = merge
        self.sections = sections
        self.runs = runs
    }

    var fileSystem: any FileSystem { store.fileSystem }

    func path(_ n: UInt64) -> String { joinPath(store.directory, DataSegmentFormat.fileName(n)) }

    /// Writes every file and returns the checkpoint, not yet named by a manifest.
    mutating func write() throws -> RecordStore.PreparedCheckpoint {
        let changed = plan()
        for (key, t) in snap.base where !changed.contains(key) {
            try checkCancelled()
            try keep(key, t)
        }
        for key in changed.sorted() {
            try checkCancelled()
            try writeTable(key)
        }
        try checkCancelled()
        return try writeState()
    }

    /// Throws when the checkpoint was cancelled (`isCancelled`).
    func checkCancelled() throws {
        if let isCancelled, isCancelled() { throw LogError.failed(reason: "the checkpoint was cancelled") }
    }

    /// Which tables change: every delta version's, every removal's, every bulk run's (and, when
    /// compacting or merging, every table in several layers or with dead rows; every table of `remake`).
    mutating func plan() -> Set<TableKey> {
        for (id, l) in snap.live {
            let key = TableKey(owner: id.zoneID.ownerName, recordType: l.recordType)
            // A bulk load numbers its records after every delta version: one that saves the id
            // again under another record type supersedes the delta's (in the same table the
            // merge keeps the higher sequence).
            if !runs.isEmpty,
                runs.contains(where: { k, list in
                    k != key && k.owner == key.owner && list.contains { $0.row(of: id) != nil }
                })
            {
                continue
            }
            deltaByTable[key, default: []].append((id, l))
        }
        // Base rows that die: removed since the checkpoint (deleted, or superseded by a delta
        // version), or saved again by a bulk load.
        for (id, _) in snap.removed {
            if let (t, i) = snap.baseLocation(id) { newDead[t.key, default: []].append(i) }
        }
        if !snap.base.isEmpty {
            for (key, list) in runs {
                for r in list {
                    for i in 0..<r.count {
                        if let id = r.recordID(i, owner: key.owner), let (t, b) = snap.baseLocation(id) {
                            newDead[t.key, default: []].append(b)
                        }
                    }
                }
            }
        }
        var changed = Set(deltaByTable.keys).union(runs.keys).union(newDead.keys)
        if raiseHorizon {
            // Compaction leaves every table in one layer with nothing dead.
            for (key, t) in snap.base where t.layers.count > 1 || t.rows.dead.count > 0 { changed.insert(key) }
        }
        for key in merge where (snap.base[key]?.layers.count ?? 0) > 1 || (snap.base[key]?.rows.dead.count ?? 0) > 0 {
            changed.insert(key)
        }
        changed.formUnion(remake.filter { snap.base[$0] != nil })
        return changed
    }

    /// An unchanged table: its files as they are, or — when its indexes changed (a schema change
    /// added one) or a layer has none — the same rows with new index segments.
    mutating func keep(_ key: TableKey, _ t: BaseTable) throws {
        guard rewrite.contains(key) || (sections != nil && t.layers.contains { $0.indexes == nil }) else {
            tables[key] = t.files
            newTables.append(t)
            return
        }
        var layers: [BaseLayer] = []
        for l in t.layers { layers.append(try reindexed(l, key, of: t.rows)) }
        let table = BaseTable(key: key, rows: BaseRows(layers: layers))
        tables[key] = table.files
        newTables.append(table)
        written += 1
    }

    /// A changed table: its delta and runs, merged with the layers the policy picks, as a new
    /// layer after the layers it keeps.
    mutating func writeTable(_ key: TableKey) throws {
        let old = snap.base[key]
        let oldLayers = old?.layers ?? []
        let (m, start, dead, deadBelow) = layersToMerge(key)
        let n: UInt64
        let count: Int
        if let (file, rows) = wholeRun(key, merging: m, of: oldLayers.count, deadBelow: deadBelow) {
            (n, count) = (file, rows.count)  // the run is the new layer: nothing to copy
            created.append(n)
        } else {
            n = store.nextDataSegmentNumber()
            created.append(n)
            count = try writeRows(key, n, merging: oldLayers[m...], dead: dead, deadBelow: deadBelow)
            // The runs were read once, by the merge: their pages need not stay resident while
            // the index is built (the runs are removed once the checkpoint is installed).
            for r in runs[key] ?? [] { r.segment.file.releaseResidentPages() }
        }
        written += 1
        var layers = Array(oldLayers[..<m])
        if let old {
            // The layers kept get new index segments too when the table's indexes changed (or
            // they have none), as an unchanged table's do.
            for (k, l) in layers.enumerated() where rewrite.contains(key) || (sections != nil && l.indexes == nil) {
                layers[k] = try reindexed(l, key, of: old.rows)
            }
        }
        if count == 0 && deadBelow.isEmpty {
            try fileSystem.remove(path(n))  // nothing to hold: no new layer
        } else {
            rowsWritten += count
            bytesWritten += size(n)
            let rows = try RowSection(segment: try DataSegment.open(path(n), fileSystem: fileSystem))
            let idx = try indexSegment(rows, start: start, key, dead: deadBelow, of: old?.rows)
            // Every row was read for the index: queries fault back in only what they read.
            rows.segment.file.releaseResidentPages()
            layers.append(
                BaseLayer(
                    files: TableFiles(rows: n, indexes: idx?.number), rows: rows, indexes: idx?.segment,
                    start: start, dead: deadBelow))
        }
        // A table that emptied leaves the manifest.
        if layers.isEmpty || layers.allSatisfy({ $0.rows.count == 0 }) { return }
        let table = BaseTable(key: key, rows: BaseRows(layers: layers))
        tables[key] = table.files
        newTables.append(table)
    }

    /// The layers of table `key` the new layer takes in — the newest, while the one before them
    /// holds no more live rows than they do together (a binary counter): from layer `m`; the new
    /// layer's first row; the table's dead rows with those that die now; and the dead rows of the
    /// layers it keeps, which the new layer records (those that died now and those the layers it
    /// replaces had recorded).
    func layersToMerge(_ key: TableKey) -> (m: Int, start: Int, dead: RowBitmap, deadBelow: [UInt32]) {
        let old = snap.base[key]
        let oldLayers = old?.layers ?? []
        var dead = old?.rows.dead ?? RowBitmap()
        var live = oldLayers.indices.map { old?.rows.liveCount(layer: $0) ?? 0 }
        var died: [Int] = []
        for r in newDead[key] ?? [] where !dead.contains(r) {
            dead.insert(r)
            died.append(r)
            if let k = old?.rows.starts.layer(of: r) { live[k] -= 1 }
        }
        var m = oldLayers.count
        var merged = (deltaByTable[key]?.count ?? 0) + (runs[key] ?? []).reduce(0) { $0 + $1.count }
        let all = raiseHorizon || merge.contains(key) || remake.contains(key)
        while m > 0 && (all || live[m - 1] <= merged || m + 1 > RecordStore.maximumLayers) {
            m -= 1
            merged += live[m]
        }
        let start = m < oldLayers.count ? oldLayers[m].start : (old?.rows.count ?? 0)
        var deadBelow = died.filter { $0 < start }
        for l in oldLayers[m...] { deadBelow += l.dead.lazy.map(Int.init).filter { $0 < start } }
        return (m, start, dead, Array(Set(deadBelow)).sorted().map { UInt32($0) })
    }

    /// The bulk run that is table `key`'s whole new layer as it stands, and its file: when the
    /// table's only source is one run written in the layer form (with its `rowhash` section,
    /// `BulkLoad.spill(final:)`) — no layer merged into it, no delta, no row of older layers
    /// dying (a `dead` section to add). Nil otherwise: the layer is written by `writeRows`.
    func wholeRun(
        _ key: TableKey, merging m: Int, of layerCount: Int, deadBelow: [UInt32]
    ) -> (file: UInt64, rows: RowSection)? {
        guard m == layerCount, deadBelow.isEmpty, deltaByTable[key]?.isEmpty ?? true,
            let list = runs[key], list.count == 1, let run = list.first, run.hash != nil, run.count > 0,
            let name = run.segment.file.path.split(separator: "/").last,
            let file = DataSegmentFormat.number(fileName: String(name)), path(file) == run.segment.file.path
        else { return nil }
        return (file, run)
    }

    /// Writes the new layer's rows segment `n`: the merged layers' live rows, the delta's and the
    /// runs', in key order (the highest sequence wins an id); then its `dead` section. Returns
    /// the rows written.
    func writeRows(
        _ key: TableKey, _ n: UInt64, merging layers: ArraySlice<BaseLayer>, dead: RowBitmap, deadBelow: [UInt32]
    ) throws -> Int {
        var sources: [MergeSource] = []
        for l in layers { sources.append(MergeSource(.layer(l.rows, owner: key.owner, start: l.start, dead: dead))) }
        if let d = deltaByTable[key] {
            try checkCancelled()
            sources.append(MergeSource(.delta(d, order: d.indices.sorted { RowKeyOrder.less(d[$0].0, d[$1].0) })))
        }
        for r in runs[key] ?? [] { sources.append(MergeSource(.section(r, owner: key.owner))) }
        var w = try DataSegmentWriter(fileSystem: fileSystem, path: path(n))
        var rw = try RowSectionWriter(into: &w)
        var n = 0
        try store.merge(&sources) { id, seq, payload in
            n &+= 1
            if n & 4095 == 0 { try checkCancelled() }
            try rw.add(id, sequence: seq, payload: payload, into: &w)
        }
        try rw.finish(into: &w)
        if !deadBelow.isEmpty { try w.addSection("dead", BaseLayer.encodeDead(deadBelow)) }
        try w.finish()
        return rw.count
    }

    /// The state segment (zones, schema, tombstones, the façade's state, the checkpoint's own
    /// manifest lines), then the directory's fsync; the checkpoint, ready to name.
    mutating func writeState() throws -> RecordStore.PreparedCheckpoint {
        let seq = snap.lastSequence
        let st = CheckpointState(
            lastSequence: seq, horizon: raiseHorizon ? seq : snap.horizon, schemaSequence: snap.schemaSequence,
            schema: snap.schema, zones: snap.zones, tombstones: raiseHorizon ? [:] : snap.tombstoneMap)
        let stateNumber = store.nextDataSegmentNumber()
        var sw = try DataSegmentWriter(fileSystem: fileSystem, path: path(stateNumber))
        try sw.addSection("state", st.encoded())
        try sw.addSection("user", user)
        // The checkpoint's own manifest lines: a lost or damaged CURRENT is rebuilt from them.
        try sw.addSection(
            "tables",
            Manifest.encodeCheckpoint(
                ManifestCheckpoint(sequence: seq, horizon: st.horizon, state: stateNumber, tables: tables)))
        try sw.finish()
        try fileSystem.syncDirectory(store.directory)
        let files = Set(created).union([stateNumber])
        store.cond.withLock { store.pendingDataSegments.formUnion(files) }
        return RecordStore.PreparedCheckpoint(
            sequence: seq, horizon: st.horizon, state: stateNumber, tables: tables, newTables: newTables,
            userState: user, files: files,
            report: CheckpointReport(
                sequence: seq, tablesWritten: written, tablesKept: tables.count - written, rowsWritten: rowsWritten,
                bytesWritten: bytesWritten))
    }

    /// A file's size, for the report only (a size that cannot be read counts 0).
    func size(_ n: UInt64) -> Int { (try? fileSystem.size(path(n))) ?? 0 }

    /// The index segment of a layer's rows (table rows from `start`), with the `dead/` sections of
    /// the rows `dead` of `base` it makes dead; nil when there is no encoder or nothing to write.
    mutating func indexSegment(
        _ rows: RowSection, start: Int, _ key: TableKey, dead: [UInt32], of base: BaseRows?
    ) throws -> (number: UInt64, segment: DataSegment)? {
        let idx = try store.writeIndexSegment(rows, start: start, key, sections, dead: dead, of: base)
        if let idx {
            created.append(idx.number)
            bytesWritten += size(idx.number)
        }
        return idx
    }

    /// Layer `l` of table `key` (whose rows are `base`) with a new index segment: same rows.
    mutating func reindexed(_ l: BaseLayer, _ key: TableKey, of base: BaseRows) throws -> BaseLayer {
        let idx = try indexSegment(l.rows, start: l.start, key, dead: l.dead, of: base)
        return BaseLayer(
            files: TableFiles(rows: l.files.rows, indexes: idx?.number), rows: l.rows, indexes: idx?.segment,
            start: l.start, dead: l.dead)
    }
}

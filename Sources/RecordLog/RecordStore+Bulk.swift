// RecordStore+Bulk: loading many records straight into data segments, bypassing the log — what
// `cirrus import` runs (docs/storage-format.md, "Bulk load").
//
// A BulkLoad holds the writer token from creation to `finish()` or `cancel()` (commits wait).
// Records are numbered with fresh sequence numbers, encoded, and buffered per table; past the
// memory budget each table's buffer is sorted and spilled as a sorted run — a data segment with
// a `rows` section that no manifest names (external sort). `finish()` is a checkpoint whose new
// layer per table also takes the runs (merged with the delta, and with the newest layers when
// the merge policy says so), then switches the manifest. Until that switch nothing the store reads has changed: a crash or a kill leaves
// the store exactly as it was (the next writable open removes the unnamed runs), and a failed
// load can be cancelled the same way.

import CirrusIO
import Dispatch
import RecordModel

/// A bulk load into a store; see `RecordStore.beginBulkLoad()`.
public final class BulkLoad {
    let store: RecordStore
    let budget: Int
    /// The last sequence number handed out.
    public private(set) var lastSequence: UInt64
    /// Records added so far.
    public private(set) var count = 0
    var schema: Schema?
    var zones: Set<ZoneID> = []
    var runs: [TableKey: [RowSection]] = [:]
    var buffer: [TableKey: [(id: RecordID, sequence: UInt64, payload: [UInt8])]] = [:]
    var buffered = 0
    var done = false

    init(store: RecordStore, budget: Int) {
        self.store = store
        self.budget = budget
        lastSequence = store.cond.withLock { store.nextSequence } - 1
    }

    deinit { if !done { cancel() } }

    /// The sequence number the next added record will get.
    public var nextSequence: UInt64 { lastSequence + 1 }

    /// Adds records (storage form, already validated); each gets the next sequence number.
    public func add(_ records: [Record]) throws(LogError) {
        precondition(!done, "bulk load already finished")  // a programming error, not input
        for r in records {
            lastSequence += 1
            let payload = RecordCodec.encode(r)
            guard payload.count <= LogFormat.maximumPayload else {
                throw .invalidRecord(
                    RecordValidationError(
                        .recordTooLarge, recordID: r.recordID,
                        "a record of \(payload.count) bytes exceeds the frame limit"))
            }
            buffer[TableKey(owner: r.recordID.zoneID.ownerName, recordType: r.recordType), default: []]
                .append((r.recordID, lastSequence, payload))
            buffered += payload.count + 100
            count += 1
        }
        if buffered >= budget { try spill() }
    }

    /// Whether a record with `id` was added to this load (in any table of its owner): the
    /// unsorted buffer is scanned, each run searched by id. For the rare check a fingerprint
    /// cannot settle (see ContainerCore+Bulk.swift), not for every record.
    public func contains(_ id: RecordID) -> Bool {
        let owner = id.zoneID.ownerName
        for (key, items) in buffer where key.owner == owner && items.contains(where: { $0.id == id }) { return true }
        for (key, sections) in runs where key.owner == owner && sections.contains(where: { $0.row(of: id) != nil }) {
            return true
        }
        return false
    }

    /// The owners (databases) of the records added so far.
    public var owners: Set<String> { Set(buffer.keys.map(\.owner)).union(runs.keys.map(\.owner)) }

    /// The schema after the load (written with it).
    public func setSchema(_ s: Schema) { schema = s }

    /// A custom zone the load creates.
    public func addZone(_ z: ZoneID) { zones.insert(z) }

    /// Sorts each table's buffer and writes it as a run. The last spill (`final`) writes a table
    /// that has no run yet in the form of a layer (with its `rowhash` section): the checkpoint
    /// then takes that run as the table's new layer instead of copying it.
    func spill(final: Bool = false) throws(LogError) {
        do throws(SpillFailure) {
            try spillRuns(final: final)
        } catch {
            throw LogError.wrap(error.error)
        }
        buffer = [:]
        buffered = 0
    }

    /// A run that could not be written: the store is untouched (runs are named by no manifest).
    struct SpillFailure: Error {
        let error: any Error
    }

    func spillRuns(final: Bool) throws(SpillFailure) {
        do {
            for (key, items) in buffer where !items.isEmpty {
                // Sorted by id, then sequence (items were added in sequence order, so by position):
                // positions are sorted, not the items, whose ids and payloads would be copied.
                let order = Self.sortedPositions(items)
                let sums = Self.rowSums(items)
                let n = store.nextDataSegmentNumber()
                let path = joinPath(store.directory, DataSegmentFormat.fileName(n))
                var w = try DataSegmentWriter(fileSystem: store.fileSystem, path: path)
                var rw = try RowSectionWriter(into: &w)
                for (k, i) in order.enumerated() where k + 1 == order.count || items[order[k + 1]].id != items[i].id {
                    let it = items[i]
                    try it.payload.withUnsafeBytes {
                        try rw.add(it.id, sequence: it.sequence, payload: $0, sum: sums[i], into: &w)
                    }
                }
                try rw.finish(into: &w, hashIndex: final && (runs[key] ?? []).isEmpty)
                try w.finish()
                runs[key, default: []].append(
                    try RowSection(segment: try DataSegment.open(path, fileSystem: store.fileSystem)))
            }
        } catch {
            throw SpillFailure(error: error)
        }
    }

    /// Each item's `rowsums` entry (CRC and whether its fields hold encoded), in item order,
    /// worked out on every core: the run's writer then only copies them.
    static func rowSums(_ items: [(id: RecordID, sequence: UInt64, payload: [UInt8])]) -> [RowSums.Entry] {
        let chunk = 4096
        return [RowSums.Entry](unsafeUninitializedCapacity: items.count) { out, n in
            nonisolated(unsafe) let out = out
            DispatchQueue.concurrentPerform(iterations: (items.count + chunk - 1) / chunk) { c in
                for i in c * chunk..<min(items.count, (c + 1) * chunk) {
                    (out.baseAddress! + i).initialize(to: items[i].payload.withUnsafeBytes(RowSums.Entry.init))
                }
            }
            n = items.count
        }
    }

    /// The positions of `items` in row order: by id (`RowKeyOrder`: zone name, then record
    /// name, bytewise), equal ids by position.
    ///
    /// Sorted through plain entries — the zone's rank among the few zones of the batch, the
    /// record name's first 16 bytes (`RecordIDOrderKey`), the position — so the sort moves no
    /// references and reads the names again only where those 16 bytes tie.
    static func sortedPositions(_ items: [(id: RecordID, sequence: UInt64, payload: [UInt8])]) -> [Int] {
        var zones: [String] = []
        var seen = Set<String>()
        for it in items where zones.last != it.id.zoneID.zoneName && seen.insert(it.id.zoneID.zoneName).inserted {
            zones.append(it.id.zoneID.zoneName)
        }
        zones.sort { RowKeyOrder.compareBytes($0, $1) < 0 }
        let rank = Dictionary(uniqueKeysWithValues: zones.enumerated().map { ($1, UInt32($0)) })
        var entries: [SortEntry] = []
        entries.reserveCapacity(items.count)
        var last: (zone: String, rank: UInt32)? = nil
        for (i, it) in items.enumerated() {
            let z = it.id.zoneID.zoneName
            let r = last?.zone == z ? last!.rank : rank[z]!
            last = (z, r)
            entries.append(SortEntry(zone: r, name: RecordIDOrderKey(it.id), at: i))
        }
        items.withUnsafeBufferPointer { p in
            entries.sort { a, b in
                if a.zone != b.zone { return a.zone < b.zone }
                if a.name != b.name { return a.name < b.name }
                let c = RowKeyOrder.compareBytes(p[a.at].id.recordName, p[b.at].id.recordName)
                return c < 0 || (c == 0 && a.at < b.at)
            }
        }
        return entries.map(\.at)
    }

    /// An item while a run is sorted.
    struct SortEntry {
        var zone: UInt32
        var name: RecordIDOrderKey
        var at: Int
    }

    /// Merges everything into new data segments and switches the manifest (a checkpoint); the
    /// store then holds the loaded records, durably. Releases the writer token.
    @discardableResult
    public func finish(userState: [UInt8] = [], sections: SectionEncoder? = nil) throws(LogError) -> CheckpointReport {
        precondition(!done, "bulk load already finished")
        done = true
        defer { store.releaseToken() }
        do {
            try spill(final: true)
        } catch {
            removeRuns()  // runs are named by no manifest: the store is as it was
            throw error
        }
        // The sort buffer's payloads are freed: their memory goes back before the merge and the
        // index build allocate theirs.
        FreedMemory.returnToSystem()
        do {
            return try store.checkpointHoldingToken(
                userState: userState, raiseHorizon: false, rewrite: [], sections: sections, bulk: self)
        } catch {
            // Nothing is named (the checkpoint took back what it wrote, or never switched): the
            // runs go too, and the store is as it was before the load — unless the switch itself
            // failed half-way, which poisons it.
            removeRuns()
            let e = LogError.wrap(error)
            if !(error is IntactFailure) { store.cond.withLock { store.failure = e } }
            throw e
        }
    }

    /// Removes the runs written so far (and a run cut short by a failure).
    func removeRuns() {
        runs = [:]
        try? store.removeUnnamedDataSegments()  // the store stays usable if this fails (open removes them)
    }

    /// Abandons the load: the store is as it was before it began.
    public func cancel() {
        guard !done else { return }
        done = true
        removeRuns()
        store.releaseToken()
    }
}

extension RecordStore {
    /// Starts a bulk load (waits for the writer token; commits wait until it finishes).
    /// `memoryBudget` bounds the bytes buffered before a sorted run is spilled to disk.
    public func beginBulkLoad(memoryBudget: Int = 256 << 20) throws(LogError) -> BulkLoad {
        if options.readOnly { throw .readOnly }
        acquireToken()
        if let f = cond.withLock({ failure }) {
            releaseToken()
            throw .failed(reason: "\(f)")
        }
        return BulkLoad(store: self, budget: memoryBudget)
    }
}

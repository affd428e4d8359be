// StoreSnapshot: the live state — latest version of every record with the sequence number that
// wrote it, zones, schema — and how log entries change it.
//
// Two layers (docs/storage-format.md): the *base*, the mapped `rows` sections of the last
// checkpoint's data segments (one per database and record type), and the *delta*, the versions
// written after the checkpoint (replayed from the log tail or committed since). A base row is
// live unless `removed` names it (deleted or superseded after the checkpoint). Memory holds the
// delta only; the base is paged in from the mapped files as it is read.
//
// A snapshot is a value (copy-on-write dictionaries): readers get one in O(1) and see exactly
// the batches committed before it, never half of one. Indexes and change tracking are built on
// top (Cirrus façade); this type only knows "what is live and since when".

import CirrusIO
import RecordModel

/// A record version as stored: the record and the sequence number of the entry that wrote it.
public struct StoredRecord: Sendable, Hashable {
    /// The record as saved.
    public var record: Record
    /// Sequence number of the log entry that saved this version (a change token's unit).
    public var sequence: UInt64

    /// A stored version of `record`, written at `sequence`.
    public init(record: Record, sequence: UInt64) {
        self.record = record
        self.sequence = sequence
    }
}

/// A live record as kept in memory: its encoded payload (decoded on demand, so a store of
/// a million records costs ~200 bytes each, not a dictionary of values each), the sequence
/// number that wrote it, and its type (for per-type iteration without decoding).
struct LiveRecord: Sendable {
    var payload: [UInt8]
    var sequence: UInt64
    var recordType: String
}

/// A record deletion still in the log (since the last compaction), for change fetching.
public struct Tombstone: Sendable, Hashable {
    /// The deleted record's id.
    public var recordID: RecordID
    /// The deleted record's type.
    public var recordType: String
    /// Sequence number of the deletion.
    public var sequence: UInt64
}

/// The records saved and deleted after a sequence number, in sequence order: the base of
/// change tokens (`changes(since:in:limit:)`).
public struct ChangeSet: Sendable, Hashable {
    /// One change.
    public enum Change: Sendable, Hashable {
        /// The record's current version was written at `sequence`.
        case saved(RecordID, sequence: UInt64)
        /// The record was deleted at `sequence` (and not saved again since).
        case deleted(RecordID, recordType: String, sequence: UInt64)

        /// The record the change is about.
        public var recordID: RecordID {
            switch self {
            case .saved(let id, _), .deleted(let id, _, _): id
            }
        }

        /// The sequence number of the save or deletion.
        public var sequence: UInt64 {
            switch self {
            case .saved(_, let s), .deleted(_, _, let s): s
            }
        }
    }

    /// The changes, in sequence order (at most `limit`).
    public var changes: [Change]
    /// Pass this as `since` next time: the last returned change's sequence when more are
    /// coming, else the snapshot's last sequence.
    public var lastSequence: UInt64
    /// Whether changes after `lastSequence` exist beyond the limit.
    public var moreComing: Bool

    /// Ids of saved records, in sequence order.
    public var changed: [RecordID] {
        changes.compactMap { if case .saved(let id, _) = $0 { return id } else { return nil } }
    }

    /// Deleted records with their types, in sequence order.
    public var deleted: [(recordID: RecordID, recordType: String)] {
        changes.compactMap { if case .deleted(let id, let t, _) = $0 { return (id, t) } else { return nil } }
    }
}

/// One replayed or committed change, as applied to a snapshot.
enum StateChange {
    /// A record version: its key and encoded payload.
    case record(RecordID, recordType: String, payload: [UInt8])
    /// Any other entry (deletion, zone, schema, checkpoint).
    case other(LogEntry)
}

/// A table of the checkpoint: the rows of one record type in one database, mapped, in layers
/// (BaseRows.swift). A class: every snapshot and type table of the checkpoint shares one, and
/// reading a row through it retains one reference, not each of its layers' arrays.
public final class BaseTable: Sendable {
    /// The database and record type of the table.
    public let key: TableKey
    /// The table's rows across its layers, mapped from their data segments.
    public let rows: BaseRows
    /// The layers, oldest first; each layer's index segment (docs/index-segment-format.md) is
    /// nil when the façade has not written one (its indexes are then built from the rows).
    public var layers: [BaseLayer] { rows.layers }
    /// The data segments of each layer, oldest first.
    public var files: [TableFiles] { rows.layers.map(\.files) }

    /// The table `key` over `rows`.
    public init(key: TableKey, rows: BaseRows) {
        self.key = key
        self.rows = rows
    }
}

/// A consistent view of the store's live state.
///
/// ```swift
/// let snap = store.snapshot()
/// for r in snap.records(ofType: "Note") { print(r.record.recordID.recordName, r.sequence) }
/// ```
public struct StoreSnapshot: Sendable {
    /// The checkpoint's tables (empty before the first checkpoint).
    public internal(set) var base: [TableKey: BaseTable] = [:]
    /// Base tables by zone owner (derived from `base`).
    var baseByOwner: [String: [BaseTable]] = [:]
    /// Live rows in `base` at the checkpoint (rows removed since included).
    var baseRows = 0
    /// The sequence the base covers (0 before the first checkpoint).
    public internal(set) var checkpointSequence: UInt64 = 0
    /// Versions written after the checkpoint, by id, encoded (the delta).
    var live = LiveMap()
    /// Base records deleted or superseded after the checkpoint, with the sequence that did it.
    var removed = ShardedMap<UInt64>()
    /// Every record deletion since the checkpoint (base or not), and every zone deletion: what
    /// a checkpoint written in the background needs to rebase the delta onto its new base.
    var deletions = ShardedMap<UInt64>()
    var zoneDeletions: [ZoneID: UInt64] = [:]
    /// Deletions still in the log (since the last compaction), per zone, in sequence order:
    /// what "changes since a token" reports as deleted. The default zone has no change
    /// fetching in CloudKit, so its deletions are not kept.
    var tombstoneMap: [ZoneID: [Tombstone]] = [:]
    /// Created zones (not the default zone, which always exists) with the sequence that created them.
    public internal(set) var zones: [ZoneID: UInt64] = [:]
    /// The latest schema, if one was ever written.
    public internal(set) var schema: Schema?
    /// Sequence number of the latest schema change (0 if none).
    public internal(set) var schemaSequence: UInt64 = 0
    /// The highest sequence number committed.
    public internal(set) var lastSequence: UInt64 = 0
    /// Deletions at or below this sequence were dropped by compaction: a change token older than
    /// this must be treated as expired.
    public internal(set) var horizon: UInt64 = 0

    /// An empty snapshot: no records, no zones, no schema, sequence 0.
    public init() {}

    /// Deletions of records in `zone` still in the log, in sequence order (compaction drops
    /// them and raises `horizon`). A record deleted and saved again keeps its tombstone; see
    /// `changes(since:in:limit:)` for the net view.
    public func tombstones(in zone: ZoneID) -> [Tombstone] { tombstoneMap[zone] ?? [] }

    /// The number of live records.
    public var recordCount: Int { baseRows - removed.count + live.count }

    /// Installs checkpoint tables as the base (the delta must be empty or newer than them).
    mutating func setBase(_ tables: [BaseTable], sequence: UInt64) {
        base = [:]
        baseByOwner = [:]
        baseRows = 0
        for t in tables {
            base[t.key] = t
            baseByOwner[t.key.owner, default: []].append(t)
            baseRows += t.rows.liveCount
        }
        checkpointSequence = sequence
    }

    /// Where a stored id lives in the base (whether or not it was removed since).
    func baseLocation(_ id: RecordID) -> (BaseTable, Int)? {
        guard let tables = baseByOwner[id.zoneID.ownerName] else { return nil }
        for t in tables { if let i = t.rows.row(of: id) { return (t, i) } }
        return nil
    }

    /// Calls `body` with every live record's id, sequence, type and encoded bytes (base rows
    /// not removed, then the delta), without decoding.
    public func forEachEncoded(_ body: (RecordID, UInt64, String, UnsafeRawBufferPointer) throws -> Void) rethrows {
        for t in base.values {
            let dead = t.rows.dead
            let anyDead = dead.count > 0
            for i in 0..<t.rows.count {
                if anyDead && dead.contains(i) { continue }
                guard let id = t.rows.recordID(i, owner: t.key.owner), removed[id] == nil, let p = t.rows.payload(i)
                else { continue }
                try body(id, t.rows.sequence(i), t.key.recordType, p)
            }
        }
        for (id, l) in live { try l.payload.withUnsafeBytes { try body(id, l.sequence, l.recordType, $0) } }
    }

    /// The ids of the live records (no decoding).
    public var recordIDs: [RecordID] {
        var out: [RecordID] = []
        out.reserveCapacity(recordCount)
        forEachEncoded { id, _, _, _ in out.append(id) }
        return out
    }

    /// The sequence number of a record's live version (no decoding).
    public func sequence(of id: RecordID) -> UInt64? {
        if let l = live[id] { return l.sequence }
        guard removed[id] == nil, let (t, i) = baseLocation(id) else { return nil }
        return t.rows.sequence(i)
    }

    /// The type of a live record (no decoding).
    public func recordType(of id: RecordID) -> String? {
        if let l = live[id] { return l.recordType }
        guard removed[id] == nil, let (t, _) = baseLocation(id) else { return nil }
        return t.key.recordType
    }

    /// The live version of a record (decoded now), nil if absent. Throws, naming the file and
    /// offset, when its bytes do not decode (a mapped row is not checked against its block CRC on
    /// every read): a damaged record is an error, never absent.
    public func record(_ id: RecordID) throws(LogError) -> StoredRecord? {
        if let l = live[id] {
            do {
                return StoredRecord(record: try RecordCodec.decode(l.payload), sequence: l.sequence)
            } catch {
                throw .badSegment(
                    path: "the log's record \(id.recordName)", offset: error.offset, reason: error.message)
            }
        }
        guard removed[id] == nil, let (t, i) = baseLocation(id) else { return nil }
        return StoredRecord(record: try t.rows.record(i), sequence: t.rows.sequence(i))
    }

    /// Every live record, decoded (O(n); prefer `records(ofType:in:)` or `record(_:)`). Throws
    /// when one does not decode.
    public var records: [RecordID: StoredRecord] {
        get throws {
            var out = [RecordID: StoredRecord](minimumCapacity: recordCount)
            try forEachRecord { out[$0.record.recordID] = $0 }
            return out
        }
    }

    /// Calls `body` with every live record, decoded one at a time, in no particular order —
    /// the way to bulk-load indexes without holding every decoded record at once. A record that
    /// does not decode throws (a `LogError` naming the record), never skipped in silence.
    public func forEachRecord(_ body: (StoredRecord) throws -> Void) throws {
        try forEachEncoded { id, seq, _, p in
            let r: Record
            do throws(CodecError) { r = try RecordCodec.decode(p) } catch {
                throw LogError.badSegment(
                    path: "the stored record \(id.recordName) (\(id.zoneID.ownerName))", offset: error.offset,
                    reason: "does not decode: \(error.message)")
            }
            try body(StoredRecord(record: r, sequence: seq))
        }
    }

    /// Ids of live records (optionally of one type and/or zone) in sequence order, without decoding.
    public func orderedIDs(ofType type: String? = nil, in zone: ZoneID? = nil) -> [RecordID] {
        var pairs: [(UInt64, RecordID)] = []
        forEachEncoded { id, seq, t, _ in
            if (type == nil || t == type) && (zone == nil || id.zoneID == zone) { pairs.append((seq, id)) }
        }
        pairs.sort { $0.0 < $1.0 }
        return pairs.map(\.1)
    }

    /// What changed after `sequence` (optionally in one zone, at most `limit` > 0 changes): saved
    /// and deleted record ids in sequence order, without decoding any record. Nil when
    /// `sequence` is below `horizon` — compaction dropped deletions that old, so the caller must
    /// report an expired token (CKError 21). O(live records + tombstones) per call.
    public func changes(since sequence: UInt64, in zone: ZoneID? = nil, limit: Int? = nil) -> ChangeSet? {
        guard sequence >= horizon else { return nil }
        var all: [ChangeSet.Change] = []
        forEachEncoded { id, seq, _, _ in
            if seq > sequence && (zone == nil || id.zoneID == zone) { all.append(.saved(id, sequence: seq)) }
        }
        // Net deletions: the latest tombstone per record, unless the record was saved again.
        var latest: [RecordID: Tombstone] = [:]
        for (z, list) in tombstoneMap where zone == nil || z == zone {
            for t in list where t.sequence > sequence { latest[t.recordID] = t }
        }
        for (id, t) in latest where (self.sequence(of: id) ?? 0) < t.sequence {
            all.append(.deleted(id, recordType: t.recordType, sequence: t.sequence))
        }
        all.sort { $0.sequence < $1.sequence }
        if let limit, limit > 0, all.count > limit {
            let page = Array(all.prefix(limit))
            return ChangeSet(changes: page, lastSequence: page.last?.sequence ?? sequence, moreComing: true)
        }
        return ChangeSet(changes: all, lastSequence: lastSequence, moreComing: false)
    }

    /// Live records, optionally only of one type and/or zone, in sequence order, decoded.
    /// O(n) with a decode per result; for change tracking use `changes(since:in:limit:)`.
    public func records(ofType type: String? = nil, in zone: ZoneID? = nil) throws(LogError) -> [StoredRecord] {
        var out: [StoredRecord] = []
        for id in orderedIDs(ofType: type, in: zone) { if let r = try record(id) { out.append(r) } }
        return out
    }

    /// Live record counts per record type.
    public var countsByType: [String: Int] {
        var c: [String: Int] = [:]
        forEachEncoded { _, _, t, _ in c[t, default: 0] += 1 }
        return c
    }

    /// Live record counts per zone.
    public var countsByZone: [ZoneID: Int] {
        var c: [ZoneID: Int] = [:]
        forEachEncoded { id, _, _, _ in c[id.zoneID, default: 0] += 1 }
        return c
    }

    /// Every record changed since the checkpoint: its checkpoint version (nil if it is new
    /// since) and its current version (nil if deleted since). Empty right after a checkpoint.
    public func deltaChanges() throws(LogError) -> [(id: RecordID, base: StoredRecord?, current: StoredRecord?)] {
        var out: [(RecordID, StoredRecord?, StoredRecord?)] = []
        out.reserveCapacity(live.count + removed.count)
        func baseVersion(_ id: RecordID) throws(LogError) -> StoredRecord? {
            guard removed[id] != nil, let (t, i) = baseLocation(id) else { return nil }
            return StoredRecord(record: try t.rows.record(i), sequence: t.rows.sequence(i))
        }
        for (id, _) in live { out.append((id, try baseVersion(id), try record(id))) }
        for (id, _) in removed where live[id] == nil { out.append((id, try baseVersion(id), nil)) }
        return out
    }

    /// The records that changed after `earlier` (an older snapshot of the same store, before or
    /// after a checkpoint between them), each with its version there and here (nil: absent) —
    /// what a checkpoint written beside commits applies to structures built over its new base.
    /// O(delta + changes); a zone deleted since adds every record `earlier` had in it.
    public func changes(
        since earlier: StoreSnapshot
    ) throws(LogError) -> [(id: RecordID, old: StoredRecord?, new: StoredRecord?)] {
        let s = earlier.lastSequence
        guard lastSequence > s else { return [] }
        var ids = Set<RecordID>()
        for (id, l) in live where l.sequence > s { ids.insert(id) }
        for (id, seq) in deletions where seq > s { ids.insert(id) }
        for (z, seq) in zoneDeletions where seq > s {
            for id in earlier.orderedIDs(in: z) { ids.insert(id) }
        }
        var out: [(id: RecordID, old: StoredRecord?, new: StoredRecord?)] = []
        out.reserveCapacity(ids.count)
        for id in ids {
            let old = try earlier.record(id)
            let new = try record(id)
            if old != nil || new != nil { out.append((id, old, new)) }
        }
        return out
    }

    /// The state after a checkpoint that covers everything up to `sequence` with `tables`:
    /// this snapshot's small state, the delta entries newer than `sequence`, and the new base
    /// rows those entries (or later deletions of records and zones) replace.
    func rebased(onto tables: [BaseTable], sequence: UInt64, horizon: UInt64) -> StoreSnapshot {
        var next = StoreSnapshot()
        next.setBase(tables, sequence: sequence)
        next.zones = zones
        next.schema = schema
        next.schemaSequence = schemaSequence
        next.lastSequence = lastSequence
        next.horizon = horizon
        next.tombstoneMap = tombstoneMap.compactMapValues { list in
            let kept = list.filter { $0.sequence > horizon }
            return kept.isEmpty ? nil : kept
        }
        for (id, l) in live where l.sequence > sequence {
            next.live[id] = l
            if next.baseLocation(id) != nil { next.removed[id] = l.sequence }
        }
        for (id, seq) in deletions where seq > sequence {
            next.deletions[id] = seq
            if next.live[id] == nil, next.baseLocation(id) != nil { next.removed[id] = seq }
        }
        for (z, seq) in zoneDeletions where seq > sequence {
            next.zoneDeletions[z] = seq
            for t in next.baseByOwner[z.ownerName] ?? [] {
                for i in t.rows.rows(inZone: z.zoneName) {
                    if let id = t.rows.recordID(i, owner: z.ownerName), next.removed[id] == nil {
                        next.removed[id] = seq
                    }
                }
            }
        }
        return next
    }

    /// Marks a base record removed (deleted or superseded) at `sequence`, if it is in the base.
    mutating func removeFromBase(_ id: RecordID, sequence: UInt64) {
        guard checkpointSequence > 0, removed[id] == nil, baseLocation(id) != nil else { return }
        removed[id] = sequence
    }

    /// Applies one committed change.
    mutating func apply(_ change: StateChange, sequence: UInt64) {
        switch change {
        case .record(let id, let type, let payload):
            removeFromBase(id, sequence: sequence)
            live[id] = LiveRecord(payload: payload, sequence: sequence, recordType: type)
        case .other(let entry):
            switch entry {
            case .recordVersion(let r):
                removeFromBase(r.recordID, sequence: sequence)
                live[r.recordID] = LiveRecord(
                    payload: RecordCodec.encode(r), sequence: sequence, recordType: r.recordType)
            case .deletion(let id, let type):
                let existedType = recordType(of: id)
                removeFromBase(id, sequence: sequence)
                live[id] = nil
                deletions[id] = sequence
                if !id.zoneID.isDefaultZone {
                    tombstoneMap[id.zoneID, default: []].append(
                        Tombstone(recordID: id, recordType: existedType ?? type, sequence: sequence))
                }
            case .zoneCreate(let z): zones[z] = sequence
            case .zoneDelete(let z):
                zones[z] = nil
                zoneDeletions[z] = sequence
                live.removeAll { id, _ in id.zoneID == z }
                for t in baseByOwner[z.ownerName] ?? [] {
                    for i in t.rows.rows(inZone: z.zoneName) {
                        if let id = t.rows.recordID(i, owner: z.ownerName), removed[id] == nil {
                            removed[id] = sequence
                        }
                    }
                }
                tombstoneMap[z] = nil
            case .schemaChange(let s):
                schema = s
                schemaSequence = sequence
            case .checkpoint(let hi, let h):
                lastSequence = max(lastSequence, hi)
                horizon = max(horizon, h)
                tombstoneMap = tombstoneMap.compactMapValues { list in
                    let kept = list.filter { $0.sequence > h }
                    return kept.isEmpty ? nil : kept
                }
            }
        }
        lastSequence = max(lastSequence, sequence)
    }
}

/// A committed entry with its sequence number, as passed to commit observers.
public struct CommittedEntry: Sendable, Hashable {
    /// The entry's sequence number.
    public var sequence: UInt64
    /// The entry as committed.
    public var entry: LogEntry
}

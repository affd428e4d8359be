// StoreSnapshot: the live state rebuilt from the log — latest version of every record with the
// sequence number that wrote it, zones, schema — and how log entries change it.
//
// A snapshot is a value (copy-on-write dictionaries): readers get one in O(1) and see exactly
// the batches committed before it, never half of one. Indexes and change tracking are built on
// top (Cirrus façade); this type only knows "what is live and since when".

import RecordModel

/// A record version as stored: the record and the sequence number of the entry that wrote it.
public struct StoredRecord: Sendable, Hashable {
    public var record: Record
    /// Sequence number of the log entry that saved this version (a change token's unit).
    public var sequence: UInt64

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
    public var recordID: RecordID
    public var recordType: String
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

        public var recordID: RecordID {
            switch self {
            case .saved(let id, _), .deleted(let id, _, _): id
            }
        }

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

/// A consistent view of the store's live state.
///
/// ```swift
/// let snap = store.snapshot()
/// for r in snap.records(ofType: "Note") { print(r.record.recordID.recordName, r.sequence) }
/// ```
public struct StoreSnapshot: Sendable {
    /// Live records by id, encoded.
    var live = LiveMap()
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

    public init() {}

    /// Deletions of records in `zone` still in the log, in sequence order (compaction drops
    /// them and raises `horizon`). A record deleted and saved again keeps its tombstone; see
    /// `changes(since:in:limit:)` for the net view.
    public func tombstones(in zone: ZoneID) -> [Tombstone] { tombstoneMap[zone] ?? [] }

    /// The number of live records.
    public var recordCount: Int { live.count }

    /// The ids of the live records (no decoding).
    public var recordIDs: some Sequence<RecordID> { live.keys }

    /// The sequence number of a record's live version (no decoding).
    public func sequence(of id: RecordID) -> UInt64? { live[id]?.sequence }

    /// The live version of a record (decoded now). Nil if absent, or if its bytes do not decode
    /// (impossible for a CRC-checked frame unless the codec has a bug; `verify` decodes all).
    public func record(_ id: RecordID) -> StoredRecord? {
        guard let l = live[id], let r = try? RecordCodec.decode(l.payload) else { return nil }
        return StoredRecord(record: r, sequence: l.sequence)
    }

    /// Every live record, decoded (O(n); prefer `records(ofType:in:)` or `record(_:)`).
    public var records: [RecordID: StoredRecord] {
        var out = [RecordID: StoredRecord](minimumCapacity: live.count)
        for (id, l) in live {
            if let r = try? RecordCodec.decode(l.payload) { out[id] = StoredRecord(record: r, sequence: l.sequence) }
        }
        return out
    }

    /// Calls `body` with every live record, decoded one at a time, in no particular order —
    /// the way to bulk-load indexes without holding every decoded record at once.
    public func forEachRecord(_ body: (StoredRecord) throws -> Void) rethrows {
        for (_, l) in live {
            if let r = try? RecordCodec.decode(l.payload) { try body(StoredRecord(record: r, sequence: l.sequence)) }
        }
    }

    /// Ids of live records (optionally of one type and/or zone) in sequence order, without decoding.
    public func orderedIDs(ofType type: String? = nil, in zone: ZoneID? = nil) -> [RecordID] {
        var pairs: [(UInt64, RecordID)] = []
        for (id, l) in live where (type == nil || l.recordType == type) && (zone == nil || id.zoneID == zone) {
            pairs.append((l.sequence, id))
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
        for (id, l) in live where l.sequence > sequence && (zone == nil || id.zoneID == zone) {
            all.append(.saved(id, sequence: l.sequence))
        }
        // Net deletions: the latest tombstone per record, unless the record was saved again.
        var latest: [RecordID: Tombstone] = [:]
        for (z, list) in tombstoneMap where zone == nil || z == zone {
            for t in list where t.sequence > sequence { latest[t.recordID] = t }
        }
        for (id, t) in latest where (live[id]?.sequence ?? 0) < t.sequence {
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
    public func records(ofType type: String? = nil, in zone: ZoneID? = nil) -> [StoredRecord] {
        orderedIDs(ofType: type, in: zone).compactMap { record($0) }
    }

    /// Live record counts per record type.
    public var countsByType: [String: Int] {
        var c: [String: Int] = [:]
        for r in live.values { c[r.recordType, default: 0] += 1 }
        return c
    }

    /// Live record counts per zone.
    public var countsByZone: [ZoneID: Int] {
        var c: [ZoneID: Int] = [:]
        for id in live.keys { c[id.zoneID, default: 0] += 1 }
        return c
    }

    /// Applies one committed change.
    mutating func apply(_ change: StateChange, sequence: UInt64) {
        switch change {
        case .record(let id, let type, let payload):
            live[id] = LiveRecord(payload: payload, sequence: sequence, recordType: type)
        case .other(let entry):
            switch entry {
            case .recordVersion(let r):
                live[r.recordID] = LiveRecord(payload: RecordCodec.encode(r), sequence: sequence, recordType: r.recordType)
            case .deletion(let id, let type):
                let existed = live[id]
                live[id] = nil
                if !id.zoneID.isDefaultZone {
                    tombstoneMap[id.zoneID, default: []].append(
                        Tombstone(recordID: id, recordType: existed?.recordType ?? type, sequence: sequence))
                }
            case .zoneCreate(let z): zones[z] = sequence
            case .zoneDelete(let z):
                zones[z] = nil
                live.removeAll { id, _ in id.zoneID == z }
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
    public var sequence: UInt64
    public var entry: LogEntry
}

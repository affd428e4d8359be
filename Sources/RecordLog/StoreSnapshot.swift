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

/// A consistent view of the store's live state.
///
/// ```swift
/// let snap = store.snapshot()
/// for r in snap.records(ofType: "Note") { print(r.record.recordID.recordName, r.sequence) }
/// ```
public struct StoreSnapshot: Sendable {
    /// Live records by id.
    public internal(set) var records: [RecordID: StoredRecord] = [:]
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

    /// The live version of a record.
    public func record(_ id: RecordID) -> StoredRecord? { records[id] }

    /// Live records, optionally only of one type and/or zone, in sequence order.
    public func records(ofType type: String? = nil, in zone: ZoneID? = nil) -> [StoredRecord] {
        records.values.filter { (type == nil || $0.record.recordType == type) && (zone == nil || $0.record.recordID.zoneID == zone) }
            .sorted { $0.sequence < $1.sequence }
    }

    /// Live record counts per record type.
    public var countsByType: [String: Int] {
        var c: [String: Int] = [:]
        for r in records.values { c[r.record.recordType, default: 0] += 1 }
        return c
    }

    /// Live record counts per zone.
    public var countsByZone: [ZoneID: Int] {
        var c: [ZoneID: Int] = [:]
        for r in records.values { c[r.record.recordID.zoneID, default: 0] += 1 }
        return c
    }

    /// Applies one committed entry.
    mutating func apply(_ entry: LogEntry, sequence: UInt64) {
        switch entry {
        case .recordVersion(let r): records[r.recordID] = StoredRecord(record: r, sequence: sequence)
        case .deletion(let id, _): records[id] = nil
        case .zoneCreate(let z): zones[z] = sequence
        case .zoneDelete(let z):
            zones[z] = nil
            records = records.filter { $0.key.zoneID != z }
        case .schemaChange(let s):
            schema = s
            schemaSequence = sequence
        case .checkpoint(let hi, let h):
            lastSequence = max(lastSequence, hi)
            horizon = max(horizon, h)
        }
        lastSequence = max(lastSequence, sequence)
    }
}

/// A committed entry with its sequence number, as passed to commit observers.
public struct CommittedEntry: Sendable, Hashable {
    public var sequence: UInt64
    public var entry: LogEntry
}

// Options of a RecordStore: durability, read-only, repair, segment size, the injected clock,
// and the operations a commit is made of.

import CirrusIO
import RecordModel

/// When a commit is acknowledged relative to fsync.
public enum Durability: Sendable, Hashable {
    /// fsync before every acknowledgement (concurrent commits share one fsync: group commit).
    case everyCommit
    /// Written to the OS on every commit, fsynced when `milliseconds` have passed or `bytes`
    /// are unsynced, whichever is first, and on close. A power loss can lose that window.
    case batched(milliseconds: Int, bytes: Int)
    /// Buffered in memory, written in 1 MiB pieces, fsynced only on `sync()`, compaction and
    /// close. For bulk loads and benchmarks.
    case none
}

/// How a store is opened.
///
/// ```swift
/// let store = try RecordStore.open(directory: "db", options: .init(durability: .everyCommit))
/// ```
public struct RecordStoreOptions: Sendable {
    /// When commits are acknowledged relative to fsync (every commit by default).
    public var durability: Durability
    /// Open without changing any file (no tail truncation, no cleanup); commits fail.
    public var readOnly: Bool
    /// Salvage every intact frame after corruption, then rewrite the store by compaction.
    public var repair: Bool
    /// A segment is closed and a new one started once it exceeds this many bytes.
    public var segmentSize: Int
    /// Check CloudKit's rules on every saved record (import turns this off after checking itself).
    public var validateRecords: Bool
    /// Wall and monotonic time (the system clock unless a test injects one).
    public var clock: any LogClock
    /// Read-only stores: map a layer's index segment at its first use (`BaseLayer.indexes`)
    /// instead of at open, and leave a segment that does not open to whoever uses it
    /// (`IndexSegment.openError`) instead of the open report. Off by default.
    public var indexSegmentsOnFirstUse = false

    /// Options; each one left out takes its default: fsync every commit, writable, no repair, 64 MiB
    /// segments, records validated, the system clock.
    public init(
        durability: Durability = .everyCommit, readOnly: Bool = false, repair: Bool = false,
        segmentSize: Int = 64 << 20, validateRecords: Bool = true, clock: any LogClock = SystemClock()
    ) {
        self.durability = durability
        self.readOnly = readOnly
        self.repair = repair
        self.segmentSize = segmentSize
        self.validateRecords = validateRecords
        self.clock = clock
    }
}

/// One operation of a commit. A commit's operations are applied all together or not at all.
public enum LogOperation: Sendable, Hashable {
    /// Saves (creates or replaces) a record version as given.
    case save(Record)
    /// Deletes a record (a no-op on replay if it does not exist).
    case delete(RecordID, recordType: String)
    /// Creates a zone.
    case createZone(ZoneID)
    /// Deletes a zone and every record in it.
    case deleteZone(ZoneID)
    /// Replaces the schema.
    case setSchema(Schema)

    var entry: LogEntry {
        switch self {
        case .save(let r): .recordVersion(r)
        case .delete(let id, let t): .deletion(id, recordType: t)
        case .createZone(let z): .zoneCreate(z)
        case .deleteZone(let z): .zoneDelete(z)
        case .setSchema(let s): .schemaChange(s)
        }
    }
}

/// Counters and sizes of an open store.
public struct StoreStats: Sendable, Hashable {
    /// Live log segments.
    public var segments: Int
    /// Bytes in the live log segments.
    public var logBytes: Int
    /// Live records.
    public var liveRecords: Int
    /// Zones created and not deleted (the default zone is not counted).
    public var zones: Int
    /// The highest committed sequence number.
    public var lastSequence: UInt64
    /// Commits acknowledged since open.
    public var commits: Int
    /// Groups written (several concurrent commits share one group and one fsync).
    public var groups: Int
    /// fsync calls on segment files since open.
    public var syncs: Int
    /// Payload bytes of record versions written since open (the raw encoded record size).
    public var recordPayloadBytes: Int
}

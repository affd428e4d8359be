// OpenReport and VerifyReport: what open/verify found in the files — per segment, torn tail,
// corruption, what repair dropped — as plain values (rendered by the CLI).

import CirrusIO
import RecordModel

/// One segment as read on open.
public struct SegmentReport: Sendable, Hashable {
    /// The segment's number (its file is `Manifest.segmentFileName(number)`).
    public var number: UInt64
    /// The segment file's size in bytes.
    public var bytes: Int
    /// Valid frames read (including those of a dropped torn batch).
    public var frames: Int
    /// Complete batches applied.
    public var batches: Int
    /// Milliseconds since 1970 from the segment header; nil when the header could not be read.
    public var createdMilliseconds: Int64?
    /// Whether the header says compaction wrote the segment.
    public var compacted: Bool
}

/// A torn tail: the end of the last segment that did not finish writing.
public struct TornTail: Sendable, Hashable {
    /// The segment with the torn tail.
    public var segment: UInt64
    /// Where the cut is (the end of the last complete batch).
    public var offset: Int
    /// Bytes after the cut (the unfinished batch, or a partial frame).
    public var bytesDropped: Int
    /// Valid frames of an unfinished batch that were dropped with it.
    public var framesDropped: Int
    /// Whether the file was actually truncated (false on a read-only open).
    public var truncated: Bool
}

/// Damage that is not a torn tail.
public struct Corruption: Sendable, Hashable, CustomStringConvertible {
    /// The damaged segment.
    public var segment: UInt64
    /// Byte offset in the segment where the damage starts.
    public var offset: Int
    /// Bytes skipped up to the next valid frame (repair) or to the end of the segment.
    public var length: Int
    /// What is wrong, e.g. a checksum mismatch.
    public var reason: String
    /// Valid frames dropped because their batch was cut by the damage.
    public var framesDropped: Int
    /// The damaged file when it is not a log segment (a data segment, the manifest); nil for a
    /// log segment (`segment` names it).
    public var file: String?

    /// Damage in log segment `segment` (or, with `file`, in that file), at `offset`.
    public init(
        segment: UInt64, offset: Int, length: Int, reason: String, framesDropped: Int, file: String? = nil
    ) {
        self.segment = segment
        self.offset = offset
        self.length = length
        self.reason = reason
        self.framesDropped = framesDropped
        self.file = file
    }

    /// One line: segment file, offset, reason, bytes and frames dropped (damage outside the log's
    /// segments — segment 0 — is its reason alone, which names the file and offset).
    public var description: String {
        if segment == 0 { return reason }
        return
            "segment \(Manifest.segmentFileName(segment)) at byte \(offset): \(reason) (\(length) bytes, "
            + "\(framesDropped) frames dropped)"
    }
}

/// Derived data — an index segment or section, a row hash table — that failed its checks at open:
/// it is rebuilt from the rows it derives from (in memory; the next checkpoint of a writable store
/// writes it anew). Nothing is lost and reads go on, but the file is damaged and `verify` says so.
public struct OpenWarning: Sendable, Hashable, CustomStringConvertible {
    /// The damaged file.
    public var path: String
    /// Byte offset in the file where the damage was found.
    public var offset: Int
    /// What is wrong, e.g. "no footer magic (a torn or truncated write)".
    public var reason: String
    /// What the open does instead, e.g. "the indexes of __defaultOwner__/Place are rebuilt from its rows".
    public var consequence: String

    /// A warning about `path` at `offset`.
    public init(path: String, offset: Int, reason: String, consequence: String) {
        self.path = path
        self.offset = offset
        self.reason = reason
        self.consequence = consequence
    }

    /// A warning about the damage `error` names (its file and offset when it names them).
    public init(_ error: LogError, consequence: String) {
        if case .badSegment(let path, let offset, let reason) = error {
            self.init(path: path, offset: offset, reason: reason, consequence: consequence)
        } else {
            self.init(path: "", offset: 0, reason: "\(error)", consequence: consequence)
        }
    }

    /// One line: file, offset, reason and what is done instead.
    public var description: String { "\(path) at byte \(offset): \(reason); \(consequence)" }
}

/// What opening the store found and did.
public struct OpenReport: Sendable, Hashable {
    /// An empty report: nothing read, nothing found (a container on another engine).
    public init() {}

    /// Each segment read, in order.
    public var segments: [SegmentReport] = []
    /// The torn tail of the last segment, if it did not finish writing.
    public var tornTail: TornTail?
    /// Damage other than a torn tail, in file order.
    public var corruptions: [Corruption] = []
    /// Derived data that failed its checks and is rebuilt (nothing lost), in the order found.
    public var warnings: [OpenWarning] = []
    /// Files removed because no manifest listed them (an unfinished compaction or rotation).
    public var removedFiles: [String] = []
    /// True when the store was created by this open.
    public var created = false
    /// True when repair rewrote the store after salvaging.
    public var repaired = false

    /// Valid frames read, over every segment.
    public var frames: Int { segments.reduce(0) { $0 + $1.frames } }
    /// Bytes read, over every segment.
    public var bytes: Int { segments.reduce(0) { $0 + $1.bytes } }
    /// No torn tail, no corruption and no damaged derived data.
    public var isClean: Bool { tornTail == nil && corruptions.isEmpty && warnings.isEmpty }
}

/// What `RecordStore.verify` reports: the files and the live content, without changing anything.
public struct VerifyReport: Sendable, Hashable {
    /// What the read-only open found.
    public var open: OpenReport
    /// Records live at the last sequence.
    public var liveRecords: Int
    /// Live records per record type.
    public var recordsByType: [String: Int]
    /// Live records per zone.
    public var recordsByZone: [ZoneID: Int]
    /// Zones created and not deleted (the default zone is not counted).
    public var zones: Int
    /// The highest sequence number committed.
    public var lastSequence: UInt64
    /// Damage found (torn tail or corruption). A torn tail alone is the normal result of a
    /// crash and is repaired by a writable open, but the files are not clean until then.
    public var isDamaged: Bool { !open.isClean }
}

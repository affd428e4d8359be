// OpenReport and VerifyReport: what open/verify found in the files — per segment, torn tail,
// corruption, what repair dropped — as plain values (rendered by the CLI).

import RecordModel

/// One segment as read on open.
public struct SegmentReport: Sendable, Hashable {
    public var number: UInt64
    public var bytes: Int
    /// Valid frames read (including those of a dropped torn batch).
    public var frames: Int
    /// Complete batches applied.
    public var batches: Int
    public var createdMilliseconds: Int64?
    public var compacted: Bool
}

/// A torn tail: the end of the last segment that did not finish writing.
public struct TornTail: Sendable, Hashable {
    public var segment: UInt64
    /// Where the cut is (the end of the last complete batch).
    public var offset: Int
    public var bytesDropped: Int
    /// Valid frames of an unfinished batch that were dropped with it.
    public var framesDropped: Int
    /// Whether the file was actually truncated (false on a read-only open).
    public var truncated: Bool
}

/// Damage that is not a torn tail.
public struct Corruption: Sendable, Hashable, CustomStringConvertible {
    public var segment: UInt64
    public var offset: Int
    /// Bytes skipped up to the next valid frame (repair) or to the end of the segment.
    public var length: Int
    public var reason: String
    /// Valid frames dropped because their batch was cut by the damage.
    public var framesDropped: Int

    public var description: String {
        "segment \(Manifest.segmentFileName(segment)) at byte \(offset): \(reason) (\(length) bytes, \(framesDropped) frames dropped)"
    }
}

/// What opening the store found and did.
public struct OpenReport: Sendable, Hashable {
    public var segments: [SegmentReport] = []
    public var tornTail: TornTail?
    public var corruptions: [Corruption] = []
    /// Files removed because no manifest listed them (an unfinished compaction or rotation).
    public var removedFiles: [String] = []
    /// True when the store was created by this open.
    public var created = false
    /// True when repair rewrote the store after salvaging.
    public var repaired = false

    public var frames: Int { segments.reduce(0) { $0 + $1.frames } }
    public var bytes: Int { segments.reduce(0) { $0 + $1.bytes } }
    /// No torn tail and no corruption.
    public var isClean: Bool { tornTail == nil && corruptions.isEmpty }
}

/// What `RecordStore.verify` reports: the files and the live content, without changing anything.
public struct VerifyReport: Sendable, Hashable {
    public var open: OpenReport
    public var liveRecords: Int
    public var recordsByType: [String: Int]
    public var recordsByZone: [ZoneID: Int]
    public var zones: Int
    public var lastSequence: UInt64
    /// Damage found (torn tail or corruption). A torn tail alone is the normal result of a
    /// crash and is repaired by a writable open, but the files are not clean until then.
    public var isDamaged: Bool { !open.isClean }
}

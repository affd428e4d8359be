// RecordStore+Compaction: rewrite the live state into one new segment and switch atomically.
//
// Steps (docs/log-format.md, "Compaction"): new segment with every live entry in sequence
// order + a checkpoint, fsync, fsync dir → CURRENT.tmp listing only it, fsync, rename, fsync dir
// (the switch) → remove old segments, fsync dir. A crash before the rename leaves the old
// manifest (the new file is unlisted and removed on open); after it, the new one. Commits wait
// while compaction holds the writer token.

import CirrusIO
import RecordModel

/// What a compaction did.
public struct CompactionReport: Sendable, Hashable {
    /// The log segments before compaction.
    public var segmentsBefore: [UInt64]
    /// The segment that now holds everything; in a checkpointed store, the last log segment.
    public var segmentAfter: UInt64
    /// Bytes of the old log segments; 0 in a checkpointed store, where compaction is a checkpoint.
    public var bytesBefore: Int
    /// Bytes of the new segment; in a checkpointed store, bytes of the new data segments.
    public var bytesAfter: Int
    /// Live records after compaction.
    public var liveRecords: Int
}

extension RecordStore {
    /// Rewrites the live records, zones and schema into a new segment and deletes the old ones.
    /// Deletions are not carried over (see `StoreSnapshot.horizon`).
    @discardableResult
    public func compact() throws(LogError) -> CompactionReport {
        if options.readOnly { throw .readOnly }
        return try withWriterToken { try compactHoldingToken() }
    }

    func compactHoldingToken() throws -> CompactionReport {
        if cond.withLock({ state.checkpointSequence > 0 }) {
            // With data segments, compaction is a checkpoint that also forgets deletions: the log
            // then holds nothing, and every live version is in the segments.
            let before = segments
            let r = try checkpointHoldingToken(
                userState: cond.withLock { userState } ?? [], raiseHorizon: true, rewrite: [], sections: nil)
            return CompactionReport(
                segmentsBefore: before, segmentAfter: segments.last ?? 0, bytesBefore: 0, bytesAfter: r.bytesWritten,
                liveRecords: cond.withLock { state.recordCount })
        }
        try flushBuffer()
        try syncFile()
        let snap = cond.withLock { state }
        let before = segments
        // Report only: a size that cannot be read counts 0.
        let bytesBefore = before.reduce(0) { $0 + ((try? fileSystem.size(segmentPath($1))) ?? 0) }
        let n = (before.last ?? 0) + 1
        let f = try createSegment(n, flags: LogFormat.segmentFlagCompacted)

        // Live records are copied as their encoded payloads, never decoded.
        var items: [(UInt64, StateChange)] = []
        items.reserveCapacity(snap.live.count + snap.zones.count + 2)
        if let s = snap.schema { items.append((snap.schemaSequence, .other(.schemaChange(s)))) }
        for (z, seq) in snap.zones { items.append((seq, .other(.zoneCreate(z)))) }
        for (id, l) in snap.live {
            items.append((l.sequence, .record(id, recordType: l.recordType, payload: l.payload)))
        }
        items.sort { $0.0 < $1.0 }
        items.append(
            (snap.lastSequence, .other(.checkpoint(highestSequence: snap.lastSequence, horizon: snap.lastSequence))))

        var out: [UInt8] = []
        out.reserveCapacity(1 << 20)
        var w = ByteWriter(capacity: 256)
        var size = LogFormat.segmentHeaderSize
        let both = LogFormat.flagFirst | LogFormat.flagLast
        for (seq, change) in items {
            switch change {
            case .record(_, _, let payload):
                Frame.append(kind: .recordVersion, sequence: seq, flags: both, payload: payload, to: &out)
            case .other(let e):
                w.bytes.removeAll(keepingCapacity: true)
                try e.encodePayload(into: &w)  // entries that were written once encode again
                Frame.append(kind: e.kind, sequence: seq, flags: both, payload: w.bytes, to: &out)
            }
            if out.count >= 1 << 20 {
                try f.append(out)
                size += out.count
                out.removeAll(keepingCapacity: true)
            }
        }
        try f.append(out)
        size += out.count
        try f.sync()
        try fileSystem.syncDirectory(directory)
        try fileSystem.writeAtomically(joinPath(directory, Manifest.fileName), Manifest(segments: [n]).encoded)

        try? file?.close()  // the old segment is retired, every byte of it synced above
        file = f
        cond.withLock { segments = [n] }
        segmentSize = size
        for o in before { try fileSystem.remove(segmentPath(o)) }
        try fileSystem.syncDirectory(directory)
        cond.withLock {
            state.apply(
                .other(.checkpoint(highestSequence: snap.lastSequence, horizon: snap.lastSequence)),
                sequence: snap.lastSequence)
        }
        return CompactionReport(
            segmentsBefore: before, segmentAfter: n, bytesBefore: bytesBefore, bytesAfter: size,
            liveRecords: snap.live.count)
    }
}

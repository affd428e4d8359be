// SegmentScanner: reads one segment's bytes into complete batches, classifying damage as a torn
// tail (nothing valid after it) or corruption (a valid frame follows), and — in repair mode —
// resynchronising on the next valid frame. The rules are docs/log-format.md, "Reading rules".
//
// It never touches files: the caller reads the bytes, then truncates or fails as the result says.

import CirrusIO

/// The result of scanning one segment.
struct SegmentScan {
    var header: SegmentHeader?
    /// Header missing or damaged in the last segment with no frame after it: recreate it.
    var tornHeader = false
    var frames = 0
    var batches = 0
    /// End of the last complete batch: everything after it is torn tail or dropped.
    var validEnd = LogFormat.segmentHeaderSize
    var tornTail: TornTail?
    var corruptions: [Corruption] = []
    var lastSequence: UInt64 = 0
}

enum SegmentScanner {
    /// Scans `bytes` (segment `number`); calls `apply` for each complete batch in order, and
    /// `dropped` with the sound frames of each batch that damage cut (repair names what they held).
    /// Throws `.corruption` at the first damage unless `repair`.
    static func scan(
        _ bytes: UnsafeRawBufferPointer, number: UInt64, isLast: Bool, repair: Bool, minimumSequence: UInt64,
        deep: Bool = false, apply: ([(UInt64, StateChange)]) -> Void,
        dropped: ([(UInt64, StateChange)]) -> Void = { _ in }
    ) throws(LogError) -> SegmentScan {
        var r = Reader(bytes: bytes, number: number, repair: repair)
        r.s.lastSequence = minimumSequence
        if try !r.readHeader(isLast: isLast) { return r.s }
        while r.p < bytes.count {
            var problem: String?
            if let h = Frame.validFrame(in: bytes, at: r.p) {
                if h.sequence < r.s.lastSequence {
                    problem = "sequence \(h.sequence) goes backwards (after \(r.s.lastSequence))"
                } else {
                    switch decodeChange(bytes, h, deep: deep) {
                    case .failure(let error):
                        problem = "entry does not decode: \(error)"
                    case .success(let entry):
                        try r.take(h, entry, apply: apply, dropped: dropped)
                        continue
                    }
                }
            }
            // Damage at `p`: skip to the next sound frame, or end the segment here.
            let reason = problem ?? diagnose(bytes, at: r.p)
            if let next = Frame.resync(in: bytes, from: r.p + 1, minimumSequence: r.s.lastSequence) {
                try r.damaged(at: r.p, length: next.offset - r.p, reason, framesDropped: r.pending.count)
                r.dropPending(dropped)
                r.skippingToFirst = true
                r.p = next.offset
                continue
            }
            if !isLast {
                let reason = reason + " (in a sealed segment)"
                try r.damaged(at: r.p, length: bytes.count - r.p, reason, framesDropped: r.pending.count)
                r.dropPending(dropped)
                return r.s
            }
            r.tornTail(at: r.pending.isEmpty ? r.p : r.pendingStart)
            return r.s
        }
        if !r.pending.isEmpty {
            // The log ends on a frame boundary inside a batch: the batch never finished.
            if isLast {
                r.tornTail(at: r.pendingStart)
            } else {
                try r.damaged(
                    at: r.pendingStart, length: bytes.count - r.pendingStart, "sealed segment ends inside a batch",
                    framesDropped: r.pending.count)
                r.dropPending(dropped)
            }
        }
        return r.s
    }

    /// One scan's position and findings: `p` is the next byte to read, `pending` the frames of
    /// the batch being gathered (from `pendingStart`), `skippingToFirst` set after damage until a
    /// batch's first frame comes.
    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        let number: UInt64
        let repair: Bool
        var s = SegmentScan()
        var p = LogFormat.segmentHeaderSize
        var pending: [(UInt64, StateChange)] = []
        var pendingStart = LogFormat.segmentHeaderSize
        var skippingToFirst = false

        init(bytes: UnsafeRawBufferPointer, number: UInt64, repair: Bool) {
            self.bytes = bytes
            self.number = number
            self.repair = repair
        }

        /// Damage: thrown unless repairing, noted as a corruption when repairing.
        mutating func damaged(at offset: Int, length: Int, _ reason: String, framesDropped: Int) throws(LogError) {
            if !repair { throw .corruption(segment: number, offset: offset, reason: reason) }
            s.corruptions.append(
                Corruption(
                    segment: number, offset: offset, length: length, reason: reason, framesDropped: framesDropped))
        }

        /// The gathered batch, cut by damage: handed to `dropped`.
        mutating func dropPending(_ dropped: ([(UInt64, StateChange)]) -> Void) {
            if !pending.isEmpty { dropped(pending) }
            pending = []
        }

        /// The last segment ends in a torn tail from `cut`: nothing after it is kept.
        mutating func tornTail(at cut: Int) {
            s.tornTail = TornTail(
                segment: number, offset: cut, bytesDropped: bytes.count - cut, framesDropped: pending.count,
                truncated: false)
            s.validEnd = cut
        }

        /// Reads the segment header; false when the last segment's header is torn with no frame
        /// after it (the scan ends: the header is recreated).
        mutating func readHeader(isLast: Bool) throws(LogError) -> Bool {
            switch SegmentHeader.decode(bytes) {
            case .success(let h):
                guard h.segmentNumber == number else {
                    try damaged(at: 0, length: 0, "header names segment \(h.segmentNumber)", framesDropped: 0)
                    return true
                }
                s.header = h
            case .failure(let e):
                if isLast && Frame.resync(in: bytes, from: 0, minimumSequence: 0) == nil {
                    s.tornHeader = true
                    s.validEnd = 0
                    if bytes.count > 0 {
                        s.tornTail = TornTail(
                            segment: number, offset: 0, bytesDropped: bytes.count, framesDropped: 0, truncated: false)
                    }
                    return false
                }
                try damaged(
                    at: 0, length: LogFormat.segmentHeaderSize, "segment header: \(e.message)", framesDropped: 0)
            }
            return true
        }

        /// A sound frame at `p`: gathered into its batch (the batch applied at its last frame),
        /// or dropped when it cannot belong to one.
        mutating func take(
            _ h: Frame.Header, _ entry: StateChange, apply: ([(UInt64, StateChange)]) -> Void,
            dropped: ([(UInt64, StateChange)]) -> Void
        ) throws(LogError) {
            s.frames += 1
            let first = h.flags & LogFormat.flagFirst != 0
            if skippingToFirst && !first {
                dropped([(h.sequence, entry)])
                s.corruptions[s.corruptions.count - 1].framesDropped += 1
                p = h.end
                s.validEnd = p
                return
            }
            skippingToFirst = false
            if first {
                if !pending.isEmpty {
                    try damaged(
                        at: pendingStart, length: p - pendingStart, "batch at byte \(pendingStart) has no last frame",
                        framesDropped: pending.count)
                    dropPending(dropped)
                }
                pendingStart = p
            } else if pending.isEmpty {
                try damaged(
                    at: p, length: h.end - p, "frame is not the first of a batch but no batch is open", framesDropped: 1
                )
                dropped([(h.sequence, entry)])
                p = h.end
                s.validEnd = p
                return
            }
            pending.append((h.sequence, entry))
            s.lastSequence = h.sequence
            p = h.end
            if h.flags & LogFormat.flagLast != 0 {
                apply(pending)
                pending = []
                s.batches += 1
                s.validEnd = p
            }
        }
    }

    /// Record versions are decoded only as far as their key unless `deep` (verify); other
    /// entries fully.
    static func decodeChange(
        _ b: UnsafeRawBufferPointer, _ h: Frame.Header, deep: Bool
    ) -> Result<StateChange, CodecError> {
        let payload = UnsafeRawBufferPointer(rebasing: b[h.payloadRange])
        do {
            if h.kindByte == EntryKind.recordVersion.rawValue {
                if deep { _ = try RecordCodec.decode(payload) }
                let (id, type) = try RecordCodec.decodeKey(payload)
                return .success(.record(id, recordType: type, payload: Array(payload)))
            }
            return .success(.other(try LogEntry.decode(kind: h.kindByte, payload: payload)))
        } catch {
            return .failure(error)
        }
    }

    /// Why the frame at `p` is not valid, in words.
    static func diagnose(_ b: UnsafeRawBufferPointer, at p: Int) -> String {
        if b.count - p < LogFormat.frameHeaderSize { return "frame header cut off (\(b.count - p) of 24 bytes)" }
        let sync = UInt32(littleEndian: b.loadUnaligned(fromByteOffset: p, as: UInt32.self))
        if sync != LogFormat.frameSync {
            return b[p...].allSatisfy({ $0 == 0 }) ? "zero-filled bytes" : "bad frame sync word"
        }
        let length = Int(UInt32(littleEndian: b.loadUnaligned(fromByteOffset: p + 8, as: UInt32.self)))
        if length > LogFormat.maximumPayload { return "frame length \(length) exceeds the maximum" }
        if b.count - p - LogFormat.frameHeaderSize < length {
            return "frame payload cut off (\(length) bytes declared)"
        }
        if b[p + 21] & ~3 != 0 || b[p + 22] != 0 || b[p + 23] != 0 { return "unknown frame flags" }
        return "frame checksum mismatch"
    }
}

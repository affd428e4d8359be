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
        var s = SegmentScan()
        s.lastSequence = minimumSequence
        var p = LogFormat.segmentHeaderSize
        switch SegmentHeader.decode(bytes) {
        case .success(let h):
            guard h.segmentNumber == number else {
                if !repair {
                    throw .corruption(segment: number, offset: 0, reason: "header names segment \(h.segmentNumber)")
                }
                s.corruptions.append(
                    Corruption(
                        segment: number, offset: 0, length: 0, reason: "header names segment \(h.segmentNumber)",
                        framesDropped: 0))
                break
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
                return s
            }
            if !repair { throw .corruption(segment: number, offset: 0, reason: "segment header: \(e.message)") }
            s.corruptions.append(
                Corruption(
                    segment: number, offset: 0, length: LogFormat.segmentHeaderSize,
                    reason: "segment header: \(e.message)", framesDropped: 0))
        }

        var pending: [(UInt64, StateChange)] = []
        var pendingStart = p
        var skippingToFirst = false
        while p < bytes.count {
            var problem: String?
            if let h = Frame.validFrame(in: bytes, at: p) {
                if h.sequence < s.lastSequence {
                    problem = "sequence \(h.sequence) goes backwards (after \(s.lastSequence))"
                } else {
                    switch decodeChange(bytes, h, deep: deep) {
                    case .failure(let error):
                        problem = "entry does not decode: \(error)"
                    case .success(let entry):
                        s.frames += 1
                        let first = h.flags & LogFormat.flagFirst != 0
                        if skippingToFirst && !first {
                            dropped([(h.sequence, entry)])
                            s.corruptions[s.corruptions.count - 1].framesDropped += 1
                            p = h.end
                            s.validEnd = p
                            continue
                        }
                        skippingToFirst = false
                        if first {
                            if !pending.isEmpty {
                                let reason = "batch at byte \(pendingStart) has no last frame"
                                if !repair { throw .corruption(segment: number, offset: pendingStart, reason: reason) }
                                s.corruptions.append(
                                    Corruption(
                                        segment: number, offset: pendingStart, length: p - pendingStart, reason: reason,
                                        framesDropped: pending.count))
                                dropped(pending)
                                pending = []
                            }
                            pendingStart = p
                        } else if pending.isEmpty {
                            let reason = "frame is not the first of a batch but no batch is open"
                            if !repair { throw .corruption(segment: number, offset: p, reason: reason) }
                            s.corruptions.append(
                                Corruption(
                                    segment: number, offset: p, length: h.end - p, reason: reason, framesDropped: 1))
                            dropped([(h.sequence, entry)])
                            p = h.end
                            s.validEnd = p
                            continue
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
                        continue
                    }
                }
            }
            let reason = problem ?? diagnose(bytes, at: p)
            if let next = Frame.resync(in: bytes, from: p + 1, minimumSequence: s.lastSequence) {
                if !repair { throw .corruption(segment: number, offset: p, reason: reason) }
                s.corruptions.append(
                    Corruption(
                        segment: number, offset: p, length: next.offset - p, reason: reason,
                        framesDropped: pending.count))
                dropped(pending)
                pending = []
                skippingToFirst = true
                p = next.offset
                continue
            }
            if !isLast {
                if !repair { throw .corruption(segment: number, offset: p, reason: reason + " (in a sealed segment)") }
                s.corruptions.append(
                    Corruption(
                        segment: number, offset: p, length: bytes.count - p, reason: reason + " (in a sealed segment)",
                        framesDropped: pending.count))
                dropped(pending)
                return s
            }
            let cut = pending.isEmpty ? p : pendingStart
            s.tornTail = TornTail(
                segment: number, offset: cut, bytesDropped: bytes.count - cut, framesDropped: pending.count,
                truncated: false)
            s.validEnd = cut
            return s
        }
        if !pending.isEmpty {
            // The log ends on a frame boundary inside a batch: the batch never finished.
            if isLast {
                s.tornTail = TornTail(
                    segment: number, offset: pendingStart, bytesDropped: bytes.count - pendingStart,
                    framesDropped: pending.count, truncated: false)
                s.validEnd = pendingStart
            } else {
                let reason = "sealed segment ends inside a batch"
                if !repair { throw .corruption(segment: number, offset: pendingStart, reason: reason) }
                s.corruptions.append(
                    Corruption(
                        segment: number, offset: pendingStart, length: bytes.count - pendingStart, reason: reason,
                        framesDropped: pending.count))
                dropped(pending)
            }
        }
        return s
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

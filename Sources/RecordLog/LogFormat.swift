// LogFormat: the framing of the record log — segment headers, frames, entry kinds. The full
// grammar with rationale is docs/log-format.md; keep the two in step. Constants marked
// "never change" are on disk in every store.
//
//   segment = header(32) frame*
//   header  = "CIRRUSLG" u16 version=1 u16 flags u64 segment# i64 created-ms u32 crc32c(0..<28)
//   frame   = u32 sync=0x3E5AF1C7 | u32 crc | u32 length | u64 sequence | u8 kind | u8 flags | u16 0
//             | payload[length]
//             crc = CRC-32C over the payload, then frame bytes 8..<24
//             flags: 1 = FIRST of batch, 2 = LAST of batch (one-entry batch: 3)
//   kinds   = 1 record version, 2 deletion, 3 zone create, 4 zone delete, 5 schema, 6 checkpoint
//
// The sync word + length bound + CRC let a reader resynchronise after a damaged frame (scan for
// the sync word, accept only a CRC-valid frame). FIRST/LAST make a batch all-or-nothing on replay.

import CirrusIO
import RecordModel

/// Wire constants of the log.                                                never change
public enum LogFormat {
    /// Segment file magic, "CIRRUSLG".
    public static let segmentMagic: [UInt8] = Array("CIRRUSLG".utf8)
    /// The format version this code writes and reads.
    public static let formatVersion: UInt16 = 1
    /// Segment header size in bytes.
    public static let segmentHeaderSize = 32
    /// The frame sync word (bytes C7 F1 5A 3E on disk).
    public static let frameSync: UInt32 = 0x3E5A_F1C7
    /// Frame header size in bytes.
    public static let frameHeaderSize = 24
    /// Largest payload a frame may carry.
    public static let maximumPayload = 16 << 20
    /// Frame flag: first frame of a batch.
    public static let flagFirst: UInt8 = 1
    /// Frame flag: last frame of a batch.
    public static let flagLast: UInt8 = 2
    /// Segment header flag: written by compaction.
    public static let segmentFlagCompacted: UInt16 = 1
}

/// The kind byte of a frame.                                                   never change
public enum EntryKind: UInt8, Sendable, Hashable, CaseIterable {
    /// A saved record version.
    case recordVersion = 1
    /// A record deletion.
    case deletion = 2
    /// A zone created.
    case zoneCreate = 3
    /// A zone deleted.
    case zoneDelete = 4
    /// The schema replaced.
    case schemaChange = 5
    /// A compaction checkpoint.
    case checkpoint = 6
}

/// A segment's header.
public struct SegmentHeader: Sendable, Hashable {
    /// The format version (``LogFormat/formatVersion``).
    public var version: UInt16 = LogFormat.formatVersion
    /// Segment flags: ``LogFormat/segmentFlagCompacted`` or 0.
    public var flags: UInt16
    /// The segment's number, as in its file name.
    public var segmentNumber: UInt64
    /// Milliseconds since 1970 when the segment was created.
    public var createdMilliseconds: Int64

    /// A header for segment `segmentNumber` in the current format version.
    public init(segmentNumber: UInt64, createdMilliseconds: Int64, flags: UInt16 = 0) {
        self.segmentNumber = segmentNumber
        self.createdMilliseconds = createdMilliseconds
        self.flags = flags
    }

    /// The 32 header bytes.
    public var encoded: [UInt8] {
        var w = ByteWriter(capacity: LogFormat.segmentHeaderSize)
        w.bytes.append(contentsOf: LogFormat.segmentMagic)
        w.u16(version)
        w.u16(flags)
        w.u64(segmentNumber)
        w.u64(UInt64(bitPattern: createdMilliseconds))
        w.u32(CRC32C.checksum(w.bytes))
        return w.bytes
    }

    /// Parses a header; the reason when it is not one.
    public static func decode(_ b: UnsafeRawBufferPointer) -> Result<SegmentHeader, CodecError> {
        guard b.count >= LogFormat.segmentHeaderSize else {
            return .failure(CodecError("segment header is \(b.count) bytes, needs 32", offset: 0))
        }
        guard Array(b[0..<8]) == LogFormat.segmentMagic else {
            return .failure(CodecError("bad segment magic", offset: 0))
        }
        var r = ByteReader(b, offset: 8)
        do {
            let version = try r.u16()
            let flags = try r.u16()
            let number = try r.u64()
            let created = Int64(bitPattern: try r.u64())
            let crc = try r.u32()
            guard crc == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: b[0..<28])) else {
                return .failure(CodecError("segment header checksum mismatch", offset: 28))
            }
            guard version == LogFormat.formatVersion else {
                return .failure(CodecError("unsupported format version \(version)", offset: 8))
            }
            return .success(SegmentHeader(segmentNumber: number, createdMilliseconds: created, flags: flags))
        } catch {
            return .failure(error)
        }
    }
}

/// Frame encoding.
public enum Frame {
    /// Appends one frame (header + payload) to `out`; `payloadCRC` is the running (not
    /// finalized) CRC-32C of the payload, from `CRC32C.update(CRC32C.start, payload)`.
    public static func append(
        kind: EntryKind, sequence: UInt64, flags: UInt8, payload: UnsafeRawBufferPointer, payloadCRC: UInt32,
        to out: inout [UInt8]
    ) {
        let start = out.count
        var h = ByteWriter(capacity: LogFormat.frameHeaderSize)
        h.u32(LogFormat.frameSync)
        h.u32(0)  // crc, patched below
        h.u32(UInt32(payload.count))
        h.u64(sequence)
        h.u8(kind.rawValue)
        h.u8(flags)
        h.u16(0)
        let crc = h.bytes.withUnsafeBytes {
            CRC32C.finalize(CRC32C.update(payloadCRC, UnsafeRawBufferPointer(rebasing: $0[8..<24])))
        }
        out.append(contentsOf: h.bytes)
        out[start + 4] = UInt8(truncatingIfNeeded: crc)
        out[start + 5] = UInt8(truncatingIfNeeded: crc >> 8)
        out[start + 6] = UInt8(truncatingIfNeeded: crc >> 16)
        out[start + 7] = UInt8(truncatingIfNeeded: crc >> 24)
        out.append(contentsOf: payload)
    }

    /// Appends one frame, computing the payload CRC.
    public static func append(kind: EntryKind, sequence: UInt64, flags: UInt8, payload: [UInt8], to out: inout [UInt8])
    {
        payload.withUnsafeBytes { p in
            append(
                kind: kind, sequence: sequence, flags: flags, payload: p, payloadCRC: CRC32C.update(CRC32C.start, p),
                to: &out)
        }
    }

    /// A frame read back: where it is and what it holds (the payload is a range of the segment).
    public struct Header: Sendable, Hashable {
        /// Byte offset of the frame in the segment.
        public var offset: Int
        /// Payload length in bytes.
        public var length: Int
        /// The entry's sequence number.
        public var sequence: UInt64
        /// The entry kind byte (``EntryKind`` raw value; unknown kinds are kept as read).
        public var kindByte: UInt8
        /// Batch flags: ``LogFormat/flagFirst``, ``LogFormat/flagLast``, both, or neither.
        public var flags: UInt8
        /// Offset just past the frame.
        public var end: Int { offset + LogFormat.frameHeaderSize + length }
        /// Where the payload lies in the segment.
        public var payloadRange: Range<Int> { offset + LogFormat.frameHeaderSize..<end }
    }

    /// Checks the frame at `offset`: nil unless the sync word, bounds, reserved bits and CRC are right.
    public static func validFrame(in b: UnsafeRawBufferPointer, at offset: Int) -> Header? {
        guard offset >= 0, b.count - offset >= LogFormat.frameHeaderSize else { return nil }
        let sync = UInt32(littleEndian: b.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
        guard sync == LogFormat.frameSync else { return nil }
        let crc = UInt32(littleEndian: b.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self))
        let length = Int(UInt32(littleEndian: b.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self)))
        guard length <= LogFormat.maximumPayload, b.count - offset - LogFormat.frameHeaderSize >= length else {
            return nil
        }
        let flags = b[offset + 21]
        guard flags & ~(LogFormat.flagFirst | LogFormat.flagLast) == 0, b[offset + 22] == 0, b[offset + 23] == 0 else {
            return nil
        }
        var c = CRC32C.update(CRC32C.start, UnsafeRawBufferPointer(rebasing: b[offset + 24..<offset + 24 + length]))
        c = CRC32C.finalize(CRC32C.update(c, UnsafeRawBufferPointer(rebasing: b[offset + 8..<offset + 24])))
        guard c == crc else { return nil }
        let seq = UInt64(littleEndian: b.loadUnaligned(fromByteOffset: offset + 12, as: UInt64.self))
        return Header(offset: offset, length: length, sequence: seq, kindByte: b[offset + 20], flags: flags)
    }

    /// The offset of the next valid frame at or after `from`, scanning for the sync word.
    public static func resync(in b: UnsafeRawBufferPointer, from: Int, minimumSequence: UInt64) -> Header? {
        var p = max(from, 0)
        while p + LogFormat.frameHeaderSize <= b.count {
            if b[p] == 0xC7, b[p + 1] == 0xF1, b[p + 2] == 0x5A, b[p + 3] == 0x3E,
                let h = validFrame(in: b, at: p), h.sequence >= minimumSequence
            {
                return h
            }
            p += 1
        }
        return nil
    }
}

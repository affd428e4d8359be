// LogEntry: what one frame means — a record version, a deletion, a zone or schema change, or a
// compaction checkpoint — and its payload encoding (docs/log-format.md, "Entry kinds").

import CirrusIO
import Foundation
import RecordModel

/// One entry of the log, as written by a commit and replayed on open.
public enum LogEntry: Sendable, Hashable {
    /// A saved record (the whole new version).
    case recordVersion(Record)
    /// A deleted record; the type is kept so that indexes can find it without a lookup.
    case deletion(RecordID, recordType: String)
    /// Creates a zone.
    case zoneCreate(ZoneID)
    /// Deletes the zone and every record in it.
    case zoneDelete(ZoneID)
    /// Replaces the whole schema.
    case schemaChange(Schema)
    /// Written by compaction: the highest sequence assigned so far and the horizon below which
    /// deletions are no longer in the log.
    case checkpoint(highestSequence: UInt64, horizon: UInt64)

    /// The frame kind byte this entry is written with.
    public var kind: EntryKind {
        switch self {
        case .recordVersion: .recordVersion
        case .deletion: .deletion
        case .zoneCreate: .zoneCreate
        case .zoneDelete: .zoneDelete
        case .schemaChange: .schemaChange
        case .checkpoint: .checkpoint
        }
    }

    /// Appends the payload bytes of this entry. (Throws nothing since schemas are written in
    /// binary; the signature stays for callers written when JSON encoding could fail.)
    public func encodePayload(into w: inout ByteWriter) throws(CodecError) {
        switch self {
        case .recordVersion(let r): RecordCodec.encode(r, into: &w)
        case .deletion(let id, let type):
            RecordCodec.encodeRecordID(id, into: &w)
            w.string(type)
        case .zoneCreate(let z), .zoneDelete(let z): RecordCodec.encodeZoneID(z, into: &w)
        case .schemaChange(let s):
            w.u8(2)  // binary (RecordCodec+Schema.swift); 1 = JSON, still read
            RecordCodec.encodeSchema(s, into: &w)
        case .checkpoint(let hi, let horizon):
            w.varint(hi)
            w.varint(horizon)
        }
    }

    /// Decodes the payload of a frame of kind `kind`.
    public static func decode(kind: UInt8, payload: UnsafeRawBufferPointer) throws(CodecError) -> LogEntry {
        guard let k = EntryKind(rawValue: kind) else { throw CodecError("unknown entry kind \(kind)", offset: 0) }
        var r = ByteReader(payload)
        let e: LogEntry
        switch k {
        case .recordVersion: e = .recordVersion(try RecordCodec.decodeRecord(&r))
        case .deletion:
            let id = try RecordCodec.decodeRecordID(&r)
            e = .deletion(id, recordType: try r.string())
        case .zoneCreate: e = .zoneCreate(try RecordCodec.decodeZoneID(&r))
        case .zoneDelete: e = .zoneDelete(try RecordCodec.decodeZoneID(&r))
        case .schemaChange:
            switch try r.u8() {
            case 2: e = .schemaChange(try RecordCodec.decodeSchema(&r))
            case 1:  // JSON (Codable), what logs and state segments before the binary form hold
                let data = Data(payload[1...])
                r.offset = payload.count
                do {
                    e = .schemaChange(try JSONDecoder().decode(Schema.self, from: data))
                } catch {
                    throw CodecError("schema JSON does not decode: \(error)", offset: 1)
                }
            case let b: throw CodecError("unknown schema encoding \(b)", offset: 0)
            }
        case .checkpoint:
            let hi = try r.varint()
            e = .checkpoint(highestSequence: hi, horizon: try r.varint())
        }
        guard r.isAtEnd else { throw CodecError("\(r.remaining) trailing bytes", offset: r.offset) }
        return e
    }
}

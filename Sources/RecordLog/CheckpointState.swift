// CheckpointState: the `state` section of a checkpoint's state segment — the small part of the
// live state that is not rows: sequences, the schema, zones and the deletions change tokens
// still need (docs/storage-format.md, "state").
//
//   u8 version=1 | varint last-sequence | varint horizon | varint schema-sequence
//   | u8 has-schema [schema JSON as the log's schema entry, length-prefixed]
//   | varint zone-count (zone id, varint sequence)*
//   | varint tombstone-count (record id, string type, varint sequence)*
//
// The façade's own state (reverse references, asset counts) travels beside it as an opaque
// `user` section.

import CirrusIO
import Foundation
import RecordModel

struct CheckpointState {
    static let version: UInt8 = 1  //                                               never change
    var lastSequence: UInt64 = 0
    var horizon: UInt64 = 0
    var schemaSequence: UInt64 = 0
    var schema: Schema?
    var zones: [ZoneID: UInt64] = [:]
    var tombstones: [ZoneID: [Tombstone]] = [:]

    func encoded() throws(CodecError) -> [UInt8] {
        var w = ByteWriter(capacity: 1024)
        w.u8(Self.version)
        w.varint(lastSequence)
        w.varint(horizon)
        w.varint(schemaSequence)
        if let schema {
            w.u8(1)
            var s = ByteWriter()
            try LogEntry.schemaChange(schema).encodePayload(into: &s)
            w.byteString(s.bytes)
        } else {
            w.u8(0)
        }
        w.varint(UInt64(zones.count))
        for (z, seq) in zones.sorted(by: { $0.value < $1.value }) {
            RecordCodec.encodeZoneID(z, into: &w)
            w.varint(seq)
        }
        let all = tombstones.values.flatMap { $0 }.sorted { $0.sequence < $1.sequence }
        w.varint(UInt64(all.count))
        for t in all {
            RecordCodec.encodeRecordID(t.recordID, into: &w)
            w.string(t.recordType)
            w.varint(t.sequence)
        }
        return w.bytes
    }

    static func decode(_ b: UnsafeRawBufferPointer) throws(CodecError) -> CheckpointState {
        var r = ByteReader(b)
        guard try r.u8() == version else { throw CodecError("unknown state version", offset: 0) }
        var s = CheckpointState()
        s.lastSequence = try r.varint()
        s.horizon = try r.varint()
        s.schemaSequence = try r.varint()
        if try r.u8() == 1 {
            let n = Int(try r.varint())
            guard n <= r.remaining else { throw CodecError("schema runs past the section", offset: r.offset) }
            let p = UnsafeRawBufferPointer(rebasing: b[r.offset..<(r.offset + n)])
            guard
                case .schemaChange(let schema) = try LogEntry.decode(kind: EntryKind.schemaChange.rawValue, payload: p)
            else {
                throw CodecError("not a schema", offset: r.offset)
            }
            s.schema = schema
            r.offset += n
        }
        for _ in 0..<(try count(&r)) {
            let z = try RecordCodec.decodeZoneID(&r)
            s.zones[z] = try r.varint()
        }
        for _ in 0..<(try count(&r)) {
            let id = try RecordCodec.decodeRecordID(&r)
            let type = try r.string()
            s.tombstones[id.zoneID, default: []].append(
                Tombstone(recordID: id, recordType: type, sequence: try r.varint()))
        }
        guard r.isAtEnd else { throw CodecError("\(r.remaining) trailing bytes", offset: r.offset) }
        return s
    }

    /// An element count, bounded by the bytes left (each element takes at least one).
    static func count(_ r: inout ByteReader) throws(CodecError) -> Int {
        let n = try r.varint()
        guard n <= UInt64(r.remaining) else { throw CodecError("count \(n) exceeds the bytes left", offset: r.offset) }
        return Int(n)
    }
}

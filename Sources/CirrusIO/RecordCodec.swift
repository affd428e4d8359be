// RecordCodec: the binary encoding of records and identifiers inside log payloads (codec
// version 1; the grammar is in docs/log-format.md, "Record payload").
//
// Owns encode/decode of `Record`, `RecordID`, `ZoneID` and `FieldValue`. Decoding checks
// structure only (tags, lengths, UTF-8), never CloudKit's naming rules.

import RecordModel

/// Encodes and decodes records for the log.
public enum RecordCodec {
    /// Codec version written in every record payload.                       never change
    public static let version: UInt8 = 1

    static let listBit: UInt8 = 0x10

    /// The encoded bytes of `record`.
    public static func encode(_ record: Record) -> [UInt8] {
        var w = ByteWriter(capacity: 128)
        encode(record, into: &w)
        return w.bytes
    }

    /// Appends the encoding of `record` to `w`.
    public static func encode(_ record: Record, into w: inout ByteWriter) {
        w.u8(version)
        encodeRecordID(record.recordID, into: &w)
        w.string(record.recordType)
        var mask: UInt8 = 0
        if record.creationDate != nil { mask |= 1 }
        if record.modificationDate != nil { mask |= 2 }
        if record.creatorUserRecordID != nil { mask |= 4 }
        if record.lastModifiedUserRecordID != nil { mask |= 8 }
        if record.recordChangeTag != nil { mask |= 16 }
        w.u8(mask)
        if let t = record.creationDate { w.zigzag(t.millisecondsSince1970) }
        if let t = record.modificationDate { w.zigzag(t.millisecondsSince1970) }
        if let r = record.creatorUserRecordID { encodeRecordID(r, into: &w) }
        if let r = record.lastModifiedUserRecordID { encodeRecordID(r, into: &w) }
        if let s = record.recordChangeTag { w.string(s) }
        w.varint(UInt64(record.fields.count))
        for (name, value) in record.fields {
            w.string(name)
            encodeValue(value, into: &w)
        }
    }

    /// Decodes one record payload; the whole buffer must be consumed.
    ///
    /// With `encodedFields`, the user fields are checked as decoding would check them and, when
    /// their names are ASCII and ascending, kept as bytes and decoded when read
    /// (`RecordFields`' cost model); else they are decoded here. `fieldsChecked` says that
    /// ``fieldsHoldEncoded(_:)`` accepted exactly these bytes (a row whose CRC matches the one
    /// written with that verdict): with `encodedFields` they are then held without the walk.
    /// `owner`, when given, keeps `buffer` valid and unchanged while it lives (a mapped data
    /// segment): fields held encoded then stay where they are instead of being copied.
    public static func decode(
        _ buffer: UnsafeRawBufferPointer, names: NameTable? = nil, encodedFields: Bool = false,
        fieldsChecked: Bool = false, owner: (any AnyObject & Sendable)? = nil
    ) throws(CodecError) -> Record {
        var r = ByteReader(buffer)
        let rec = try decodeRecord(
            &r, names: names, encodedFields: encodedFields, fieldsChecked: fieldsChecked, owner: owner)
        guard r.isAtEnd else { throw CodecError("\(r.remaining) trailing bytes after record", offset: r.offset) }
        return rec
    }

    /// Decodes a record array (convenience for tests).
    public static func decode(_ bytes: [UInt8]) throws(CodecError) -> Record {
        do {
            return try bytes.withUnsafeBytes { buf in try decode(buf) }
        } catch let e as CodecError {
            throw e
        } catch {
            throw CodecError("\(error)", offset: 0)
        }
    }

    /// Decodes only the identity of a record payload: id and type (replay uses this and keeps
    /// the bytes; fields are decoded on demand).
    public static func decodeKey(_ buffer: UnsafeRawBufferPointer) throws(CodecError) -> (RecordID, String) {
        var r = ByteReader(buffer)
        let v = try r.u8()
        guard v == version else { throw CodecError("unsupported record codec version \(v)", offset: 0) }
        let id = try decodeRecordID(&r)
        return (id, try r.string())
    }

    /// Decodes one record payload keeping only the user fields named in `fields` (system fields
    /// always): the other values are skipped without being built (their strings are not
    /// validated). For residual filters and sort keys, which read a few fields of many records.
    public static func decode(
        _ buffer: UnsafeRawBufferPointer, onlyFields fields: Set<String>
    ) throws(CodecError)
        -> Record
    {
        var r = ByteReader(buffer)
        let rec = try decodeRecord(&r, keeping: fields)
        guard r.isAtEnd else { throw CodecError("\(r.remaining) trailing bytes after record", offset: r.offset) }
        return rec
    }

    /// Decodes only the values of `selection`'s fields from one record payload into `out`
    /// (slot order, nil where the record has no such field), without building the record: the
    /// header is skipped, stored names are compared as bytes, the other values are skipped
    /// (their structure still checked). `out` is reused, so a caller reading many rows does not
    /// allocate per row (only the selected strings and lists do, when long).
    public static func values(
        _ buffer: UnsafeRawBufferPointer, of selection: FieldSelection, into out: inout [FieldValue?]
    ) throws(CodecError) {
        out.removeAll(keepingCapacity: true)
        for _ in 0..<selection.count { out.append(nil) }
        var r = ByteReader(buffer)
        let v = try r.u8()
        guard v == version else { throw CodecError("unsupported record codec version \(v)", offset: 0) }
        try skipRecordID(&r)
        try r.skip(try r.length())  // the type
        let maskAt = r.offset
        let mask = try r.u8()
        guard mask & ~31 == 0 else { throw CodecError("unknown system-field bits \(mask)", offset: maskAt) }
        if mask & 1 != 0 { _ = try r.varint() }
        if mask & 2 != 0 { _ = try r.varint() }
        if mask & 4 != 0 { try skipRecordID(&r) }
        if mask & 8 != 0 { try skipRecordID(&r) }
        if mask & 16 != 0 { try r.skip(try r.length()) }
        let countAt = r.offset
        let count = try r.varint()
        guard count <= UInt64(r.remaining) else { throw CodecError("field count \(count) too large", offset: countAt) }
        var found = 0
        for _ in 0..<count {
            let n = try r.length()
            let at = r.offset
            try r.skip(n)
            var slot = -1
            if selection.lengths & (1 << UInt64(min(n, 63))) != 0 {
                let name = UnsafeRawBufferPointer(rebasing: r.buffer[at..<at + n])
                for (k, want) in selection.utf8.enumerated() where want.count == n {
                    if want.withUnsafeBytes({ compareBytes($0, name) }) == 0 {
                        slot = k
                        break
                    }
                }
            }
            if slot < 0 || out[slot] != nil {
                try skipValue(&r)
            } else {
                out[slot] = try decodeValue(&r)
                found += 1
                if found == selection.count { return }  // the rest is not read
            }
        }
        guard r.isAtEnd else { throw CodecError("\(r.remaining) trailing bytes after record", offset: r.offset) }
    }

    /// Moves past a record id written by ``encodeRecordID(_:into:)``.
    static func skipRecordID(_ r: inout ByteReader) throws(CodecError) {
        try r.skip(try r.length())
        let at = r.offset
        switch try r.u8() {
        case 0: return
        case 1:
            try r.skip(try r.length())
            try r.skip(try r.length())
        case let b: throw CodecError("bad zone id tag \(b)", offset: at)
        }
    }

    package static func decodeRecord(
        _ r: inout ByteReader, keeping keep: Set<String>? = nil, names table: NameTable? = nil,
        encodedFields: Bool = false, fieldsChecked: Bool = false, owner: (any AnyObject & Sendable)? = nil
    ) throws(CodecError) -> Record {
        let v = try r.u8()
        guard v == version else { throw CodecError("unsupported record codec version \(v)", offset: r.offset - 1) }
        let id = try decodeRecordID(&r)
        let type: String
        if let table { type = try string(&r, likely: table.recordType, table.typeUTF8) } else { type = try r.string() }
        let maskAt = r.offset
        let mask = try r.u8()
        guard mask & ~31 == 0 else { throw CodecError("unknown system-field bits \(mask)", offset: maskAt) }
        let created = mask & 1 != 0 ? Timestamp(millisecondsSince1970: try r.zigzag()) : nil
        let modified = mask & 2 != 0 ? Timestamp(millisecondsSince1970: try r.zigzag()) : nil
        let creatorAt = r.offset
        let creator = mask & 4 != 0 ? try decodeRecordID(&r) : nil
        let modifier: RecordID?
        if mask & 8 == 0 {
            modifier = nil
        } else if let creator, Self.repeats(&r, from: creatorAt) {
            // Most records were last saved by the user who created them: the same bytes (which
            // would decode to the same id) give the same id, without a second set of strings.
            modifier = creator
        } else {
            modifier = try decodeRecordID(&r)
        }
        let tag = mask & 16 != 0 ? try r.string() : nil
        let countAt = r.offset
        if encodedFields, keep == nil {
            if let n = fieldsChecked ? try checkedFieldCount(&r) : checkFields(&r) {
                let bytes = UnsafeRawBufferPointer(rebasing: r.buffer[countAt..<r.offset])
                let decoder: any FieldDecoding = table ?? PlainFieldDecoder.shared
                let fields =
                    if let owner {
                        RecordFields(encodedIn: bytes, owner: owner, count: n, decoder: decoder)
                    } else {
                        RecordFields(encoded: [UInt8](bytes), count: n, decoder: decoder)
                    }
                return Record(
                    recordType: type, recordID: id, fields: fields,
                    creationDate: created, modificationDate: modified, creatorUserRecordID: creator,
                    lastModifiedUserRecordID: modifier, recordChangeTag: tag)
            }
            r.offset = countAt  // decoded below, which names any damage
        }
        // Built once, with every value: no copy-on-write check per system field.
        return Record(
            recordType: type, recordID: id, fields: try decodeFields(&r, keeping: keep, names: table),
            creationDate: created,
            modificationDate: modified,
            creatorUserRecordID: creator, lastModifiedUserRecordID: modifier, recordChangeTag: tag)
    }

    /// The fields at the reader (a count, then name/value pairs), only those named in `keep`
    /// when given; names read through `table` when they are in it.
    static func decodeFields(
        _ r: inout ByteReader, keeping keep: Set<String>?, names table: NameTable?
    ) throws(CodecError) -> RecordFields {
        let countAt = r.offset
        let count = try r.varint()
        guard count <= UInt64(r.remaining) else { throw CodecError("field count \(count) too large", offset: countAt) }
        var fields: [RecordFields.Field] = []
        fields.reserveCapacity(keep.map { min($0.count, Int(count)) } ?? Int(count))
        // The byte lengths (below 64) of the kept names: a field whose name has none of them is
        // skipped without making its name (no string, no hashing).
        var lengths: UInt64 = 0
        for k in keep ?? [] { lengths |= k.utf8.count < 64 ? 1 << UInt64(k.utf8.count) : 0 }
        // With a table: whether every name so far came from it in ascending order.
        var inOrder = table != nil
        let lookup = table?.lookup
        var last = -1
        for _ in 0..<count {
            if keep != nil {
                let at = r.offset
                let n = try r.length()
                if n < 64, lengths & (1 << UInt64(n)) == 0 {
                    try r.skip(n)
                    try skipValue(&r)
                    continue
                }
                r.offset = at
            }
            let name: String
            if let lookup {
                let at = r.offset
                let n = try r.length()
                let raw = UnsafeRawBufferPointer(rebasing: r.buffer[r.offset..<r.offset + n])
                if let k = lookup.index(of: raw, hint: last + 1) {
                    r.offset += n
                    name = lookup.names[k]
                    if k <= last { inOrder = false }
                    last = k
                } else {
                    r.offset = at
                    name = try r.string()
                    inOrder = false
                }
            } else {
                name = try r.string()
            }
            if let keep, !keep.contains(name) {
                try skipValue(&r)
            } else {
                fields.append(RecordFields.Field(name, try decodeValue(&r)))
            }
        }
        return inOrder ? RecordFields(sortedUnique: fields) : RecordFields(collecting: fields)
    }

    // MARK: identifiers

    /// Appends a zone id: 0 for the default zone, else 1 + zone name + owner name.
    public static func encodeZoneID(_ z: ZoneID, into w: inout ByteWriter) {
        if z == .default {
            w.u8(0)
        } else {
            w.u8(1)
            w.string(z.zoneName)
            w.string(z.ownerName)
        }
    }

    /// Reads a zone id written by ``encodeZoneID(_:into:)``; throws on a tag other than 0 or 1.
    public static func decodeZoneID(_ r: inout ByteReader) throws(CodecError) -> ZoneID {
        let at = r.offset
        switch try r.u8() {
        case 0: return .default
        case 1: return ZoneID(zoneName: try r.string(), ownerName: try r.string())
        case let b: throw CodecError("bad zone id tag \(b)", offset: at)
        }
    }

    /// Appends a record id: record name, then the zone id.
    public static func encodeRecordID(_ id: RecordID, into w: inout ByteWriter) {
        w.string(id.recordName)
        encodeZoneID(id.zoneID, into: &w)
    }

    /// Reads a record id written by ``encodeRecordID(_:into:)``.
    public static func decodeRecordID(_ r: inout ByteReader) throws(CodecError) -> RecordID {
        let name = try r.string()
        return RecordID(recordName: name, zoneID: try decodeZoneID(&r))
    }

    // MARK: values

    /// Appends one tagged value.
    public static func encodeValue(_ v: FieldValue, into w: inout ByteWriter) {
        if case .list(let items) = v {
            // An empty list has no element type; it is written as an empty STRING list.
            let scalar = items.first?.scalarType ?? .string
            w.u8(scalar.rawValue | listBit)
            w.varint(UInt64(items.count))
            for item in items { encodeBody(item, into: &w) }
        } else {
            w.u8(v.scalarType?.rawValue ?? 0)
            encodeBody(v, into: &w)
        }
    }

    static func encodeBody(_ v: FieldValue, into w: inout ByteWriter) {
        switch v {
        case .string(let s): w.string(s)
        case .int64(let i): w.zigzag(i)
        case .double(let d): w.f64(d)
        case .date(let t): w.zigzag(t.millisecondsSince1970)
        case .bytes(let b): w.byteString(b)
        case .location(let l):
            w.f64(l.latitude)
            w.f64(l.longitude)
            var mask: UInt8 = 0
            if l.altitude.bitPattern != (0.0).bitPattern { mask |= 1 }
            if l.horizontalAccuracy.bitPattern != (0.0).bitPattern { mask |= 2 }
            if l.verticalAccuracy.bitPattern != (-1.0).bitPattern { mask |= 4 }
            if l.course.bitPattern != (-1.0).bitPattern { mask |= 8 }
            if l.speed.bitPattern != (-1.0).bitPattern { mask |= 16 }
            if l.timestamp != nil { mask |= 32 }
            w.u8(mask)
            if mask & 1 != 0 { w.f64(l.altitude) }
            if mask & 2 != 0 { w.f64(l.horizontalAccuracy) }
            if mask & 4 != 0 { w.f64(l.verticalAccuracy) }
            if mask & 8 != 0 { w.f64(l.course) }
            if mask & 16 != 0 { w.f64(l.speed) }
            if let t = l.timestamp { w.zigzag(t.millisecondsSince1970) }
        case .reference(let r):
            encodeRecordID(r.recordID, into: &w)
            w.u8(r.action == .deleteSelf ? 1 : 0)
        case .asset(let a):
            w.string(a.contentHash)
            w.varint(UInt64(bitPattern: a.size))
        case .list:
            // Lists never nest (validation refuses them); an inner list is written empty.
            w.varint(0)
        }
    }

    /// Reads one tagged value.
    public static func decodeValue(_ r: inout ByteReader) throws(CodecError) -> FieldValue {
        let at = r.offset
        let tag = try r.u8()
        guard let scalar = ScalarType(rawValue: tag & 0x0F), tag & ~(0x0F | listBit) == 0 else {
            throw CodecError("unknown value tag \(tag)", offset: at)
        }
        if tag & listBit == 0 { return try decodeBody(scalar, &r) }
        let countAt = r.offset
        let count = try r.varint()
        guard count <= UInt64(r.remaining) else { throw CodecError("list count \(count) too large", offset: countAt) }
        var items: [FieldValue] = []
        items.reserveCapacity(Int(count))
        for _ in 0..<count { items.append(try decodeBody(scalar, &r)) }
        return .list(items)
    }

    /// Moves past one tagged value without building it (structure is still checked).
    static func skipValue(_ r: inout ByteReader) throws(CodecError) {
        let (scalar, count) = try valueHead(&r)
        var left = count
        if count > 1, scalar == .string || scalar == .bytes { left = skipShortBodies(count, &r) }
        for _ in 0..<left { try skipBody(scalar, &r) }
    }

    /// Moves past the leading bodies of a list of `count` length-prefixed strings or bytes whose
    /// length is below 128 (a one-byte prefix) and that lie within the buffer, reading only the
    /// prefixes; returns how many bodies are left, from the first that is not such a body. The
    /// caller skips those as any body, which checks them and names any damage where it is. (A
    /// city's alternate names, dozens to hundreds of short strings before its `country` and
    /// `name`, were skipped one `skipBody` each: most of reading a sort key from such a row.)
    @inline(__always)
    static func skipShortBodies(_ count: UInt64, _ r: inout ByteReader) -> UInt64 {
        let b = r.buffer
        let end = b.count
        var o = r.offset
        var left = count
        while left > 0, o < end {
            let n = Int(b[o])
            guard n < 0x80, n < end - o else { break }
            o += 1 + n
            left -= 1
        }
        r.offset = o
        return left
    }

    /// Reads a tagged value's tag (and a list's count): its scalar type and how many bodies
    /// follow (1 for a scalar), each checked.
    static func valueHead(_ r: inout ByteReader) throws(CodecError) -> (ScalarType, UInt64) {
        let at = r.offset
        let tag = try r.u8()
        guard let scalar = ScalarType(rawValue: tag & 0x0F), tag & ~(0x0F | listBit) == 0 else {
            throw CodecError("unknown value tag \(tag)", offset: at)
        }
        let count = tag & listBit == 0 ? 1 : try r.varint()
        guard count <= UInt64(r.remaining) else { throw CodecError("list count \(count) too large", offset: at + 1) }
        return (scalar, count)
    }

    static func skipBody(_ t: ScalarType, _ r: inout ByteReader) throws(CodecError) {
        switch t {
        case .string, .bytes: try r.skip(try r.length())
        case .int64, .date: _ = try r.varint()
        case .double: try r.skip(8)
        case .location:
            try r.skip(16)
            let at = r.offset
            let mask = try r.u8()
            guard mask & ~63 == 0 else { throw CodecError("unknown location bits \(mask)", offset: at) }
            try r.skip(8 * (mask & 31).nonzeroBitCount)
            if mask & 32 != 0 { _ = try r.varint() }
        case .reference:
            try skipRecordID(&r)
            try r.skip(1)
        case .asset:
            try r.skip(try r.length())
            _ = try r.varint()
        }
    }

    static func decodeBody(_ t: ScalarType, _ r: inout ByteReader) throws(CodecError) -> FieldValue {
        switch t {
        case .string: return .string(try r.string())
        case .int64: return .int64(try r.zigzag())
        case .double: return .double(try r.f64())
        case .date: return .date(Timestamp(millisecondsSince1970: try r.zigzag()))
        case .bytes: return .bytes(try r.byteString())
        case .location:
            let latitude = try r.f64()
            let longitude = try r.f64()
            let at = r.offset
            let mask = try r.u8()
            guard mask & ~63 == 0 else { throw CodecError("unknown location bits \(mask)", offset: at) }
            if mask == 0 { return .location(Location(latitude: latitude, longitude: longitude)) }
            // Read whole, then made once: set one by one, each member would make a new box.
            let altitude = mask & 1 != 0 ? try r.f64() : 0
            let horizontal = mask & 2 != 0 ? try r.f64() : 0
            let vertical = mask & 4 != 0 ? try r.f64() : -1
            let course = mask & 8 != 0 ? try r.f64() : -1
            let speed = mask & 16 != 0 ? try r.f64() : -1
            let time = mask & 32 != 0 ? Timestamp(millisecondsSince1970: try r.zigzag()) : nil
            return .location(
                Location(
                    latitude: latitude, longitude: longitude, altitude: altitude, horizontalAccuracy: horizontal,
                    verticalAccuracy: vertical, course: course, speed: speed, timestamp: time))
        case .reference:
            let id = try decodeRecordID(&r)
            let at = r.offset
            switch try r.u8() {
            case 0: return .reference(Reference(recordID: id, action: .none))
            case 1: return .reference(Reference(recordID: id, action: .deleteSelf))
            case let b: throw CodecError("bad reference action \(b)", offset: at)
            }
        case .asset:
            let hash = try r.string()
            return .asset(Asset(contentHash: hash, size: Int64(bitPattern: try r.varint())))
        }
    }
}

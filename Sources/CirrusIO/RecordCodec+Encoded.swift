// Fields held encoded: the codec's half of `RecordFields(encoded:count:decoder:)`.
//
// A record read for a query result keeps its fields' bytes when they meet EncodedFields'
// invariants: `checkFields` walks them as decoding would — every tag, length, UTF-8 string,
// location mask, zone tag and reference action — without building a value, and accepts them
// when their names are ASCII and strictly ascending. Bytes it accepts decode without error, so
// the decoder below never meets damage: damage is found at the read, as eager decoding finds it.

import RecordModel

extension RecordCodec {
    /// The count of the fields at the reader (a count, then name/value pairs) when they are well
    /// formed and can be held encoded (names ASCII and strictly ascending), the reader then past
    /// them; nil otherwise (the reader's position is then unspecified).
    static func checkFields(_ r: inout ByteReader) -> Int? {
        do throws(CodecError) {
            let count = try r.varint()
            guard count <= UInt64(r.remaining) else { return nil }
            var previous: UnsafeRawBufferPointer? = nil
            for _ in 0..<count {
                let n = try r.length()
                let name = UnsafeRawBufferPointer(rebasing: r.buffer[r.offset..<r.offset + n])
                r.offset += n
                guard ByteReader.isASCII(name) else { return nil }
                if let previous, compareBytes(previous, name) >= 0 { return nil }
                previous = name
                try checkValue(&r)
            }
            return Int(count)
        } catch {
            return nil
        }
    }

    /// The count of fields that ``fieldsHoldEncoded(_:)`` accepted, the reader then at the end
    /// (where the fields end, as that check found).
    @inline(__always)
    static func checkedFieldCount(_ r: inout ByteReader) throws(CodecError) -> Int {
        let count = try r.varint()
        r.offset = r.buffer.count
        return Int(truncatingIfNeeded: count)
    }

    /// Whether a record payload decodes with its fields held encoded: a sound header, fields that
    /// the reader's walk (`checkFields`) accepts, nothing after them. A segment's writer asks once per row and
    /// records the answer beside the row's CRC (`rowsums`), so a reader whose CRC matches holds
    /// the fields without walking them (`decode(_:names:encodedFields:fieldsChecked:)`).
    public static func fieldsHoldEncoded(_ buffer: UnsafeRawBufferPointer) -> Bool {
        var r = ByteReader(buffer)
        do throws(CodecError) {
            _ = try walkHeader(&r)
            guard checkFields(&r) != nil else { return false }
            return r.isAtEnd
        } catch {
            return false
        }
    }

    /// Moves past a record's version, id, type and system fields, checking what decoding
    /// checks, to its field count; returns where the type's UTF-8 bytes are.
    static func walkHeader(_ r: inout ByteReader) throws(CodecError) -> Range<Int> {
        let v = try r.u8()
        guard v == version else { throw CodecError("unsupported record codec version \(v)", offset: r.offset - 1) }
        try checkRecordID(&r)
        let type = try checkString(&r)
        let maskAt = r.offset
        let mask = try r.u8()
        guard mask & ~31 == 0 else { throw CodecError("unknown system-field bits \(mask)", offset: maskAt) }
        if mask & 1 != 0 { _ = try r.zigzag() }
        if mask & 2 != 0 { _ = try r.zigzag() }
        if mask & 4 != 0 { try checkRecordID(&r) }
        if mask & 8 != 0 { try checkRecordID(&r) }
        if mask & 16 != 0 { try checkString(&r) }
        return type
    }

    /// The record type and field names of an encoded record, its values moved past without
    /// being decoded (a rows section's sample for its name table); throws where the record's
    /// structure is damaged.
    public static func typeAndFieldNames(
        _ payload: UnsafeRawBufferPointer
    ) throws(CodecError) -> (recordType: String, names: [String]) {
        var r = ByteReader(payload)
        let type = try walkHeader(&r)
        let countAt = r.offset
        let count = try r.varint()
        guard count <= UInt64(r.remaining) else { throw CodecError("field count \(count) too large", offset: countAt) }
        var names: [String] = []
        names.reserveCapacity(Int(count))
        for _ in 0..<count {
            names.append(try r.string())
            try skipValue(&r)
        }
        return (String(decoding: UnsafeRawBufferPointer(rebasing: payload[type]), as: UTF8.self), names)
    }

    /// Moves past a record id, checking what ``decodeRecordID(_:)`` checks.
    static func checkRecordID(_ r: inout ByteReader) throws(CodecError) {
        try checkString(&r)
        let at = r.offset
        switch try r.u8() {
        case 0: return
        case 1:
            try checkString(&r)
            try checkString(&r)
        case let b: throw CodecError("bad zone id tag \(b)", offset: at)
        }
    }

    /// Moves past one tagged value, checking everything ``decodeValue(_:)`` checks.
    static func checkValue(_ r: inout ByteReader) throws(CodecError) {
        let (scalar, count) = try valueHead(&r)
        if scalar == .string && count > 1 { return try checkStrings(count, &r) }
        for _ in 0..<count {
            switch scalar {
            case .string: try checkString(&r)
            case .reference:
                try checkString(&r)
                let zoneAt = r.offset
                switch try r.u8() {
                case 0: break
                case 1:
                    try checkString(&r)
                    try checkString(&r)
                case let b: throw CodecError("bad zone id tag \(b)", offset: zoneAt)
                }
                let actionAt = r.offset
                guard try r.u8() <= 1 else { throw CodecError("bad reference action", offset: actionAt) }
            case .asset:
                try checkString(&r)
                _ = try r.varint()
            default: try skipBody(scalar, &r)
            }
        }
    }

    /// Moves past `count` length-prefixed strings (a list's body), checking that each is UTF-8.
    /// When every length is below 128 its prefix is one ASCII byte, and the whole body is
    /// checked in one pass: an ASCII byte is never part of a multi-byte sequence, so a sequence
    /// cut by a prefix fails there as it fails at the end of its own string, and the body is
    /// well formed exactly when every string is. (Lists of many short names — a city's
    /// alternate names — were checked string by string.)
    static func checkStrings(_ count: UInt64, _ r: inout ByteReader) throws(CodecError) {
        let start = r.offset
        var shortPrefixes = true
        for _ in 0..<count {
            let at = r.offset
            let n = try r.length()
            if r.offset - at != 1 { shortPrefixes = false }
            r.offset += n
        }
        if shortPrefixes {
            guard ByteReader.isValidUTF8(UnsafeRawBufferPointer(rebasing: r.buffer[start..<r.offset])) else {
                throw CodecError("invalid UTF-8 in a string of the list", offset: start)
            }
            return
        }
        r.offset = start
        for _ in 0..<count { try checkString(&r) }
    }

    /// Moves past a length-prefixed string, checking that it is UTF-8; returns where its bytes are.
    @discardableResult
    static func checkString(_ r: inout ByteReader) throws(CodecError) -> Range<Int> {
        let n = try r.length()
        let start = r.offset
        r.offset += n
        guard ByteReader.isValidUTF8(UnsafeRawBufferPointer(rebasing: r.buffer[start..<start + n])) else {
            throw CodecError("invalid UTF-8 in string", offset: start)
        }
        return start..<start + n
    }

    /// Decodes fields that ``checkFields(_:)`` accepted whose names are not in a table (a
    /// segment's ``NameTable`` decodes its own rows' fields).
    final class PlainFieldDecoder: FieldDecoding {
        /// The one decoder: it holds nothing.
        static let shared = PlainFieldDecoder()

        func decodeAll(_ bytes: UnsafeRawBufferPointer) -> [RecordFields.Field] {
            RecordCodec.decodeAllFields(bytes, names: nil)
        }

        func decode(_ name: String, in bytes: UnsafeRawBufferPointer) -> FieldValue? {
            RecordCodec.decodeField(name, in: bytes)
        }
    }

    /// Every field of `bytes` that ``checkFields(_:)`` accepted, names taken from `names` where
    /// they are in it.
    static func decodeAllFields(_ bytes: UnsafeRawBufferPointer, names: NameTable?) -> [RecordFields.Field] {
        var out: [RecordFields.Field] = []
        var r = ByteReader(bytes)
        withExtendedLifetime(names) {
            let lookup = names?.lookup
            do throws(CodecError) {
                let count = try r.varint()
                out.reserveCapacity(Int(count))
                var last = -1
                for _ in 0..<count {
                    let at = r.offset
                    let n = try r.length()
                    let raw = UnsafeRawBufferPointer(rebasing: r.buffer[r.offset..<r.offset + n])
                    let name: String
                    if let lookup, let k = lookup.index(of: raw, hint: last + 1) {
                        r.offset += n
                        name = lookup.names[k]
                        last = k
                    } else {
                        r.offset = at
                        name = try r.string()
                    }
                    out.append(RecordFields.Field(name, try decodeValue(&r)))
                }
            } catch {
                // Not reached: `checkFields` accepted these bytes, and it checks all that
                // decoding does. Were it reached, the fields decoded so far are returned.
            }
        }
        return out
    }

    /// The value of the field `name` in `bytes` that ``checkFields(_:)`` accepted, nil when
    /// they have none.
    static func decodeField(_ name: String, in bytes: UnsafeRawBufferPointer) -> FieldValue? {
        var name = name
        return name.withUTF8 { want -> FieldValue? in
            var r = ByteReader(bytes)
            do throws(CodecError) {
                let count = try r.varint()
                for _ in 0..<count {
                    let n = try r.length()
                    let raw = UnsafeRawBufferPointer(rebasing: r.buffer[r.offset..<r.offset + n])
                    r.offset += n
                    let order = compareBytes(raw, UnsafeRawBufferPointer(want))
                    if order == 0 { return try decodeValue(&r) }
                    if order > 0 { return nil }  // names ascend: it is not here
                    try skipValue(&r)
                }
            } catch {
                // Not reached (see `decodeAllFields`).
            }
            return nil
        }
    }
}

extension RecordCodec.NameTable: FieldDecoding {
    /// Every field of `bytes` (fields of a row of this table's segment that
    /// ``RecordCodec/checkFields(_:)`` accepted).
    package func decodeAll(_ bytes: UnsafeRawBufferPointer) -> [RecordFields.Field] {
        RecordCodec.decodeAllFields(bytes, names: self)
    }

    /// The value of the field `name` in `bytes`, nil when they have none.
    package func decode(_ name: String, in bytes: UnsafeRawBufferPointer) -> FieldValue? {
        RecordCodec.decodeField(name, in: bytes)
    }
}

extension ByteReader {
    /// Whether `p` is well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing
    /// past U+10FFFF) — what `String(validating:)` accepts, checked without making a string.
    public static func isValidUTF8(_ p: UnsafeRawBufferPointer) -> Bool {
        let n = p.count
        var i = 0
        while i < n {
            let b0 = p[i]
            if b0 < 0x80 {
                // ASCII runs eight bytes at a time (most text, and every list prefix).
                i += 1
                while i + 8 <= n, p.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                    i += 8
                }
                continue
            }
            let width: Int
            var low: UInt8 = 0x80  // the second byte's bounds (overlongs and surrogates excluded)
            var high: UInt8 = 0xBF
            switch b0 {
            case 0xC2...0xDF: width = 2
            case 0xE0:
                width = 3
                low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: width = 3
            case 0xED:
                width = 3
                high = 0x9F
            case 0xF0:
                width = 4
                low = 0x90
            case 0xF1...0xF3: width = 4
            case 0xF4:
                width = 4
                high = 0x8F
            default: return false
            }
            guard i + width <= n, p[i + 1] >= low, p[i + 1] <= high else { return false }
            for k in 2..<width where p[i + k] & 0xC0 != 0x80 { return false }
            i += width
        }
        return true
    }
}

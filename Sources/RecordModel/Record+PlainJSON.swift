// Record+PlainJSON: a Web Services record line in its plain shape read straight from its bytes —
// no JSON tree for the record or its fields.
//
// The plain shape is what exporters write: an object with `recordName`, `recordType`, `fields`
// and optionally `recordChangeTag`, `zoneID`, `created`, `modified` (each at most once, in any
// order, nothing else), every field an object `{"value": …, "type": "<canonical name>"}` with
// those two members once each. Strings,
// numbers and the values of other types are read by the same reader functions the general path
// uses (`JSONReader.string`, `number`, `value`), and converted by the same initializers, so what
// comes out equals what `Record(webServicesJSON: JSONValue.parse(…))` makes of the line.
// Anything else — another member, a repeated key, a type spelled otherwise, a missing type, any
// syntax or value error — gives nil: the caller then reads the line the general way, which also
// words every error. This path never reports an error of its own.

extension Record {
    /// The record of a plain-shape line (see the file's head), nil for any other line.
    public static func plainWebServicesJSON(_ bytes: UnsafeBufferPointer<UInt8>) -> Record? {
        var r = JSONReader(bytes: bytes)
        var name: String?
        var type: String?
        var fields: [RecordFields.Field]?
        var zone: ZoneID?
        var tag: String?
        var created: (Timestamp?, RecordID?)?
        var modified: (Timestamp?, RecordID?)?
        r.skipSpace()
        guard r.at(UInt8(ascii: "{")) else { return nil }
        r.pos += 1
        while true {
            r.skipSpace()
            guard r.at(UInt8(ascii: "\"")), let key = try? r.string(), r.colon() else { return nil }
            switch key {
            case "recordName" where name == nil:
                guard r.at(UInt8(ascii: "\"")), let s = try? r.string() else { return nil }
                name = s
            case "recordType" where type == nil:
                guard r.at(UInt8(ascii: "\"")), let s = try? r.string() else { return nil }
                type = s
            case "fields" where fields == nil:
                guard let f = plainFields(&r) else { return nil }
                fields = f
            case "recordChangeTag" where tag == nil:
                guard r.at(UInt8(ascii: "\"")), let s = try? r.string() else { return nil }
                tag = s
            case "zoneID" where zone == nil:
                guard let v = try? r.value(depth: 1), let z = try? ZoneID(webServicesJSON: v) else { return nil }
                zone = z
            case "created" where created == nil:
                guard let v = try? r.value(depth: 1), let c = try? readStamp(v, "created") else { return nil }
                created = c
            case "modified" where modified == nil:
                guard let v = try? r.value(depth: 1), let m = try? readStamp(v, "modified") else { return nil }
                modified = m
            default: return nil
            }
            guard let more = r.next(closing: UInt8(ascii: "}")) else { return nil }
            if !more { break }
        }
        r.skipSpace()
        guard r.pos == bytes.count, let name, let type else { return nil }
        var record = Record(recordType: type, recordID: RecordID(recordName: name, zoneID: zone ?? .default))
        if let tag { record.recordChangeTag = tag }
        if let created { (record.creationDate, record.creatorUserRecordID) = created }
        if let modified { (record.modificationDate, record.lastModifiedUserRecordID) = modified }
        if let fields { record.fields = RecordFields(collecting: fields) }
        return record
    }

    /// `{"name": {"value": …, "type": "…"}, …}`, the reader after its `}`.
    private static func plainFields(_ r: inout JSONReader) -> [RecordFields.Field]? {
        guard r.at(UInt8(ascii: "{")) else { return nil }
        r.pos += 1
        var out: [RecordFields.Field] = []
        r.skipSpace()
        if r.at(UInt8(ascii: "}")) {
            r.pos += 1
            return out
        }
        while true {
            r.skipSpace()
            guard r.at(UInt8(ascii: "\"")), let name = try? r.string(), r.colon(),
                let value = plainField(&r)
            else { return nil }
            out.append(RecordFields.Field(name, value))
            guard let more = r.next(closing: UInt8(ascii: "}")) else { return nil }
            if !more { break }
        }
        return out
    }

    /// `{"value": …, "type": "…"}` (either order), the reader after its `}`. A value before its
    /// type is passed over (`skipValue`), read once the type is known, and must end where the
    /// pass ended.
    private static func plainField(_ r: inout JSONReader) -> FieldValue? {
        guard r.at(UInt8(ascii: "{")) else { return nil }
        r.pos += 1
        var type: FieldType?
        var value: FieldValue?
        var pending: Range<Int>?  // a value seen before the type
        while true {
            r.skipSpace()
            guard r.at(UInt8(ascii: "\"")), let key = try? r.string(), r.colon() else { return nil }
            switch key {
            case "type" where type == nil:
                guard r.at(UInt8(ascii: "\"")), let s = try? r.string(), let t = FieldType.exactNames[s] else {
                    return nil
                }
                type = t
            case "value" where value == nil && pending == nil:
                if let type {
                    guard let v = typedValue(&r, type) else { return nil }
                    value = v
                } else {
                    let start = r.pos
                    guard r.skipValue() else { return nil }
                    pending = start..<r.pos
                }
            default: return nil
            }
            guard let more = r.next(closing: UInt8(ascii: "}")) else { return nil }
            if !more { break }
        }
        guard let type else { return nil }
        if let pending {
            let after = r.pos
            r.pos = pending.lowerBound
            guard let v = typedValue(&r, type), r.pos == pending.upperBound else { return nil }
            r.pos = after
            return v
        }
        return value
    }

    /// A value of `type` at the reader, read as the general path reads it: strings and numbers
    /// (and lists of them) directly, other types through their JSON value.
    private static func typedValue(_ r: inout JSONReader, _ type: FieldType) -> FieldValue? {
        switch (type.scalar, type.isList) {
        case (.string, false):
            guard r.at(UInt8(ascii: "\"")), let s = try? r.string() else { return nil }
            return .string(s)
        case (.int64, false):
            guard r.pos < r.b.count, r.b[r.pos] == UInt8(ascii: "-") || r.isDigit(r.b[r.pos]),
                let v = try? r.number(), case .integer(let i) = v
            else { return nil }
            return .int64(i)
        case (.string, true), (.int64, true):
            guard r.at(UInt8(ascii: "[")) else { return nil }
            r.pos += 1
            var items: [FieldValue] = []
            r.skipSpace()
            if r.at(UInt8(ascii: "]")) {
                r.pos += 1
                return .list(items)
            }
            while true {
                r.skipSpace()
                guard let item = typedValue(&r, FieldType(type.scalar)) else { return nil }
                items.append(item)
                guard let more = r.next(closing: UInt8(ascii: "]")) else { return nil }
                if !more { break }
            }
            return .list(items)
        default:
            guard let v = try? r.value(depth: 3) else { return nil }
            return try? FieldValue(webServicesJSONValue: v, type: type)
        }
    }
}

extension JSONReader {
    /// Whether the next byte is `c`.
    @inline(__always)
    func at(_ c: UInt8) -> Bool { pos < b.count && b[pos] == c }

    /// Past a `:` between spaces; false when there is none.
    mutating func colon() -> Bool {
        skipSpace()
        guard at(UInt8(ascii: ":")) else { return false }
        pos += 1
        skipSpace()
        return true
    }

    /// After a member or element: true past a `,` (another follows), false past `closing`, nil
    /// for anything else.
    mutating func next(closing: UInt8) -> Bool? {
        skipSpace()
        guard pos < b.count else { return nil }
        if b[pos] == UInt8(ascii: ",") {
            pos += 1
            return true
        }
        guard b[pos] == closing else { return nil }
        pos += 1
        return false
    }

    /// Moves past one JSON value without reading it: strings to their closing quote (escapes
    /// stepped over), arrays and objects to their matching bracket, anything else to the next
    /// `,`, `}`, `]` or space. False when the input ends first. Loose on purpose: the value is
    /// read strictly afterwards, and must end where this pass ended.
    mutating func skipValue() -> Bool {
        var depth = 0
        while pos < b.count {
            switch b[pos] {
            case UInt8(ascii: "\""):
                pos += 1
                while pos < b.count && b[pos] != UInt8(ascii: "\"") { pos += b[pos] == UInt8(ascii: "\\") ? 2 : 1 }
                guard pos < b.count else { return false }
                pos += 1
                if depth == 0 { return true }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                pos += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if depth == 0 { return true }
                depth -= 1
                pos += 1
                if depth == 0 { return true }
            case UInt8(ascii: ","), 0x20, 0x0A, 0x0D, 0x09:
                if depth == 0 { return true }
                pos += 1
            default: pos += 1
            }
        }
        return depth == 0
    }
}

// JSON: a small, fast JSON reader and writer over UTF-8 bytes.
//
// Owns the `JSONValue` tree, parsing (RFC 8259, with a depth limit and byte-offset errors) and
// serialization (compact, keys in insertion order). Web Services records and predicate
// arguments are read through it; it does not know what the values mean (see
// FieldValue+WebServicesJSON.swift). Numbers keep their integer form when written without a
// fraction or exponent, so INT64 values above 2^53 survive.

/// A JSON value. Objects keep their keys in source order.
///
/// ```swift
/// let v = try JSONValue.parse(#"{"id": 9007199254740993, "tags": ["a", "b"]}"#)
/// v["id"]?.int64Value          // 9007199254740993 (kept exact: no fraction, no exponent)
/// v["tags"]?.kindName          // "array"
/// v.jsonText                   // {"id":9007199254740993,"tags":["a","b"]}
/// ```
public enum JSONValue: Sendable, Hashable {
    /// `null`
    case null
    /// `true` or `false`
    case bool(Bool)
    /// A number written without fraction or exponent that fits Int64.
    case integer(Int64)
    /// Any other number.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object: its members in source order.
    case object([(String, JSONValue)])

    /// Structural equality; object members compare in order, so the same members in another order differ.
    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.integer(let x), .integer(let y)): return x == y
        case (.number(let x), .number(let y)): return x == y
        case (.string(let x), .string(let y)): return x == y
        case (.array(let x), .array(let y)): return x == y
        case (.object(let x), .object(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    /// Hashes what `==` compares.
    public func hash(into h: inout Hasher) {
        switch self {
        case .null: h.combine(0)
        case .bool(let b): h.combine(b)
        case .integer(let i): h.combine(i)
        case .number(let d): h.combine(d)
        case .string(let s): h.combine(s)
        case .array(let a): h.combine(a)
        case .object(let o):
            for (k, v) in o {
                h.combine(k)
                h.combine(v)
            }
        }
    }

    /// The member named `key` of an object (first match), or nil.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        for (k, v) in members where k == key { return v }
        return nil
    }

    /// The string when the value is a string.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The value as a Double when it is any number.
    public var doubleValue: Double? {
        switch self {
        case .integer(let i): return Double(i)
        case .number(let d): return d
        default: return nil
        }
    }

    /// The value as an Int64 when it is an integer, or a number with no fractional part in range.
    public var int64Value: Int64? {
        switch self {
        case .integer(let i): return i
        case .number(let d) where d.rounded() == d && abs(d) < 9.2e18: return Int64(d)
        default: return nil
        }
    }

    /// A short name of the JSON type for messages.
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .integer, .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

/// A JSON syntax error at a byte offset.
public struct JSONError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, e.g. `unterminated array`.
    public var message: String
    /// Byte offset of the problem in the UTF-8 input.
    public var offset: Int

    /// An error at byte `offset`.
    public init(_ message: String, offset: Int) {
        self.message = message
        self.offset = offset
    }

    /// `<message> at byte <offset>`.
    public var description: String { "\(message) at byte \(offset)" }
}

extension JSONValue {
    /// Maximum nesting of arrays and objects accepted by `parse`.
    public static let maximumDepth = 512

    /// Parses one JSON document; surrounding whitespace is allowed, anything else is an error.
    public static func parse(_ text: String) throws(JSONError) -> JSONValue {
        var copy = text
        let result = copy.withUTF8 { buf -> Result<JSONValue, JSONError> in
            do throws(JSONError) { return .success(try parse(bytes: buf)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Parses one JSON document from UTF-8 bytes.
    public static func parse(bytes: UnsafeBufferPointer<UInt8>) throws(JSONError) -> JSONValue {
        var p = JSONReader(bytes: bytes)
        p.skipSpace()
        let v = try p.value(depth: 0)
        p.skipSpace()
        if p.pos != bytes.count { throw JSONError("unexpected text after the JSON value", offset: p.pos) }
        return v
    }
}

struct JSONReader {
    let b: UnsafeBufferPointer<UInt8>
    var pos = 0

    init(bytes: UnsafeBufferPointer<UInt8>) { self.b = bytes }

    mutating func skipSpace() {
        while pos < b.count, b[pos] == 0x20 || b[pos] == 0x0A || b[pos] == 0x0D || b[pos] == 0x09 { pos += 1 }
    }

    mutating func value(depth: Int) throws(JSONError) -> JSONValue {
        guard pos < b.count else { throw JSONError("unexpected end of JSON", offset: pos) }
        switch b[pos] {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw JSONError("unexpected character '\(Character(Unicode.Scalar(b[pos])))'", offset: pos)
        }
    }

    mutating func literal(_ word: StaticString) throws(JSONError) {
        let n = word.utf8CodeUnitCount
        let start = word.utf8Start
        guard pos + n <= b.count else { throw JSONError("unexpected end of JSON", offset: pos) }
        for i in 0..<n where b[pos + i] != start[i] {
            throw JSONError("invalid literal", offset: pos)
        }
        pos += n
    }

    mutating func object(depth: Int) throws(JSONError) -> JSONValue {
        if depth > JSONValue.maximumDepth { throw JSONError("JSON nested too deeply", offset: pos) }
        pos += 1
        var members: [(String, JSONValue)] = []
        skipSpace()
        if pos < b.count, b[pos] == UInt8(ascii: "}") {
            pos += 1
            return .object(members)
        }
        while true {
            skipSpace()
            guard pos < b.count, b[pos] == UInt8(ascii: "\"") else {
                throw JSONError("expected a string key", offset: pos)
            }
            let key = try string()
            skipSpace()
            guard pos < b.count, b[pos] == UInt8(ascii: ":") else { throw JSONError("expected ':'", offset: pos) }
            pos += 1
            skipSpace()
            members.append((key, try value(depth: depth)))
            skipSpace()
            guard pos < b.count else { throw JSONError("unterminated object", offset: pos) }
            if b[pos] == UInt8(ascii: ",") {
                pos += 1
            } else if b[pos] == UInt8(ascii: "}") {
                pos += 1
                return .object(members)
            } else {
                throw JSONError("expected ',' or '}'", offset: pos)
            }
        }
    }

    mutating func array(depth: Int) throws(JSONError) -> JSONValue {
        if depth > JSONValue.maximumDepth { throw JSONError("JSON nested too deeply", offset: pos) }
        pos += 1
        var items: [JSONValue] = []
        skipSpace()
        if pos < b.count, b[pos] == UInt8(ascii: "]") {
            pos += 1
            return .array(items)
        }
        while true {
            skipSpace()
            items.append(try value(depth: depth))
            skipSpace()
            guard pos < b.count else { throw JSONError("unterminated array", offset: pos) }
            if b[pos] == UInt8(ascii: ",") {
                pos += 1
            } else if b[pos] == UInt8(ascii: "]") {
                pos += 1
                return .array(items)
            } else {
                throw JSONError("expected ',' or ']'", offset: pos)
            }
        }
    }

    mutating func string() throws(JSONError) -> String {
        let open = pos
        pos += 1
        let start = pos
        // Fast path: no escapes.
        while pos < b.count {
            let c = b[pos]
            if c == UInt8(ascii: "\"") {
                let s = String(decoding: UnsafeBufferPointer(rebasing: b[start..<pos]), as: UTF8.self)
                pos += 1
                return s
            }
            if c == UInt8(ascii: "\\") { break }
            if c < 0x20 { throw JSONError("control character in string", offset: pos) }
            pos += 1
        }
        var out = Array(b[start..<pos])
        while pos < b.count {
            let c = b[pos]
            if c == UInt8(ascii: "\"") {
                pos += 1
                return String(decoding: out, as: UTF8.self)
            }
            if c < 0x20 { throw JSONError("control character in string", offset: pos) }
            if c != UInt8(ascii: "\\") {
                out.append(c)
                pos += 1
                continue
            }
            pos += 1
            guard pos < b.count else { break }
            let e = b[pos]
            pos += 1
            switch e {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800..<0xDC00).contains(scalar) {
                    guard pos + 1 < b.count, b[pos] == UInt8(ascii: "\\"), b[pos + 1] == UInt8(ascii: "u") else {
                        throw JSONError("unpaired surrogate", offset: pos)
                    }
                    pos += 2
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else {
                        throw JSONError("invalid surrogate pair", offset: pos)
                    }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00..<0xE000).contains(scalar) {
                    throw JSONError("unpaired surrogate", offset: pos)
                }
                guard let u = Unicode.Scalar(scalar) else { throw JSONError("invalid \\u escape", offset: pos) }
                out.append(contentsOf: Array(String(Character(u)).utf8))
            default: throw JSONError("invalid escape '\\\(Character(Unicode.Scalar(e)))'", offset: pos - 1)
            }
        }
        throw JSONError("unterminated string", offset: open)
    }

    mutating func hex4() throws(JSONError) -> UInt32 {
        guard pos + 4 <= b.count else { throw JSONError("truncated \\u escape", offset: pos) }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = b[pos]
            let d: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(c - UInt8(ascii: "A") + 10)
            default: throw JSONError("invalid hex digit in \\u escape", offset: pos)
            }
            v = v << 4 | d
            pos += 1
        }
        return v
    }

    mutating func number() throws(JSONError) -> JSONValue {
        let start = pos
        var isInteger = true
        if b[pos] == UInt8(ascii: "-") { pos += 1 }
        guard pos < b.count, isDigit(b[pos]) else { throw JSONError("invalid number", offset: start) }
        if b[pos] == UInt8(ascii: "0") {
            pos += 1
        } else {
            while pos < b.count, isDigit(b[pos]) { pos += 1 }
        }
        if pos < b.count, b[pos] == UInt8(ascii: ".") {
            isInteger = false
            pos += 1
            guard pos < b.count, isDigit(b[pos]) else { throw JSONError("invalid number", offset: start) }
            while pos < b.count, isDigit(b[pos]) { pos += 1 }
        }
        if pos < b.count, b[pos] == UInt8(ascii: "e") || b[pos] == UInt8(ascii: "E") {
            isInteger = false
            pos += 1
            if pos < b.count, b[pos] == UInt8(ascii: "+") || b[pos] == UInt8(ascii: "-") { pos += 1 }
            guard pos < b.count, isDigit(b[pos]) else { throw JSONError("invalid number", offset: start) }
            while pos < b.count, isDigit(b[pos]) { pos += 1 }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: b[start..<pos]), as: UTF8.self)
        if isInteger, let i = Int64(text) { return .integer(i) }
        guard let d = Double(text), d.isFinite else { throw JSONError("number out of range", offset: start) }
        return .number(d)
    }

    func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }
}

extension JSONValue {
    /// Compact JSON text. Strings are escaped per RFC 8259; non-ASCII is written as UTF-8.
    public var jsonText: String {
        var out = ""
        write(to: &out)
        return out
    }

    /// Appends the compact JSON text of this value to `out`.
    public func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let v): out += v ? "true" : "false"
        case .integer(let i): out += String(i)
        case .number(let d):
            if d.isFinite {
                out += d.rounded() == d && abs(d) < 1e15 ? String(Int64(d)) : "\(d)"
            } else {
                out += "null"
            }
        case .string(let s): JSONValue.writeString(s, to: &out)
        case .array(let items):
            out += "["
            for (i, v) in items.enumerated() {
                if i > 0 { out += "," }
                v.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (i, (k, v)) in members.enumerated() {
                if i > 0 { out += "," }
                JSONValue.writeString(k, to: &out)
                out += ":"
                v.write(to: &out)
            }
            out += "}"
        }
    }

    static func writeString(_ s: String, to out: inout String) {
        out += "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if u.value < 0x20 {
                    let h = String(u.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - h.count) + h
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        out += "\""
    }
}

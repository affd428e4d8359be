// SQLBuilder: SQL text with numbered parameters. Values never enter the text: every value is a
// `$n` parameter bound as text (PostgreSQL's text input forms) and cast to its column's type, so
// what a user stores or searches for cannot change a statement.
//
// Text forms (one per column family — docs/scale-out.md):
//   number     an Int64's digits → $n::bigint; a Double's shortest round-trip digits when
//              |d| < 2^53, its exact integer digits above → $n::float8 (a value is first put in
//              its column's kind exactly: ColumnType.exact and .bound)
//   string     the string (U+0000 refused: PostgreSQL text cannot hold it)  → $n::text COLLATE "C"
//   date       milliseconds since 1970                          → $n::bigint
//   bytes      lower-case hex                                   → decode($n, 'hex')
//   reference  record name, U+0001, zone name, U+0001, zone owner → $n::text COLLATE "C"
//   location   longitude and latitude                           → ST_MakePoint(...)::geography

import CirrusFacade
import Foundation
import PostgresNIO
import RecordModel

/// A statement under construction: its text and its parameters.
struct SQLBuilder {
    var binds = PostgresBindings()
    /// The parameters' values as text, for `explain` and messages.
    var texts: [String] = []

    /// A new parameter holding `text`; returns `$n`.
    mutating func param(_ text: String) -> String {
        binds.append(text)
        texts.append(text)
        return "$\(binds.count)"
    }

    /// A new text-array parameter; returns `$n`.
    mutating func param(_ texts: [String]) -> String {
        binds.append(texts)
        self.texts.append("{" + texts.joined(separator: ",") + "}")
        return "$\(binds.count)"
    }

    /// The SQL expression of one scalar value of `type` (the value must have an exact form in it:
    /// `ColumnType.exact`).
    mutating func value(_ v: FieldValue, _ type: ColumnType) throws(CirrusError) -> String {
        guard let v = type.exact(v) else { throw Self.noForm(v, type) }
        switch (type.family, v) {
        case (.location, .location(let l)):
            return "ST_SetSRID(ST_MakePoint(\(param(SQLText.double(l.longitude)))::float8, "
                + "\(param(SQLText.double(l.latitude)))::float8), 4326)::geography"
        case (.bytes, .bytes(let b)): return "decode(\(param(SQLText.hex(b))), 'hex')"
        default:
            let text = try SQLText.text(v)
            return "\(param(text))::\(type.castType)"
        }
    }

    /// The error for a value that has no exact form in a column's type.
    static func noForm(_ v: FieldValue, _ type: ColumnType) -> CirrusError {
        CirrusError(.invalidArguments, "\(v.typeName) \(v) has no exact \(type.sqlElementType) form")
    }

    /// The SQL expression of an array of values of `type` (each must have an exact form in it).
    mutating func array(_ vs: [FieldValue], _ type: ColumnType) throws(CirrusError) -> String {
        if type.family == .bytes {
            // bytea[] from one array literal of `\x…` elements: no subquery (Citus refuses
            // subqueries in INSERTs, and a scalar expression plans more simply everywhere).
            var hex: [String?] = []
            for v in vs {
                guard case .bytes(let b) = v else {
                    throw CirrusError(.invalidArguments, "\(v.typeName) in a list of bytes")
                }
                hex.append("\\x" + SQLText.hex(b))
            }
            return "\(param(ArrayLiteral.make(hex)))::bytea[]"
        }
        var texts: [String] = []
        for v in vs {
            guard let e = type.exact(v) else { throw Self.noForm(v, type) }
            texts.append(try SQLText.text(e))
        }
        let p = param(texts)
        switch type.family {
        case .bytes: return "\(p)::text[]::bytea[]"
        case .number, .date: return "\(p)::text[]::\(type.sqlElementType)[]"
        case .string, .reference: return "\(p)::text[]"
        case .location: throw CirrusError(.invalidArguments, "lists of locations have no column in PostgreSQL")
        }
    }
}

/// The text forms of values (see the header).
enum SQLText {
    /// The text form of a scalar value other than bytes and locations.
    static func text(_ v: FieldValue) throws(CirrusError) -> String {
        switch v {
        case .int64(let i): return String(i)
        case .double(let d): return try number(d)
        case .string(let s):
            if s.utf8.contains(0) {
                throw CirrusError(.invalidArguments, "a string with U+0000 cannot be stored in PostgreSQL text")
            }
            return s
        case .date(let t): return String(t.millisecondsSince1970)
        case .bytes(let b): return hex(b)
        case .reference(let r): return referenceKey(r.recordID)
        case .location(let l): return "\(double(l.longitude)) \(double(l.latitude))"
        case .asset, .list:
            throw CirrusError(.invalidArguments, "a \(v.typeName) value has no column form in PostgreSQL")
        }
    }

    /// A Double as numeric text (exact against Int64, see the header).
    static func number(_ d: Double) throws(CirrusError) -> String {
        guard d.isFinite else { throw CirrusError(.invalidArguments, "\(d) is not a finite number") }
        let m = d.magnitude
        if m < 9_007_199_254_740_992 { return double(d) }
        if d >= -9_223_372_036_854_775_808.0 && d < 9_223_372_036_854_775_808.0 { return String(Int64(d)) }
        if d >= 0 && d < 18_446_744_073_709_551_616.0 { return String(UInt64(d)) }
        return double(d)
    }

    /// A Double's shortest round-trip digits (`1e-05`, `0.5`), which float8 and numeric read.
    static func double(_ d: Double) -> String { d == 0 ? "0" : "\(d)" }

    /// Lower-case hex of bytes.
    static func hex(_ b: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(b.count * 2)
        for x in b {
            out.append(digits[Int(x >> 4)])
            out.append(digits[Int(x & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The reference key of a record id: ordered like `RecordID` for names without control characters.
    static func referenceKey(_ id: RecordID) -> String {
        id.recordName + "\u{1}" + id.zoneID.zoneName + "\u{1}" + id.zoneID.ownerName
    }

    /// The smallest string after every string starting with `prefix` (nil: none, e.g. empty prefix).
    static func successor(ofPrefix prefix: String) -> String? {
        var scalars = Array(prefix.unicodeScalars)
        while let last = scalars.popLast() {
            var v = last.value + 1
            if v == 0xD800 { v = 0xE000 }
            if let u = Unicode.Scalar(v) {
                scalars.append(u)
                var s = String.UnicodeScalarView()
                s.append(contentsOf: scalars)
                return String(s)
            }
        }
        return nil
    }

    /// The smallest byte string after every byte string starting with `prefix` (nil: none).
    static func successor(ofPrefix prefix: [UInt8]) -> [UInt8]? {
        var b = prefix
        while let last = b.popLast() {
            if last < 0xFF {
                b.append(last + 1)
                return b
            }
        }
        return nil
    }

    /// A tsquery of token groups: ALL (every token) or ANY (some group with all its tokens).
    static func tsquery(_ groups: [[String]], all: Bool) -> String {
        func lexeme(_ t: String) -> String {
            "'" + SQLName.doubling("'", in: SQLName.doubling("\\", in: t)) + "'"
        }
        if all { return groups.flatMap { $0 }.map(lexeme).joined(separator: " & ") }
        return groups.map { "(" + $0.map(lexeme).joined(separator: " & ") + ")" }.joined(separator: " | ")
    }
}

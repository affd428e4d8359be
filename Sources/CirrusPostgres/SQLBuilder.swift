// SQLBuilder: SQL text with numbered parameters. Values never enter the text: every value is a
// `$n` parameter bound as text (PostgreSQL's text input forms) and cast to its column's type, so
// what a user stores or searches for cannot change a statement.
//
// Text forms (one per column family — docs/scale-out.md):
//   number     exact decimal: an Int64's digits; a Double's shortest round-trip digits when
//              |d| < 2^53 (every integer there is itself a Double, so order against Int64s is
//              kept), its exact integer digits above            → $n::numeric
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

    /// The SQL expression of one scalar value of `family` (the value must be of that family).
    mutating func value(_ v: FieldValue, _ family: ColumnFamily) throws(CirrusError) -> String {
        switch (family, v) {
        case (.location, .location(let l)):
            return "ST_SetSRID(ST_MakePoint(\(param(SQLText.double(l.longitude)))::float8, "
                + "\(param(SQLText.double(l.latitude)))::float8), 4326)::geography"
        case (.bytes, .bytes(let b)): return "decode(\(param(SQLText.hex(b))), 'hex')"
        default:
            let text = try SQLText.text(v)
            return "\(param(text))::\(Self.castType(family))"
        }
    }

    /// The SQL expression of an array of values of `family` (each must be of that family).
    mutating func array(_ vs: [FieldValue], _ family: ColumnFamily) throws(CirrusError) -> String {
        if family == .bytes {
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
        for v in vs { texts.append(try SQLText.text(v)) }
        let p = param(texts)
        switch family {
        case .bytes: return "\(p)::text[]::bytea[]"
        case .number: return "\(p)::text[]::numeric[]"
        case .date: return "\(p)::text[]::bigint[]"
        case .string, .reference: return "\(p)::text[]"
        case .location: throw CirrusError(.invalidArguments, "lists of locations have no column in PostgreSQL")
        }
    }

    /// The cast of a family's text form.
    static func castType(_ family: ColumnFamily) -> String {
        switch family {
        case .number: "numeric"
        case .string, .reference: "text COLLATE \"C\""
        case .date: "bigint"
        case .bytes: "bytea"
        case .location: "geography"
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
            "'" + t.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "''") + "'"
        }
        if all { return groups.flatMap { $0 }.map(lexeme).joined(separator: " & ") }
        return groups.map { "(" + $0.map(lexeme).joined(separator: " & ") + ")" }.joined(separator: " | ")
    }
}

// JSONBytes: a response's JSON written straight into UTF-8 bytes. The same text as
// `JSONValue.jsonText` (RecordModel), which builds a String scalar by scalar — a quarter of the
// server's time under load went there. Strings are copied a run of plain bytes at a time;
// numbers that are not integers go through RecordModel's own formatting so both agree.

import RecordModel

extension JSONValue {
    /// The compact JSON text of this value as UTF-8 bytes (equal to `Array(jsonText.utf8)`).
    var jsonBytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        Self.write(self, to: &out)
        return out
    }

    static func write(_ v: JSONValue, to out: inout [UInt8]) {
        switch v {
        case .null: out += "null".utf8
        case .bool(let b): out += (b ? "true" : "false").utf8
        case .integer(let i): writeInteger(i, to: &out)
        case .number: out += v.jsonText.utf8
        case .string(let s): writeString(s, to: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                write(item, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, (k, value)) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                writeString(k, to: &out)
                out.append(UInt8(ascii: ":"))
                write(value, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let hex = Array("0123456789abcdef".utf8)

    /// Decimal digits of `i` without a String in between.
    static func writeInteger(_ i: Int64, to out: inout [UInt8]) {
        if i < 0 { out.append(UInt8(ascii: "-")) }
        var m = i.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var n = 0
            repeat {
                digits[n] = UInt8(truncatingIfNeeded: m % 10) + UInt8(ascii: "0")
                m /= 10
                n += 1
            } while m > 0
            while n > 0 {
                n -= 1
                out.append(digits[n])
            }
        }
    }

    static func writeString(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { bytes in
            var start = 0
            for (i, b) in bytes.enumerated() where b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") {
                out += bytes[start..<i]
                start = i + 1
                switch b {
                case UInt8(ascii: "\""): out += #"\""#.utf8
                case UInt8(ascii: "\\"): out += #"\\"#.utf8
                case UInt8(ascii: "\n"): out += #"\n"#.utf8
                case UInt8(ascii: "\r"): out += #"\r"#.utf8
                case UInt8(ascii: "\t"): out += #"\t"#.utf8
                default: out += [UInt8(ascii: "\\"), UInt8(ascii: "u"), 48, 48, hex[Int(b >> 4)], hex[Int(b & 15)]]
                }
            }
            out += bytes[start...]
        }
        out.append(UInt8(ascii: "\""))
    }
}

// Parser+Literals: the values of number and string tokens.
//
// Owns number conversion (with the sign of a folded unary minus, so `-9223372036854775808` is
// Int64.min; an integer beyond Int64 becomes a Double; a Double beyond the finite range is an
// error) and string decoding (backslash escapes, `%%`). Decoding happens here rather than in
// the lexer so tokens stay plain values without a heap payload.
//
// String escapes: `\n \t \r \0 \' \" \\ \uXXXX` (a UTF-16 surrogate pair written as two `\u`
// escapes is one scalar). Any other escape is an error. `%%` is one `%`; any other `%` is
// literal text, so `'%@'` is the two characters `%@`.

extension Parser {
    func numberLiteral(_ t: Token, negative: Bool) throws -> Literal {
        let bytes = UnsafeBufferPointer(rebasing: src[t.start..<t.end])
        var radix: UInt64 = 10
        var digits = bytes[...]
        if bytes.count > 2, bytes[0] == UInt8(ascii: "0") {
            switch bytes[1] | 0x20 {
            case UInt8(ascii: "x"): radix = 16
            case UInt8(ascii: "o"): radix = 8
            case UInt8(ascii: "b"): radix = 2
            default: break
            }
            if radix != 10 { digits = bytes[2...] }
        }
        var magnitude: UInt64 = 0
        var overflow = false
        var approximate = 0.0  // the value in Double, kept for radix forms that overflow
        for b in digits {
            guard let v = ByteClass.hexValue(b), radix != 10 || v < 10 else {
                // A decimal point or exponent: a Double.
                return try double(t, negative: negative)
            }
            approximate = approximate * Double(radix) + Double(v)
            if !overflow {
                let (m1, o1) = magnitude.multipliedReportingOverflow(by: radix)
                let (m2, o2) = m1.addingReportingOverflow(UInt64(v))
                (magnitude, overflow) = (m2, o1 || o2)
            }
        }
        if !overflow {
            if !negative, magnitude <= UInt64(Int64.max) { return .integer(Int64(magnitude)) }
            if negative, magnitude <= UInt64(Int64.max) + 1 {
                return .integer(Int64(truncatingIfNeeded: 0 &- magnitude))
            }
        }
        if radix == 10 { return try double(t, negative: negative) }
        return try finite(negative ? -approximate : approximate, t)
    }

    private func double(_ t: Token, negative: Bool) throws -> Literal {
        guard let value = Double(text(t)) else {
            throw SyntaxError("invalid number '\(shown(t))'", range: t.range)
        }
        return try finite(negative ? -value : value, t)
    }

    private func finite(_ value: Double, _ t: Token) throws -> Literal {
        guard value.isFinite else {
            throw SyntaxError(
                "number '\(shown(t))' is out of range", range: t.range,
                hint: "numbers are limited to about ±1.8e308")
        }
        return .double(value)
    }

    /// The value of a string token (quotes removed, escapes and `%%` decoded).
    func stringValue(_ t: Token, plain: Bool) throws -> String {
        let inner = UnsafeBufferPointer(rebasing: src[(t.start + 1)..<(t.end - 1)])
        if plain { return String(decoding: inner, as: UTF8.self) }
        var out: [UInt8] = []
        out.reserveCapacity(inner.count)
        var j = t.start + 1
        let end = t.end - 1
        while j < end {
            let b = src[j]
            if b == UInt8(ascii: "%"), j + 1 < end, src[j + 1] == UInt8(ascii: "%") {
                out.append(b)
                j += 2
                continue
            }
            guard b == UInt8(ascii: "\\") else {
                out.append(b)
                j += 1
                continue
            }
            let e = src[j + 1]  // the lexer guarantees a byte after a backslash inside quotes
            switch e {
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "0"): out.append(0x00)
            case UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(e)
            case UInt8(ascii: "u"):
                var (scalar, length) = try unicodeEscape(at: j, end: end)
                if (0xD800...0xDBFF).contains(scalar) {
                    let low =
                        j + length < end - 1 && src[j + length] == UInt8(ascii: "\\")
                            && src[j + length + 1] == UInt8(ascii: "u")
                        ? try unicodeEscape(at: j + length, end: end) : nil
                    guard let low, (0xDC00...0xDFFF).contains(low.0) else {
                        throw SyntaxError(
                            "unpaired surrogate in '\(text(j, j + length))'", range: SourceRange(j, j + length),
                            hint: "write the character itself, or both halves of the pair")
                    }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low.0 - 0xDC00)
                    length += low.1
                }
                guard let s = Unicode.Scalar(scalar) else {
                    throw SyntaxError(
                        "unpaired surrogate in '\(text(j, j + length))'", range: SourceRange(j, j + length))
                }
                UTF8.encode(s) { out.append($0) }
                j += length
                continue
            default:
                var escapeEnd = j + 2
                while escapeEnd < end, src[escapeEnd] & 0xC0 == 0x80 { escapeEnd += 1 }
                throw SyntaxError(
                    "unknown escape '\(text(j, escapeEnd))' in string", range: SourceRange(j, escapeEnd),
                    hint: "escapes are \\n \\t \\r \\0 \\' \\\" \\\\ and \\uXXXX")
            }
            j += 2
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `\uXXXX` at `j`: the code unit and the escape's length (6).
    private func unicodeEscape(at j: Int, end: Int) throws -> (UInt32, Int) {
        var value: UInt32 = 0
        for k in (j + 2)..<(j + 6) {
            guard k < end, let v = ByteClass.hexValue(src[k]) else {
                throw SyntaxError(
                    "invalid escape '\(text(j, Swift.min(k + 1, end)))' in string",
                    range: SourceRange(j, Swift.min(k + 1, end)),
                    hint: "\\u takes exactly four hex digits, e.g. \\u00e9")
            }
            value = value << 4 | UInt32(v)
        }
        return (value, 6)
    }
}

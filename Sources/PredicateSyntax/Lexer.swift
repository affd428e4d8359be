// Lexer: UTF-8 bytes → tokens with byte ranges.
//
// Owns the token grammar: whitespace, words and reserved words (case-insensitive, `#word`
// escapes), `$variables`, quoted strings (only delimited here; escapes are decoded by the
// parser), number shapes, format placeholders and every operator spelling. It works on an
// `UnsafeBufferPointer<UInt8>` and appends plain `Token` values: no `String`, no `Character`,
// no allocation per token. It does not know the grammar above tokens.

struct Lexer {
    let src: UnsafeBufferPointer<UInt8>
    var pos = 0

    init(_ src: UnsafeBufferPointer<UInt8>) { self.src = src }

    /// All tokens of the source, ending with `.end`.
    static func tokenize(_ src: UnsafeBufferPointer<UInt8>) throws -> [Token] {
        var lexer = Lexer(src)
        var tokens: [Token] = []
        tokens.reserveCapacity(src.count / 3 + 4)
        while true {
            let t = try lexer.next()
            tokens.append(t)
            if t.kind == .end { return tokens }
        }
    }

    @inline(__always) private func peek(_ offset: Int = 0) -> UInt8 {
        let i = pos + offset
        return i < src.count ? src[i] : 0
    }

    /// The text of `start..<end` for messages (short inputs only; never on the success path).
    func text(_ start: Int, _ end: Int) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: src[start..<Swift.min(end, src.count)]), as: UTF8.self)
    }

    mutating func next() throws -> Token {
        while pos < src.count {
            let b = src[pos]
            if b == 0x20 || (b >= 0x09 && b <= 0x0D) {
                pos += 1
            } else if b >= 0xC2, let n = unicodeSpaceLength(at: pos) {
                pos += n
            } else {
                break
            }
        }
        let start = pos
        guard pos < src.count else { return Token(kind: .end, start: start, end: start) }
        let b = src[pos]
        if ByteClass.isIdentifierStart(b) { return word(start) }
        if ByteClass.isDigit(b) || (b == UInt8(ascii: ".") && ByteClass.isDigit(peek(1))) { return try number(start) }
        pos += 1
        func punct(_ p: Punct, length: Int = 1) -> Token {
            pos = start + length
            return Token(kind: .punct(p), start: start, end: pos)
        }
        switch b {
        case UInt8(ascii: "'"), UInt8(ascii: "\""): return try string(start, quote: b)
        case UInt8(ascii: "="):
            switch peek() {
            case UInt8(ascii: "="): return punct(.equal, length: 2)
            case UInt8(ascii: "<"): return punct(.lessOrEqual, length: 2)
            case UInt8(ascii: ">"): return punct(.greaterOrEqual, length: 2)
            default: return punct(.equal)
            }
        case UInt8(ascii: "!"): return peek() == UInt8(ascii: "=") ? punct(.notEqual, length: 2) : punct(.bang)
        case UInt8(ascii: "<"):
            switch peek() {
            case UInt8(ascii: "="): return punct(.lessOrEqual, length: 2)
            case UInt8(ascii: ">"): return punct(.notEqual, length: 2)
            default: return punct(.less)
            }
        case UInt8(ascii: ">"): return peek() == UInt8(ascii: "=") ? punct(.greaterOrEqual, length: 2) : punct(.greater)
        case UInt8(ascii: "&"):
            if peek() == UInt8(ascii: "&") { return punct(.andAnd, length: 2) }
            throw SyntaxError(
                "unexpected character '&'", range: SourceRange(start, start + 1), hint: "write '&&' or AND")
        case UInt8(ascii: "|"):
            if peek() == UInt8(ascii: "|") { return punct(.orOr, length: 2) }
            throw SyntaxError(
                "unexpected character '|'", range: SourceRange(start, start + 1), hint: "write '||' or OR")
        case UInt8(ascii: "+"): return punct(.plus)
        case UInt8(ascii: "-"): return punct(.minus)
        case UInt8(ascii: "*"): return peek() == UInt8(ascii: "*") ? punct(.power, length: 2) : punct(.star)
        case UInt8(ascii: "/"): return punct(.slash)
        case UInt8(ascii: "."): return punct(.dot)
        case UInt8(ascii: ","): return punct(.comma)
        case UInt8(ascii: ":"): return punct(.colon)
        case UInt8(ascii: "@"): return punct(.at)
        case UInt8(ascii: "("): return punct(.leftParen)
        case UInt8(ascii: ")"): return punct(.rightParen)
        case UInt8(ascii: "["): return punct(.leftBracket)
        case UInt8(ascii: "]"): return punct(.rightBracket)
        case UInt8(ascii: "{"): return punct(.leftBrace)
        case UInt8(ascii: "}"): return punct(.rightBrace)
        case UInt8(ascii: "#"), UInt8(ascii: "$"):
            guard ByteClass.isIdentifierStart(peek()), pos >= src.count || unicodeSpaceLength(at: pos) == nil else {
                let what = b == UInt8(ascii: "#") ? "a key after '#'" : "a variable name after '$'"
                throw SyntaxError(
                    "expected \(what)", range: SourceRange(start, start + 1),
                    hint: b == UInt8(ascii: "#") ? "'#word' uses a reserved word as a key, e.g. #size" : "e.g. $x")
            }
            skipIdentifier()
            return Token(kind: b == UInt8(ascii: "#") ? .escapedKey : .variable, start: start, end: pos)
        case UInt8(ascii: "%"): return try placeholder(start)
        default:
            let shown = b < 0x20 || b == 0x7F ? "\\u{\(String(b, radix: 16))}" : String(UnicodeScalar(b))
            throw SyntaxError("unexpected character '\(shown)'", range: SourceRange(start, start + 1))
        }
    }

    /// Moves past identifier bytes: ASCII letters, digits, `_`, and any non-ASCII character
    /// except the Unicode spaces (which separate tokens like ASCII whitespace).
    private mutating func skipIdentifier() {
        while pos < src.count, ByteClass.isIdentifierContinue(src[pos]) {
            if src[pos] >= 0xC2, unicodeSpaceLength(at: pos) != nil { return }
            pos += 1
        }
    }

    /// The UTF-8 length of the Unicode space at `i` (NBSP, NEL, U+1680, U+2000–U+200B,
    /// U+2028, U+2029, U+202F, U+205F, U+3000, U+FEFF), or nil.
    func unicodeSpaceLength(at i: Int) -> Int? {
        let b0 = src[i]
        let b1 = i + 1 < src.count ? src[i + 1] : 0
        let b2 = i + 2 < src.count ? src[i + 2] : 0
        switch (b0, b1) {
        case (0xC2, 0xA0), (0xC2, 0x85): return 2
        case (0xE1, 0x9A) where b2 == 0x80: return 3
        case (0xE2, 0x80) where (0x80...0x8B).contains(b2) || b2 == 0xA8 || b2 == 0xA9 || b2 == 0xAF: return 3
        case (0xE2, 0x81) where b2 == 0x9F: return 3
        case (0xE3, 0x80) where b2 == 0x80: return 3
        case (0xEF, 0xBB) where b2 == 0xBF: return 3
        default: return nil
        }
    }

    /// A word: reserved word, the hyphenated UTI operators, or an identifier.
    private mutating func word(_ start: Int) -> Token {
        skipIdentifier()
        let w = UnsafeBufferPointer(rebasing: src[start..<pos])
        if let k = Keyword.lookup(w) { return Token(kind: .keyword(k), start: start, end: pos) }
        // UTI-CONFORMS-TO and UTI-EQUALS: only when written without spaces around the hyphens.
        if w.count == 3, w[0] & 0xDF == UInt8(ascii: "U"), w[1] & 0xDF == UInt8(ascii: "T"),
            w[2] & 0xDF == UInt8(ascii: "I")
        {
            for (suffix, keyword) in [("-CONFORMS-TO", Keyword.utiConformsTo), ("-EQUALS", .utiEquals)]
            where matchesSuffix(suffix) {
                pos += suffix.utf8.count
                return Token(kind: .keyword(keyword), start: start, end: pos)
            }
        }
        return Token(kind: .identifier, start: start, end: pos)
    }

    private func matchesSuffix(_ suffix: String) -> Bool {
        var i = pos
        for c in suffix.utf8 {
            guard i < src.count else { return false }
            let b = src[i]
            if c == UInt8(ascii: "-") ? b != c : b & 0xDF != c { return false }
            i += 1
        }
        return i == src.count || !ByteClass.isIdentifierContinue(src[i])
    }

    /// `'…'` or `"…"`: finds the closing quote (a backslash skips the next byte). Escapes are
    /// checked and decoded by the parser.
    private mutating func string(_ start: Int, quote: UInt8) throws -> Token {
        var plain = true
        while pos < src.count {
            let c = src[pos]
            if c == quote {
                pos += 1
                return Token(kind: .string(plain: plain), start: start, end: pos)
            }
            if c == UInt8(ascii: "\\") {
                plain = false
                pos += 2
                continue
            }
            if c == UInt8(ascii: "%") { plain = false }
            pos += 1
        }
        throw SyntaxError(
            "unterminated string", range: SourceRange(start, src.count),
            hint: "close it with \(quote == UInt8(ascii: "'") ? "'" : "\"")")
    }

    /// Numbers: `12`, `1.5`, `.5`, `2e3`, `1E-7`, `0x1F`, `0o17`, `0b101`. The shape only; the
    /// value is computed by the parser. A number running into letters (`12ab`, `0x`) is an error.
    private mutating func number(_ start: Int) throws -> Token {
        if src[pos] == UInt8(ascii: "0"), let radix = radixPrefix(peek(1)) {
            pos += 2
            let digitsStart = pos
            while pos < src.count, let v = ByteClass.hexValue(src[pos]), v < radix { pos += 1 }
            if pos == digitsStart {
                skipIdentifier()
                throw SyntaxError(
                    "invalid number '\(text(start, pos))'", range: SourceRange(start, pos),
                    hint: "expected digits after '\(text(start, start + 2))'")
            }
        } else {
            while pos < src.count, ByteClass.isDigit(src[pos]) { pos += 1 }
            if peek() == UInt8(ascii: "."), ByteClass.isDigit(peek(1)) {
                pos += 1
                while pos < src.count, ByteClass.isDigit(src[pos]) { pos += 1 }
            }
            if peek() | 0x20 == UInt8(ascii: "e") {
                let sign = peek(1) == UInt8(ascii: "+") || peek(1) == UInt8(ascii: "-") ? 1 : 0
                if ByteClass.isDigit(peek(1 + sign)) {
                    pos += 1 + sign
                    while pos < src.count, ByteClass.isDigit(src[pos]) { pos += 1 }
                }
            }
        }
        if pos < src.count, ByteClass.isIdentifierContinue(src[pos]), unicodeSpaceLength(at: pos) == nil {
            skipIdentifier()
            throw SyntaxError("invalid number '\(text(start, pos))'", range: SourceRange(start, pos))
        }
        return Token(kind: .number, start: start, end: pos)
    }

    private func radixPrefix(_ b: UInt8) -> UInt8? {
        switch b | 0x20 {
        case UInt8(ascii: "x"): 16
        case UInt8(ascii: "o"): 8
        case UInt8(ascii: "b"): 2
        default: nil
        }
    }

    /// A printf-style placeholder (Placeholder.Specifier): `%`, a length modifier, a conversion.
    private mutating func placeholder(_ start: Int) throws -> Token {
        if peek() == UInt8(ascii: "%") {
            throw SyntaxError(
                "'%%' is a percent sign only inside a quoted string", range: SourceRange(start, start + 2),
                hint: "write '%' inside quotes, e.g. 'up 5%'")
        }
        // Length modifier letters, then one conversion letter.
        var end = start + 1
        while end < src.count, end < start + 3,
            [
                UInt8(ascii: "h"), UInt8(ascii: "l"), UInt8(ascii: "q"),
                UInt8(ascii: "L"), UInt8(ascii: "z"), UInt8(ascii: "t"), UInt8(ascii: "j"),
            ].contains(src[end])
        {
            end += 1
        }
        if end < src.count { end += 1 }
        guard let spec = Placeholder.Specifier(rawValue: text(start, end)) else {
            var shown = pos
            while shown < src.count, shown < start + 4, ByteClass.isIdentifierContinue(src[shown]) { shown += 1 }
            shown = Swift.max(shown, Swift.min(pos + 1, src.count))
            throw SyntaxError(
                "unknown format specifier '\(text(start, Swift.max(shown, end)))'",
                range: SourceRange(start, Swift.max(shown, end)),
                hint: "use %@ for values, %K for keys, or a printf conversion such as %d, %lld, %f or %g")
        }
        let length = end - start
        pos = start + length
        return Token(kind: .placeholder(spec), start: start, end: pos)
    }
}

// Token: what the lexer produces — a kind and a UTF-8 byte range into the source.
//
// Owns the token kinds, the punctuation and reserved-word tables, and the case-insensitive
// keyword lookup over raw bytes. It does not own the text of names, strings or numbers: those
// stay in the source buffer and the parser decodes them from the token's range, so lexing
// allocates nothing but the token array.

/// Punctuation and operators, each with every spelling it has in the source.
enum Punct: UInt8, Sendable {
    case equal  // = ==
    case notEqual  // != <>
    case less  // <
    case lessOrEqual  // <= =<
    case greater  // >
    case greaterOrEqual  // >= =>
    case andAnd  // &&
    case orOr  // ||
    case bang  // !
    case plus, minus, star, slash
    case power  // **
    case dot, comma, colon, at
    case leftParen, rightParen, leftBracket, rightBracket, leftBrace, rightBrace
}

/// Reserved words (CKQUERY.md §1). Matched case-insensitively; `#word` turns one into a key.
enum Keyword: UInt8, Sendable, CaseIterable {
    case and, or, `in`, not, all, any, some, none, like, caseInsensitive, ci, matches, contains
    case beginsWith, endsWith, between, null, `nil`, `self`, `true`, yes, `false`, no
    case first, last, size, anyKey, subquery, cast, truePredicate, falsePredicate
    case utiConformsTo, utiEquals, tokenMatches, function, ternary

    /// The upper-case spelling.
    var spelling: String {
        switch self {
        case .and: "AND"
        case .or: "OR"
        case .in: "IN"
        case .not: "NOT"
        case .all: "ALL"
        case .any: "ANY"
        case .some: "SOME"
        case .none: "NONE"
        case .like: "LIKE"
        case .caseInsensitive: "CASEINSENSITIVE"
        case .ci: "CI"
        case .matches: "MATCHES"
        case .contains: "CONTAINS"
        case .beginsWith: "BEGINSWITH"
        case .endsWith: "ENDSWITH"
        case .between: "BETWEEN"
        case .null: "NULL"
        case .nil: "NIL"
        case .self: "SELF"
        case .true: "TRUE"
        case .yes: "YES"
        case .false: "FALSE"
        case .no: "NO"
        case .first: "FIRST"
        case .last: "LAST"
        case .size: "SIZE"
        case .anyKey: "ANYKEY"
        case .subquery: "SUBQUERY"
        case .cast: "CAST"
        case .truePredicate: "TRUEPREDICATE"
        case .falsePredicate: "FALSEPREDICATE"
        case .utiConformsTo: "UTI-CONFORMS-TO"
        case .utiEquals: "UTI-EQUALS"
        case .tokenMatches: "TOKENMATCHES"
        case .function: "FUNCTION"
        case .ternary: "TERNARY"
        }
    }

    /// The comparison operator this keyword spells, if any.
    var comparisonOperator: ComparisonOperator? {
        switch self {
        case .between: .between
        case .in: .in
        case .contains: .contains
        case .beginsWith: .beginsWith
        case .endsWith: .endsWith
        case .like: .like
        case .matches: .matches
        case .tokenMatches: .tokenMatches
        case .utiConformsTo: .utiConformsTo
        case .utiEquals: .utiEquals
        default: nil
        }
    }

    /// Word keywords indexed by length (the hyphenated UTI operators are matched by the lexer).
    private static let byLength: [[(bytes: [UInt8], keyword: Keyword)]] = {
        var table = [[(bytes: [UInt8], keyword: Keyword)]](repeating: [], count: 16)
        for k in Keyword.allCases where k != .utiConformsTo && k != .utiEquals {
            let b = Array(k.spelling.utf8)
            table[b.count].append((b, k))
        }
        return table
    }()

    /// The keyword spelled by `bytes` (any letter case), or nil.
    static func lookup(_ bytes: UnsafeBufferPointer<UInt8>) -> Keyword? {
        let n = bytes.count
        guard n >= 2, n < 16 else { return nil }
        candidates: for (spelling, keyword) in byLength[n] {
            for i in 0..<n where bytes[i] & 0xDF != spelling[i] {
                continue candidates
            }
            return keyword
        }
        return nil
    }

    /// Whether `word` (any letter case) is a reserved word, so a key spelled so needs `#`.
    static func isReserved(_ word: String) -> Bool {
        var word = word
        return word.withUTF8 { lookup($0) } != nil
    }
}

/// What a token is. Names, strings and numbers keep their text in the source range.
enum TokenKind: Equatable, Sendable {
    /// End of input (always the last token; its range is empty, at the end).
    case end
    /// A word that is not reserved: a key, a function name, an option word.
    case identifier
    /// A reserved word.
    case keyword(Keyword)
    /// `#word`: the key is the range minus the `#`.
    case escapedKey
    /// `$name`: the name is the range minus the `$`.
    case variable
    /// A quoted string, range including the quotes; `plain` when it holds no `\` and no `%`,
    /// so its value is the bytes between the quotes as they are.
    case string(plain: Bool)
    /// A number literal; the parser converts the text (it knows whether a `-` precedes it).
    case number
    /// `%@`, `%K`, `%d`, …
    case placeholder(Placeholder.Specifier)
    case punct(Punct)
}

/// One token: kind and half-open UTF-8 byte range.
struct Token: Sendable {
    var kind: TokenKind
    var start: Int
    var end: Int

    var range: SourceRange { SourceRange(start, end) }
}

/// Byte classes used by the lexer and the literal decoder.
enum ByteClass {
    @inline(__always) static func isIdentifierStart(_ b: UInt8) -> Bool {
        (b | 0x20 >= UInt8(ascii: "a") && b | 0x20 <= UInt8(ascii: "z")) || b == UInt8(ascii: "_") || b >= 0x80
    }

    @inline(__always) static func isIdentifierContinue(_ b: UInt8) -> Bool {
        isIdentifierStart(b) || isDigit(b)
    }

    @inline(__always) static func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }

    /// Value of a hex digit, or nil.
    @inline(__always) static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): b - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): b - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): b - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

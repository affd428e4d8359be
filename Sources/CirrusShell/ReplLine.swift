// ReplLine: splitting a REPL input line into words and clauses, keeping UTF-8 byte offsets so
// errors can put a caret under the offending part of the line the user typed.
//
// Words are separated by blanks; quotes ('…' "…") and brackets (() [] {}) group. Clause keywords
// (`where`, `sort`, `limit`, `keys`) count only at the top level, outside quotes and brackets, as
// whole words — so `name == 'sort'` is safe, and a field called `limit` must be written `#limit`.

import Cirrus
import PredicateSyntax
import QueryChecker

/// The checker's error (named apart from Foundation's `PredicateError`).
typealias CheckerError = PredicateError

/// A piece of the input line with its byte range in the line.
struct Span: Sendable, Hashable {
    var text: String
    var start: Int
    var end: Int
}

/// An error of a REPL command: a message, an optional hint, and where in the line it is.
struct ReplError: Error, Sendable {
    var message: String
    var hint: String?
    /// Byte range in the input line; nil when the whole command is at fault.
    var range: SourceRange?

    init(_ message: String, hint: String? = nil, at range: SourceRange? = nil) {
        self.message = message
        self.hint = hint
        self.range = range
    }

    init(_ message: String, hint: String? = nil, span: Span) {
        self.init(message, hint: hint, at: SourceRange(span.start, max(span.end, span.start + 1)))
    }

    /// An error from the database: its message without the code (CloudKit's wording).
    init(wrapping error: any Error, span: Span? = nil) {
        let message = (error as? CirrusError)?.message ?? "\(error)"
        if let span { self.init(message, span: span) } else { self.init(message) }
    }

    /// The input line with a caret under the range, the message and the hint.
    func rendered(line: String) -> String {
        var out = range.map { Diagnostics.caret(source: line, range: $0) } ?? ""
        out += "error: \(message)\n"
        if let hint { out += "hint: \(hint)\n" }
        return out
    }
}

/// Where a scan of a REPL line stands in quotes ('…', "…", a backslash escaping the next byte)
/// and brackets ((), [], {}): the one scanner behind `words` and `clauses`.
struct Nesting {
    private(set) var depth = 0
    private(set) var quote: UInt8? = nil

    /// Outside every quote and bracket.
    var isTopLevel: Bool { depth == 0 && quote == nil }

    /// Steps over `b[i]` (and the byte a backslash escapes inside quotes); returns the next index.
    mutating func skip(_ b: [UInt8], at i: Int) -> Int {
        let c = b[i]
        if let q = quote {
            if c == 0x5C { return i + 2 }
            if c == q { quote = nil }
            return i + 1
        }
        switch c {
        case 0x27, 0x22: quote = c
        case 0x28, 0x5B, 0x7B: depth += 1
        case 0x29, 0x5D, 0x7D: depth = max(0, depth - 1)
        default: break
        }
        return i + 1
    }
}

enum ReplLine {
    /// Blank-separated words of `line[from...]`, grouping quotes and brackets.
    static func words(_ line: String, from: Int = 0) -> [Span] {
        let b = Array(line.utf8)
        var out: [Span] = []
        var i = from
        while i < b.count {
            while i < b.count, b[i] == 0x20 || b[i] == 0x09 { i += 1 }
            guard i < b.count else { break }
            let start = i
            var nesting = Nesting()
            while i < b.count {
                if nesting.isTopLevel, b[i] == 0x20 || b[i] == 0x09 { break }
                i = nesting.skip(b, at: i)
            }
            i = min(i, b.count)
            out.append(Span(text: String(decoding: b[start..<i], as: UTF8.self), start: start, end: i))
        }
        return out
    }

    /// Splits `line[from...]` at top-level clause keywords. The first clause (before any keyword)
    /// has keyword nil. Each clause's span is its text without the keyword, trimmed.
    static func clauses(_ line: String, from: Int, keywords: Set<String>) -> [(keyword: Span?, body: Span)] {
        let b = Array(line.utf8)
        var marks: [Span] = []
        var i = from
        var nesting = Nesting()
        while i < b.count {
            let c = b[i]
            let wordStart = i == from || b[i - 1] == 0x20 || b[i - 1] == 0x09
            if nesting.isTopLevel, wordStart, isLetter(c) {
                var j = i
                while j < b.count, isLetter(b[j]) { j += 1 }
                let endsWord = j == b.count || b[j] == 0x20 || b[j] == 0x09
                let w = String(decoding: b[i..<j], as: UTF8.self).lowercased()
                if endsWord, keywords.contains(w) { marks.append(Span(text: w, start: i, end: j)) }
                i = j
                continue
            }
            i = nesting.skip(b, at: i)
        }
        var out: [(Span?, Span)] = []
        var cursor = from
        var keyword: Span? = nil
        for m in marks {
            out.append((keyword, trimmed(b, cursor, m.start)))
            keyword = m
            cursor = m.end
        }
        out.append((keyword, trimmed(b, cursor, b.count)))
        return out.filter { $0.0 != nil || !$0.1.text.isEmpty }
    }

    static func trimmed(_ b: [UInt8], _ s: Int, _ e: Int) -> Span {
        var s = s
        var e = e
        while s < e, b[s] == 0x20 || b[s] == 0x09 { s += 1 }
        while e > s, b[e - 1] == 0x20 || b[e - 1] == 0x09 { e -= 1 }
        return Span(text: String(decoding: b[s..<e], as: UTF8.self), start: s, end: e)
    }

    static func isLetter(_ c: UInt8) -> Bool { (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) }
}

// SyntaxError: the one error type of PredicateSyntax, and its rendering to text.
//
// Owns the message, the byte range it points at and an optional hint. The lexer and parser
// build these; nothing else in the module throws. Rendering (with a caret line under the
// source) happens here and nowhere else.

/// A malformed predicate: what is wrong, where (UTF-8 byte offsets), and what to write instead.
///
/// ```swift
/// do { _ = try PredicateParser.parse("name == 'x") }
/// catch { print(error.rendered(in: "name == 'x")) }
/// // 8..<10: unterminated string
/// // name == 'x
/// //         ^^
/// ```
public struct SyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, e.g. `expected ')' to close '(' at 4`.
    public var message: String
    /// The bytes the error points at; empty (start == end) for a position, e.g. the end of input.
    public var range: SourceRange
    /// A suggestion of what to write instead, if there is one.
    public var hint: String?

    /// An error with its message, the bytes it points at and an optional hint.
    public init(_ message: String, range: SourceRange, hint: String? = nil) {
        self.message = message
        self.range = range
        self.hint = hint
    }

    /// `"<range>: <message> (<hint>)"`.
    public var description: String {
        var s = "\(range): \(message)"
        if let hint { s += " (\(hint))" }
        return s
    }

    /// The description, then the source line and a caret line under the error's range.
    public func rendered(in source: String) -> String {
        let bytes = Array(source.utf8)
        let start = Swift.max(0, Swift.min(range.start, bytes.count))
        let end = Swift.max(start, Swift.min(range.end, bytes.count))
        var lineStart = start
        while lineStart > 0, bytes[lineStart - 1] != UInt8(ascii: "\n") { lineStart -= 1 }
        var lineEnd = start
        while lineEnd < bytes.count, bytes[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
        let line = String(decoding: bytes[lineStart..<lineEnd], as: UTF8.self)
        // Columns count scalars, not bytes, so the caret lines up under non-ASCII text.
        let column = String(decoding: bytes[lineStart..<start], as: UTF8.self).unicodeScalars.count
        let width = String(decoding: bytes[start..<Swift.min(end, lineEnd)], as: UTF8.self).unicodeScalars.count
        let caret = String(repeating: " ", count: column) + String(repeating: "^", count: Swift.max(1, width))
        return description + "\n" + line + "\n" + caret
    }
}

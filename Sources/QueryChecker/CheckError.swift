// Diagnostics of the predicate front end: errors and warnings, and their one text rendering.
//
// A `PredicateError` is what a user sees for any predicate that is not accepted — malformed
// text (from the parser) or a well-formed predicate CloudKit does not support (from the checker):
// the message (CloudKit's wording where CloudKit has one), a hint of what to write instead, the
// source range in UTF-8 bytes, and the CKError code (12, invalidArguments, as CloudKit answers).

import PredicateSyntax
import RecordModel

/// Why a predicate was not accepted.
///
/// ```swift
/// do {
///     _ = try QueryChecker.check("a == 1 OR b == 2")
/// } catch {
///     error.kind     // .unsupported
///     error.range    // 7..<9, the OR keyword
///     print(error.rendered(source: "a == 1 OR b == 2"))
/// }
/// ```
public struct PredicateError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Which stage rejected the predicate.
    public enum Kind: String, Sendable, Hashable {
        /// Malformed text (the parser).
        case syntax
        /// Well-formed, but not in the CKQuery subset.
        case unsupported
        /// A placeholder without an argument, or an argument of the wrong kind.
        case argument
        /// A field, type or index option the schema does not have.
        case schema
    }

    /// Which stage rejected the predicate.
    public var kind: Kind
    /// The reason, in CloudKit's wording where CloudKit has one (`OR predicates are not
    /// supported`, `Unexpected expression`).
    public var message: String
    /// What to write instead, when there is something to say.
    public var hint: String?
    /// The offending part of the predicate, in UTF-8 byte offsets.
    public var range: SourceRange
    /// CloudKit's error code: 12 (invalidArguments) for every predicate error.
    public var code: Int { 12 }

    /// An error of `kind` with `message`, an optional `hint`, pointing at `range` (UTF-8 byte
    /// offsets into the predicate text; `SourceRange.none` when no part of the text is at
    /// fault, as for sort descriptors).
    public init(_ kind: Kind, _ message: String, hint: String? = nil, range: SourceRange) {
        self.kind = kind
        self.message = message
        self.hint = hint
        self.range = range
    }

    /// The message alone; `rendered(source:)` adds the caret and the hint.
    public var description: String { message }

    /// The message, the source line with a caret under the range, and the hint:
    ///
    ///     a == 1 OR b == 2
    ///            ^^
    ///     error: OR predicates are not supported
    ///     hint: …
    public func rendered(source: String) -> String {
        var out = Diagnostics.caret(source: source, range: range)
        out += "error: \(message)"
        if let hint { out += "\nhint: \(hint)" }
        return out
    }
}

/// A predicate that is accepted but may not behave the same on CloudKit (not portable).
///
/// Examples: `TRUEPREDICATE` inside an AND, `FALSEPREDICATE` (CloudKit's validator rejects it),
/// `BETWEEN` on dates, a string compared with `recordName`.
public struct CheckWarning: Sendable, Hashable, CustomStringConvertible {
    /// What may differ on CloudKit, and how to write it portably when there is a way.
    public var message: String
    /// The part of the predicate the warning is about, in UTF-8 byte offsets.
    public var range: SourceRange

    /// A warning with `message` about `range`.
    public init(_ message: String, range: SourceRange) {
        self.message = message
        self.range = range
    }

    /// The message.
    public var description: String { message }
}

/// Rendering helpers shared by errors and warnings.
public enum Diagnostics {
    /// The source line holding `range.start`, then a line with `^` under the range (at least one
    /// caret; a range past the end points just after the last character). Columns count
    /// characters, not bytes, so carets line up under non-ASCII text.
    public static func caret(source: String, range: SourceRange) -> String {
        let bytes = Array(source.utf8)
        let start = max(0, min(range.start, bytes.count))
        let end = max(start, min(range.end, bytes.count))
        var lineStart = start
        while lineStart > 0, bytes[lineStart - 1] != 0x0A { lineStart -= 1 }
        var lineEnd = start
        while lineEnd < bytes.count, bytes[lineEnd] != 0x0A { lineEnd += 1 }
        let line = String(decoding: bytes[lineStart..<lineEnd], as: UTF8.self)
        let column = String(decoding: bytes[lineStart..<start], as: UTF8.self).count
        let width = max(1, String(decoding: bytes[start..<min(end, lineEnd)], as: UTF8.self).count)
        return "  " + line + "\n  " + String(repeating: " ", count: column) + String(repeating: "^", count: width)
            + "\n"
    }
}

/// "a STRING", "an INT64": the article a type name takes when read aloud.
func withArticle(_ typeName: String) -> String {
    (typeName.first.map { "AEIOU".contains($0) } ?? false ? "an " : "a ") + typeName
}

/// CloudKit's generic rejection of an operand it cannot evaluate, with Cirrus's hint.
func unexpected(_ hint: String?, at range: SourceRange) -> PredicateError {
    PredicateError(.unsupported, "Unexpected expression", hint: hint, range: range)
}

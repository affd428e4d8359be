// CheckReport: the verdict on one predicate, and its text and JSON renderings.
//
// Used by `cirrus check` (text or `--json`), `cirrus check --jsonl` (one JSON object per input
// line) and the REPL. All the wording of a verdict lives here.

import PredicateSyntax
import QueryChecker
import RecordModel

/// The verdict of the checker on one predicate.
///
/// ```swift
/// let report = CheckReport(predicate: "name MATCHES 'a.*'", context: CheckContext())
/// report.isAccepted  // false
/// print(report.text)
/// // rejected
/// //   name MATCHES 'a.*'
/// //        ^^^^^^^
/// // error: MATCHES is not supported
/// // hint: CloudKit has no regular expressions; use BEGINSWITH or a token search
/// ```
public struct CheckReport: Sendable {
    /// Accepted or rejected.
    public enum Outcome: Sendable {
        /// The canonical form of the parsed predicate and the checked filters.
        case accepted(canonical: String, checked: CheckedPredicate)
        /// The parser's or the checker's error; its range points into ``CheckReport/predicate``.
        case rejected(PredicateError)
    }

    /// The predicate text as given.
    public var predicate: String
    /// The verdict.
    public var outcome: Outcome

    /// Parses and checks `predicate`.
    public init(predicate: String, context: CheckContext) {
        self.predicate = predicate
        do throws(PredicateError) {
            let (tree, checked) = try QueryChecker.parseAndCheck(predicate, context: context)
            outcome = .accepted(canonical: tree.formatString, checked: checked)
        } catch {
            outcome = .rejected(error)
        }
    }

    /// Whether the predicate was accepted (possibly with warnings).
    public var isAccepted: Bool {
        if case .accepted = outcome { return true }
        return false
    }

    /// The text `cirrus check` prints.
    public var text: String {
        switch outcome {
        case .accepted(let canonical, let checked):
            var out = "accepted\ncanonical: \(canonical)\nfilters:"
            switch checked.predicate {
            case .all: out += " none (every record of the type)"
            case .none: out += " none (no record: FALSEPREDICATE)"
            case .filters(let fs): for f in fs { out += "\n  \(f)" }
            }
            for w in checked.warnings {
                out += "\n" + Diagnostics.caret(source: predicate, range: w.range) + "warning: \(w.message)"
            }
            return out + "\n"
        case .rejected(let e):
            return "rejected\n" + e.rendered(source: predicate) + "\n"
        }
    }

    /// The JSON object of one verdict: `{"accepted", "canonical"?, "filters"?, "matchesNothing"?,
    /// "warnings"?, "error"?}` (`error` as in `PredicateError.json`; a warning is
    /// `{"message", "start", "end"}`).
    public var json: JSONValue {
        switch outcome {
        case .accepted(let canonical, let checked):
            var m: [(String, JSONValue)] = [("accepted", .bool(true)), ("canonical", .string(canonical))]
            m.append(("filters", .array(checked.predicate.filters.map(\.webServicesJSON))))
            if checked.predicate == .none { m.append(("matchesNothing", .bool(true))) }
            if !checked.warnings.isEmpty {
                m.append(
                    (
                        "warnings",
                        .array(
                            checked.warnings.map {
                                .object([
                                    ("message", .string($0.message)), ("start", .integer(Int64($0.range.start))),
                                    ("end", .integer(Int64($0.range.end))),
                                ])
                            })
                    ))
            }
            return .object(m)
        case .rejected(let e):
            return .object([("accepted", .bool(false)), ("error", e.json)])
        }
    }
}

extension PredicateError {
    /// `{"message", "kind", "code", "start", "end", "hint"?}`
    public var json: JSONValue {
        var m: [(String, JSONValue)] = [
            ("message", .string(message)), ("kind", .string(kind.rawValue)), ("code", .integer(Int64(code))),
            ("start", .integer(Int64(range.start))), ("end", .integer(Int64(range.end))),
        ]
        if let hint { m.append(("hint", .string(hint))) }
        return .object(m)
    }
}

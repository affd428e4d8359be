// Parsing and checking in one call.

import PredicateSyntax
import RecordModel

extension QueryChecker {
    /// Parses and checks a format string; syntax errors come back as `PredicateError` of kind `.syntax`.
    public static func check(
        _ text: String, context: CheckContext = CheckContext()
    ) throws(PredicateError) -> CheckedPredicate {
        try parseAndCheck(text, context: context).checked
    }

    /// Parses and checks a format string, returning the parsed tree too (for its canonical form).
    /// Errors point into `text`, including the keyword of an OR.
    public static func parseAndCheck(
        _ text: String, context: CheckContext = CheckContext()
    ) throws(PredicateError) -> (tree: Predicate, checked: CheckedPredicate) {
        let tree: Predicate
        do {
            tree = try PredicateParser.parse(text)
        } catch {
            throw PredicateError(error)
        }
        var context = context
        context.source = text
        return (tree, try check(tree, context: context))
    }
}

extension PredicateError {
    /// Wraps a syntax error.
    public init(_ e: SyntaxError) {
        self.init(.syntax, e.message, hint: e.hint, range: e.range)
    }
}

// Parsing and checking in one call.

import PredicateSyntax
import RecordModel

extension QueryChecker {
    /// Parses and checks a format string; syntax errors come back as `PredicateError` of kind `.syntax`.
    public static func check(_ text: String, context: CheckContext = CheckContext()) throws(PredicateError) -> CheckedPredicate {
        let tree: Predicate
        do {
            tree = try PredicateParser.parse(text)
        } catch {
            throw PredicateError(error)
        }
        var context = context
        context.source = text
        return try check(tree, context: context)
    }
}

extension PredicateError {
    /// Wraps a syntax error.
    public init(_ e: SyntaxError) {
        self.init(.syntax, e.message, hint: e.hint, range: e.range)
    }

}

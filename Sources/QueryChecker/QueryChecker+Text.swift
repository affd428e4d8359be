// Parsing and checking in one call.

import PredicateSyntax
import RecordModel

extension QueryChecker {
    /// Parses and checks a format string; syntax errors come back as `PredicateError` of kind
    /// `.syntax`. Every error's range points into `text` (including the keyword of an OR).
    ///
    /// ```swift
    /// let eiffel = Location(latitude: 48.8584, longitude: 2.2945)
    /// let checked = try QueryChecker.check(
    ///     "distanceToLocation:fromLocation:(location, %@) < 5",
    ///     context: CheckContext(arguments: [.value(.location(eiffel))]))
    /// checked.predicate.filters  // [location NEAR … within 5000 m]
    /// ```
    public static func check(
        _ text: String, context: CheckContext = CheckContext()
    ) throws(PredicateError) -> CheckedPredicate {
        try parseAndCheck(text, context: context).checked
    }

    /// Parses and checks a format string, returning the parsed tree too (for its canonical form).
    /// Errors point into `text`, including the keyword of an OR; `context.source` is replaced
    /// by `text`.
    ///
    /// ```swift
    /// let (tree, checked) = try QueryChecker.parseAndCheck("kind=='cafe'")
    /// tree.formatString   // "kind == 'cafe'"
    /// ```
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
    /// Wraps a syntax error as kind `.syntax`, keeping its message, hint and range.
    public init(_ e: SyntaxError) {
        self.init(.syntax, e.message, hint: e.hint, range: e.range)
    }
}

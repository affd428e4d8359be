// Helpers for PredicateSyntax tests: short tree builders and parse/print shortcuts.

import Testing

@testable import PredicateSyntax

func parse(_ s: String, limits: ParserLimits = .default) throws -> Predicate {
    try PredicateParser.parse(s, limits: limits)
}

func parseExpr(_ s: String) throws -> Expression {
    try PredicateParser.parseExpression(s)
}

/// parse, then print.
func canon(_ s: String) throws -> String {
    try PredicateParser.parse(s).formatString
}

/// The SyntaxError `s` raises, or nil when it parses.
func syntaxError(_ s: String, limits: ParserLimits = .default) -> SyntaxError? {
    do {
        _ = try PredicateParser.parse(s, limits: limits)
        return nil
    } catch {
        return error
    }
}

/// Asserts that `s` fails with exactly `message` at `start..<end`.
func expectError(
    _ s: String, _ message: String, _ start: Int, _ end: Int, limits: ParserLimits = .default,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let e = syntaxError(s, limits: limits)
    #expect(e?.message == message, "\(s)", sourceLocation: sourceLocation)
    #expect(e?.range == SourceRange(start, end), "\(s): \(String(describing: e))", sourceLocation: sourceLocation)
}

func k(_ name: String) -> Expression { Expression(.key(name)) }
func int(_ v: Int64) -> Expression { Expression(.constant(.integer(v))) }
func dbl(_ v: Double) -> Expression { Expression(.constant(.double(v))) }
func str(_ v: String) -> Expression { Expression(.constant(.string(v))) }
func lit(_ l: Literal) -> Expression { Expression(.constant(l)) }
func member(_ base: Expression, _ name: String) -> Expression { Expression(.member(base, name)) }
func arith(_ op: ArithmeticOperator, _ a: Expression, _ b: Expression) -> Expression {
    Expression(.arithmetic(op, a, b))
}
func fn(_ name: String, _ args: Expression...) -> Expression { Expression(.function(name: name, arguments: args)) }
func agg(_ elements: Expression...) -> Expression { Expression(.aggregate(elements)) }
func ph(_ s: Placeholder.Specifier, _ index: Int) -> Expression {
    Expression(.placeholder(Placeholder(s, index: index)))
}

func cmp(
    _ left: Expression, _ op: ComparisonOperator, _ right: Expression, modifier: ComparisonModifier = .direct,
    options: ComparisonOptions = []
) -> Predicate {
    Predicate(.comparison(Comparison(modifier: modifier, left: left, op: op, options: options, right: right)))
}

func and(_ a: Predicate, _ b: Predicate) -> Predicate { Predicate(.and(a, b)) }
func or(_ a: Predicate, _ b: Predicate) -> Predicate { Predicate(.or(a, b)) }
func not(_ a: Predicate) -> Predicate { Predicate(.not(a)) }

/// `a == 1`, `b == 2`, … for precedence tests.
func eq(_ name: String, _ v: Int64) -> Predicate { cmp(k(name), .equal, int(v)) }

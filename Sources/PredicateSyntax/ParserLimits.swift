// ParserLimits: the bounds that keep hostile input from exhausting time, memory or the stack.
//
// Owns only the numbers and their defaults; the lexer and parser enforce them and report a
// `SyntaxError` when one is exceeded. Never a crash, never a stack overflow.

/// Bounds on what the parser accepts. The defaults suit CloudKit predicates with a wide margin.
///
/// ```swift
/// var limits = ParserLimits.default
/// limits.maxDepth = 20
/// let p = try PredicateParser.parse("a == 1", limits: limits)
/// ```
public struct ParserLimits: Sendable, Hashable {
    /// Longest input, in UTF-8 bytes.
    public var maxLength: Int
    /// Deepest syntactic nesting: parentheses, brackets, braces, argument lists, `NOT`, unary
    /// minus, and the right side of `**`. Bounds the parser's own recursion.
    public var maxDepth: Int
    /// Greatest height of the resulting tree. Long chains (`a AND b AND …`, `a + b + …`,
    /// `a.b.c…`) build deep left-leaning trees without nesting; every consumer that walks the
    /// tree recursively (printer, `==`, the checker) relies on this bound.
    public var maxTreeHeight: Int
    /// Most elements in one aggregate `{…}` or one argument list.
    public var maxAggregateCount: Int

    /// Limits with the given bounds; each one left out takes its default.
    public init(
        maxLength: Int = 65_536, maxDepth: Int = 100, maxTreeHeight: Int = 1_000, maxAggregateCount: Int = 10_000
    ) {
        self.maxLength = maxLength
        self.maxDepth = maxDepth
        self.maxTreeHeight = maxTreeHeight
        self.maxAggregateCount = maxAggregateCount
    }

    /// 64 KiB of text, nesting 100, tree height 1 000, 10 000 elements per aggregate.
    public static let `default` = ParserLimits()
}

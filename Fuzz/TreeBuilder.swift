// TreeBuilder: a structure-aware fuzz input — the fuzzer's bytes read as a sequence of choices
// that build a SyntaxTree, so libFuzzer's mutations explore tree shapes directly (text
// mutations rarely produce, say, a negative literal as the base of `**`).
//
// Mirrors Tests/PredicateSyntaxTests/TreeGenerator.swift: only trees the parser can produce
// (names the lexer reads back, finite numbers, placeholders numbered in print order).

import PredicateSyntax

struct TreeBuilder {
    var bytes: UnsafeBufferPointer<UInt8>
    var at = 0
    var placeholders = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// The next choice below `n`; 0 once the input is used up, which ends the recursion.
    mutating func below(_ n: Int) -> Int {
        guard at < bytes.count else { return 0 }
        at += 1
        return Int(bytes[at - 1]) % n
    }

    mutating func word64() -> UInt64 {
        var v: UInt64 = 0
        for _ in 0..<8 { v = v << 8 | UInt64(below(256)) }
        return v
    }

    mutating func pick<T>(_ xs: [T]) -> T { xs[below(xs.count)] }

    static let keys = [
        "a", "name", "_x", "é", "size", "IN", "first", "TruePredicate", "uti", "equals", "CI", "Self", "@avg", "@size",
    ]
    static let members = ["b", "@count", "@sum", "last", "AND", "e5", "E"]
    static let variables = ["x", "in", "_"]
    static let functions = ["now", "tokenize", "sum:", "distanceToLocation:fromLocation:"]
    static let pieces = [
        "", "abc", "'", "\"", "\\", "%", "%@", "%%", "\n", "\t", "\r", "\0", "\u{1}", "\u{7f}", "é", "😀", "\u{A0}",
    ]

    mutating func predicate(_ depth: Int) -> Predicate {
        switch depth <= 0 ? below(3) : below(8) {
        case 0: return Predicate(.truePredicate)
        case 1: return Predicate(.falsePredicate)
        case 2, 3, 4:
            let modifier = pick([ComparisonModifier.direct, .any, .all, .none])
            let left = expression(depth - 1)
            let op = pick(ComparisonOperator.allCases)
            let options = ComparisonOptions(rawValue: UInt8(below(16)))
            let right = expression(depth - 1)
            return Predicate(
                .comparison(Comparison(modifier: modifier, left: left, op: op, options: options, right: right)))
        case 5: return Predicate(.not(predicate(depth - 1)))
        case 6:
            let a = predicate(depth - 1)
            return Predicate(.and(a, predicate(depth - 1)))
        default:
            let a = predicate(depth - 1)
            return Predicate(.or(a, predicate(depth - 1)))
        }
    }

    mutating func literal() -> Literal {
        switch below(8) {
        case 0: return .string((0..<below(4)).map { _ in pick(Self.pieces) }.joined())
        case 1: return .integer(Int64(below(256)) - 128)
        case 2: return .integer(Int64(bitPattern: word64()))
        case 3: return .integer(pick([Int64.min, .max, 0, -1]))
        case 4:
            let d = Double(bitPattern: word64())
            return .double(d.isFinite ? d : -0.0)
        case 5: return .double(pick([0.0, 5.0, 1e20, 1e-7, -2.5, .greatestFiniteMagnitude, .leastNonzeroMagnitude]))
        case 6: return .boolean(below(2) == 0)
        default: return .null
        }
    }

    mutating func expression(_ depth: Int) -> Expression {
        if depth <= 0 { return leaf() }
        let d = depth - 1
        switch below(14) {
        case 0: return Expression(.member(expression(d), pick(Self.members)))
        case 1: return Expression(.aggregate((0..<below(4)).map { _ in expression(d) }))
        case 2:
            let base = expression(d)
            let sub: Subscript =
                switch below(4) {
                case 0: .first
                case 1: .last
                case 2: .size
                default: .index(expression(d))
                }
            return Expression(.subscripted(base, sub))
        case 3: return Expression(.negate(expression(d)))
        case 4, 5:
            let op = pick(ArithmeticOperator.allCases)
            let a = expression(d)
            return Expression(.arithmetic(op, a, expression(d)))
        case 6:
            return Expression(
                .function(name: pick(Self.functions), arguments: (0..<below(3)).map { _ in expression(d) }))
        case 7:
            let target = expression(d)
            let selector = pick(["uppercaseString", "x:y:", "it's %@"])
            return Expression(
                .functionExpression(
                    target: target, selector: selector, arguments: (0..<below(3)).map { _ in expression(d) }))
        case 8:
            let value = expression(d)
            return Expression(.cast(value, expression(d)))
        case 9:
            let collection = expression(d)
            return Expression(
                .subquery(collection: collection, variable: pick(Self.variables), predicate: predicate(d)))
        case 10:
            let p = predicate(d)
            let a = expression(d)
            return Expression(.ternary(p, a, expression(d)))
        default: return leaf()
        }
    }

    mutating func leaf() -> Expression {
        switch below(7) {
        case 0, 1: return Expression(.constant(literal()))
        case 2: return Expression(.evaluatedObject)
        case 3: return Expression(.key(pick(Self.keys)))
        case 4: return Expression(.variable(pick(Self.variables)))
        case 5:
            placeholders += 1
            return Expression(.placeholder(Placeholder(pick(Placeholder.Specifier.allCases), index: placeholders - 1)))
        default: return Expression(.anyKey)
        }
    }
}

// TreeGenerator: random SyntaxTrees of every node kind, for the round-trip property.
//
// Produces only trees the parser can produce: names the lexer reads back (reserved words are
// fine as keys, members and variables — the printer escapes them), finite numbers, and
// placeholders numbered in print order (children are generated in the order they print).

import CirrusTestSupport

@testable import PredicateSyntax

struct TreeGenerator {
    var rng: SeededRandom
    var placeholders = 0

    init(seed: UInt64) { rng = SeededRandom(seed: seed) }

    static let keys = [
        "a", "name", "price", "_x", "é", "x1", "size", "IN", "first", "TruePredicate", "uti", "equals", "CI", "anykey",
        "Self", "nil", "@avg", "@size",
    ]
    static let members = ["b", "price", "@count", "@sum", "@distinctUnionOfObjects", "last", "AND", "e5"]
    static let variables = ["x", "VAR", "in", "_"]
    static let functions = ["now", "tokenize", "f", "sum:", "distanceToLocation:fromLocation:", "a:b:c:"]
    static let stringPieces = [
        "", "abc", "'", "\"", "\\", "%", "%@", "%%", "%K", "\n", "\t", "\r", "\0", "\u{1}", "\u{7f}", "é", "😀",
        "\u{85}", " ", "\\u0041", "$x",
    ]

    mutating func pick<T>(_ xs: [T]) -> T { xs[rng.below(xs.count)] }

    mutating func predicate(depth: Int) -> Predicate {
        let choice = depth <= 0 ? rng.below(3) : rng.below(8)
        switch choice {
        case 0: return Predicate(.truePredicate)
        case 1: return Predicate(.falsePredicate)
        case 2, 3, 4: return comparison(depth: depth - 1)
        case 5: return Predicate(.not(predicate(depth: depth - 1)))
        case 6:
            let a = predicate(depth: depth - 1)
            return Predicate(.and(a, predicate(depth: depth - 1)))
        default:
            let a = predicate(depth: depth - 1)
            return Predicate(.or(a, predicate(depth: depth - 1)))
        }
    }

    mutating func comparison(depth: Int) -> Predicate {
        let modifier = pick([ComparisonModifier.direct, .direct, .any, .all, .none])
        let left = expression(depth: depth)
        let op = pick(ComparisonOperator.allCases)
        let options = ComparisonOptions(rawValue: rng.chance(0.3) ? UInt8(rng.below(16)) : 0)
        let right = expression(depth: depth)
        return Predicate(
            .comparison(Comparison(modifier: modifier, left: left, op: op, options: options, right: right)))
    }

    mutating func literal() -> Literal {
        switch rng.below(9) {
        case 0: return .string((0..<rng.below(4)).map { _ in pick(Self.stringPieces) }.joined())
        case 1: return .integer(Int64(rng.below(100)))
        case 2: return .integer(-Int64(rng.below(100)))
        case 3: return .integer(pick([Int64.min, .max, .min + 1, 0, -1, 1 << 53]))
        case 4: return .integer(Int64(bitPattern: rng.next()))
        case 5:
            return .double(
                pick([
                    0.0, -0.0, 5.0, 1e20, 1e-7, 1.5, -2.25, .greatestFiniteMagnitude, -.leastNonzeroMagnitude,
                    9.223372036854775807e18, 1e16,
                ]))
        case 6:
            var d = Double(bitPattern: rng.next())
            while !d.isFinite { d = Double(bitPattern: rng.next()) }
            return .double(d)
        case 7: return .boolean(rng.chance(0.5))
        default: return .null
        }
    }

    mutating func expression(depth: Int) -> Expression {
        if depth <= 0 || rng.chance(0.3) { return leaf() }
        let d = depth - 1
        switch rng.below(13) {
        case 0: return Expression(.member(expression(depth: d), pick(Self.members)))
        case 1: return Expression(.aggregate((0..<rng.below(4)).map { _ in expression(depth: d) }))
        case 2:
            let base = expression(depth: d)
            let sub: Subscript =
                switch rng.below(4) {
                case 0: .first
                case 1: .last
                case 2: .size
                default: .index(expression(depth: d))
                }
            return Expression(.subscripted(base, sub))
        case 3: return Expression(.negate(expression(depth: d)))
        case 4, 5:
            let op = pick(ArithmeticOperator.allCases)
            let a = expression(depth: d)
            return Expression(.arithmetic(op, a, expression(depth: d)))
        case 6:
            return Expression(
                .function(name: pick(Self.functions), arguments: (0..<rng.below(3)).map { _ in expression(depth: d) }))
        case 7:
            let target = expression(depth: d)
            let selector = pick(["uppercaseString", "x:y:", "it's %@", ""])
            return Expression(
                .functionExpression(
                    target: target, selector: selector, arguments: (0..<rng.below(3)).map { _ in expression(depth: d) })
            )
        case 8:
            let value = expression(depth: d)
            return Expression(.cast(value, expression(depth: d)))
        case 9:
            let collection = expression(depth: d)
            return Expression(
                .subquery(collection: collection, variable: pick(Self.variables), predicate: predicate(depth: d)))
        case 10:
            let p = predicate(depth: d)
            let a = expression(depth: d)
            return Expression(.ternary(p, a, expression(depth: d)))
        default:
            return leaf()
        }
    }

    mutating func leaf() -> Expression {
        switch rng.below(8) {
        case 0, 1: return Expression(.constant(literal()))
        case 2: return Expression(.evaluatedObject)
        case 3, 4: return Expression(.key(pick(Self.keys)))
        case 5: return Expression(.variable(pick(Self.variables)))
        case 6:
            placeholders += 1
            return Expression(.placeholder(Placeholder(pick(Placeholder.Specifier.allCases), index: placeholders - 1)))
        default: return Expression(.anyKey)
        }
    }
}

// Round-trip properties: parse(print(t)) == t for random trees of every node kind, and
// printing is a fixed point after one parse for handwritten predicates.

import CirrusTestSupport
import Testing

@testable import PredicateSyntax

@Suite struct RoundTripTests {
    @Test func randomTreesRoundTrip() {
        let seed = TestSeed.next()
        var rng = SeededRandom(seed: seed)
        var failures = 0
        for n in 0..<4_000 {
            let treeSeed = rng.next()
            var g = TreeGenerator(seed: treeSeed)
            let tree = g.predicate(depth: 1 + n % 6)
            let text = tree.formatString
            do {
                let back = try PredicateParser.parse(text)
                if back != tree || back.formatString != text {
                    failures += 1
                    Issue.record(
                        "round trip changed the tree (CIRRUS_SEED=\(seed), tree \(n)): \(text) → \(back.formatString)")
                }
            } catch {
                failures += 1
                Issue.record(
                    "printed tree does not parse (CIRRUS_SEED=\(seed), tree \(n)): \(text)\n\(error.rendered(in: text))"
                )
            }
            if failures >= 5 { break }
        }
    }

    @Test func randomExpressionsRoundTrip() {
        let seed = TestSeed.next()
        var g = TreeGenerator(seed: seed)
        for n in 0..<2_000 {
            g.placeholders = 0
            let e = g.expression(depth: 1 + n % 5)
            let text = e.formatString
            let back = try? PredicateParser.parseExpression(text)
            #expect(back == e, "CIRRUS_SEED=\(seed), expression \(n): \(text)")
            if back != e { break }
        }
    }

    @Test func generatorCoversEveryNodeKind() {
        var g = TreeGenerator(seed: 1)
        var kinds = Set<String>()
        func visit(_ p: Predicate) {
            switch p.kind {
            case .truePredicate: kinds.insert("true")
            case .falsePredicate: kinds.insert("false")
            case .not(let a): kinds.insert("not"); visit(a)
            case .and(let a, let b): kinds.insert("and"); visit(a); visit(b)
            case .or(let a, let b): kinds.insert("or"); visit(a); visit(b)
            case .comparison(let c): kinds.insert("cmp \(c.op) \(c.modifier)"); visit(c.left); visit(c.right)
            }
        }
        func visit(_ e: Expression) {
            switch e.kind {
            case .constant(let l):
                switch l {
                case .string: kinds.insert("string")
                case .integer: kinds.insert("integer")
                case .double: kinds.insert("double")
                case .boolean: kinds.insert("boolean")
                case .null: kinds.insert("null")
                }
            case .evaluatedObject: kinds.insert("self")
            case .key: kinds.insert("key")
            case .member(let b, _): kinds.insert("member"); visit(b)
            case .variable: kinds.insert("variable")
            case .placeholder: kinds.insert("placeholder")
            case .aggregate(let es): kinds.insert("aggregate"); es.forEach(visit)
            case .subscripted(let b, let s):
                visit(b)
                switch s {
                case .first: kinds.insert("subscript first")
                case .last: kinds.insert("subscript last")
                case .size: kinds.insert("subscript size")
                case .index(let i): kinds.insert("subscript index"); visit(i)
                }
            case .negate(let a): kinds.insert("negate"); visit(a)
            case .arithmetic(let op, let a, let b): kinds.insert("arith \(op)"); visit(a); visit(b)
            case .function(_, let args): kinds.insert("function"); args.forEach(visit)
            case .functionExpression(let t, _, let args): kinds.insert("FUNCTION"); visit(t); args.forEach(visit)
            case .cast(let a, let b): kinds.insert("cast"); visit(a); visit(b)
            case .subquery(let c, _, let p): kinds.insert("subquery"); visit(c); visit(p)
            case .ternary(let p, let a, let b): kinds.insert("ternary"); visit(p); visit(a); visit(b)
            case .anyKey: kinds.insert("anykey")
            }
        }
        for n in 0..<2_000 { visit(g.predicate(depth: 1 + n % 6)) }
        let expected = [
            "true", "false", "not", "and", "or", "string", "integer", "double", "boolean", "null", "self", "key",
            "member", "variable", "placeholder", "aggregate", "negate", "function", "FUNCTION", "cast", "subquery",
            "ternary", "anykey", "subscript first", "subscript last", "subscript size", "subscript index",
        ]
        for k in expected { #expect(kinds.contains(k), "\(k)") }
        for op in ComparisonOperator.allCases { #expect(kinds.contains("cmp \(op) direct"), "\(op)") }
        for op in ArithmeticOperator.allCases { #expect(kinds.contains("arith \(op)"), "\(op)") }
        for m in ["any", "all", "none"] {
            #expect(kinds.contains { $0.hasPrefix("cmp ") && $0.hasSuffix(" " + m) }, "\(m)")
        }
    }

    static let handwritten = [
        "a = 1", "a==1 && b<>2 || !c=<3", "NOT (a == 1 OR b == 2) AND c => 3", "(a + 1) * 2 == 4",
        "((a == 1)) AND ((b)) == 2", "name CONTAINS[cd] \"it's\"", "ANY tags IN {'a', \"b\"}", "SOME x == 1",
        "ALL tokenize('a b', 'Cdl') IN allTokens", "allTokens TOKENMATCHES[cdl] 'w1 w2'",
        "distanceToLocation:fromLocation:(location, %@) < 5 AND kind == 'cafe'", "date > now()",
        "k BETWEEN {1, 5}", "a == -5 AND b == - 5 AND c == -(5) AND d == -x", "2 ** 3 ** 2 == x", "-2 ** 2 == x",
        "x == 1e20 AND y == 5.0 AND z == 0x1F AND w == 0b11 AND v == 0o7 AND u == .5", "x == 99999999999999999999",
        "SUBQUERY(items, $i, $i.price > 5 AND $i.qty == 1).@count > 0", "TERNARY(a == 1, 'x', 'y') == 'x'",
        "FUNCTION(name, 'uppercaseString') == 'A'", "CAST(x, 'NSDate') < now()", "@avg.price > 3",
        "a[FIRST] == a[last]",
        "a[size] == 3", "#IN == 1 AND #size == 2", "%K == %@ AND %d < %f", "a == $VAR", "a == '%%@ 100%'",
        "a == '\\u00e9\\n'", "TRUEPREDICATE", "FALSEPREDICATE OR TRUEPREDICATE", "a UTI-CONFORMS-TO 'public.data'",
        "a uti-equals 'public.jpeg'", "a LIKE[c] '*x?'", "a MATCHES '.*'", "a ENDSWITH 'z'", "a BEGINSWITH[n] 'z'",
        "SELF == ANYKEY", "a.b.c.@count == {}", "sum:({1,2}) == 3", "a - -1 == b", "(-2) ** 2 == 4", "x == -0.0",
        "x == -9223372036854775808", "x == 9223372036854775808",
    ]

    @Test(arguments: handwritten)
    func printingIsAFixedPoint(source: String) throws {
        let once = try PredicateParser.parse(source)
        let printed = once.formatString
        let twice = try PredicateParser.parse(printed)
        #expect(twice == once, "\(source) → \(printed)")
        #expect(twice.formatString == printed)
    }
}

/// A seeded fuzz inside the test suite: mutated handwritten predicates either fail with an
/// error pointing inside the input, or round-trip.
@Suite struct MutationTests {
    static let fragments = [
        "(", ")", "{", "}", "[", "]", ",", "'", "\"", "\\", "%", "%@", "-", "**", "AND", "OR", "NOT", "==",
        "[cd]", "ANY", "SUBQUERY(", "$x", "#", "@", ".", "0x", "1e", "5", "é", " ", "\u{A0}", ":", "TERNARY(",
    ]

    @Test func mutatedPredicatesRoundTripOrFailCleanly() {
        let seed = TestSeed.next()
        var rng = SeededRandom(seed: seed)
        let sources = RoundTripTests.handwritten
        var parsed = 0
        for n in 0..<5_000 {
            var bytes = Array(sources[rng.below(sources.count)].utf8)
            for _ in 0..<(1 + rng.below(3)) {
                let at = rng.below(bytes.count + 1)
                switch rng.below(3) {
                case 0: bytes.insert(contentsOf: Array(Self.fragments[rng.below(Self.fragments.count)].utf8), at: at)
                case 1: if at < bytes.count { bytes.remove(at: at) }
                default: if at < bytes.count { bytes[at] = UInt8(truncatingIfNeeded: rng.next()) & 0x7F }
                }
            }
            let text = String(decoding: bytes, as: UTF8.self)
            do {
                let tree = try PredicateParser.parse(text)
                parsed += 1
                let printed = tree.formatString
                let again = try? PredicateParser.parse(printed)
                #expect(again == tree, "CIRRUS_SEED=\(seed) #\(n): \(text) → \(printed)")
                if again != tree { return }
            } catch {
                let n = text.utf8.count
                #expect(
                    error.range.start >= 0 && error.range.start <= error.range.end && error.range.end <= n,
                    "CIRRUS_SEED=\(seed): \(text): \(error)")
            }
        }
        #expect(parsed > 100, "the mutations should leave some predicates well-formed")
    }
}

// Limits: hostile input gives a SyntaxError, never a crash or a stack overflow; input just
// inside the limits parses and the tree it gives can be printed, compared, hashed and dropped.

import Testing

@testable import PredicateSyntax

@Suite struct LimitTests {
    @Test func inputTooLong() {
        let s = String(repeating: "a", count: 70_000)
        expectError(s, "predicate is too long (70000 bytes; the limit is 65536)", 65_536, 70_000)
    }

    @Test func longestInputParses() throws {
        let body = String(repeating: "1,", count: 9_999) + "1"
        let s = "a IN {" + body + "}" + String(repeating: " ", count: 65_536 - body.utf8.count - 7)
        #expect(s.utf8.count == 65_536)
        let p = try parse(s)
        guard case .comparison(let c) = p.kind, case .aggregate(let elements) = c.right.kind else {
            Issue.record("shape"); return
        }
        #expect(elements.count == 10_000)
    }

    @Test func deepPredicateParentheses() {
        let s = String(repeating: "(", count: 1_000) + "a == 1" + String(repeating: ")", count: 1_000)
        expectError(s, "nesting is too deep (the limit is 100)", 100, 101)
    }

    @Test func deepExpressionParentheses() {
        let s = "a == " + String(repeating: "(", count: 5_000) + "1" + String(repeating: ")", count: 5_000)
        expectError(s, "nesting is too deep (the limit is 100)", 105, 106)
    }

    @Test func deepNot() {
        expectError(
            String(repeating: "NOT ", count: 1_000) + "a == 1", "nesting is too deep (the limit is 100)", 400, 403)
    }

    @Test func deepUnaryMinus() {
        expectError(
            "a == " + String(repeating: "-", count: 1_000) + "x", "nesting is too deep (the limit is 100)", 105, 106)
    }

    @Test func deepPowerChain() {
        expectError(
            "a == " + String(repeating: "2 ** ", count: 1_000) + "2", "nesting is too deep (the limit is 100)", 507, 509
        )
    }

    @Test func deepAggregates() {
        expectError(
            "a IN " + String(repeating: "{", count: 1_000) + String(repeating: "}", count: 1_000),
            "nesting is too deep (the limit is 100)", 105, 106)
    }

    @Test func deepSubscripts() {
        expectError(
            "a" + String(repeating: "[b", count: 1_000) + String(repeating: "]", count: 1_000) + " == 1",
            "nesting is too deep (the limit is 100)", 201, 202)
    }

    @Test func deepNestingOfEveryForm() {
        // Unclosed openers of every kind, cycled: the parser must stop at the limit, not overflow.
        let openers = [
            "(", "NOT ", "-", "{", "a[", "f(", "SUBQUERY(x, $v, ", "TERNARY(", "CAST(", "FUNCTION(", "x ** ",
        ]
        for n in 0..<openers.count {
            var s = ""
            for i in 0..<5_000 { s += openers[(i + n) % openers.count] }
            let e = syntaxError(s)
            #expect(e != nil, "\(n)")
        }
    }

    @Test func customDepthLimit() throws {
        let limits = ParserLimits(maxDepth: 3)
        #expect(try parse("((a == (1)))", limits: limits) == eq("a", 1))
        expectError("(((a == (1))))", "nesting is too deep (the limit is 3)", 8, 9, limits: limits)
    }

    /// A minus folded into a number counts a level, as the `-(0)` printed for negate(0) does, so
    /// a predicate at the limit prints to one that still parses (a fuzzer found `$v - --…-0`
    /// with 101 minuses: it parsed, and its print did not).
    @Test func negativeNumbersAtTheLimitRoundTrip() throws {
        let limits = ParserLimits(maxDepth: 3)
        for text in ["a == ---5", "a == --(5)", "a == ---5.5", "a == --0", "a == -(-5)"] {
            let p = try parse(text, limits: limits)
            #expect(try parse(p.formatString, limits: limits) == p, "\(text) printed \(p.formatString)")
        }
        expectError("a == ----5", "nesting is too deep (the limit is 3)", 8, 9, limits: limits)
        var parsed = 0
        for n in 98...102 {
            guard let e = try? PredicateParser.parseExpression("$v - " + String(repeating: "-", count: n) + "0") else {
                continue
            }
            parsed += 1
            #expect(try PredicateParser.parseExpression(e.formatString) == e, "\(n) minuses printed \(e.formatString)")
        }
        #expect(parsed >= 2)
    }

    @Test func nestingAtTheLimitParses() throws {
        let s = String(repeating: "(", count: 100) + "a == 1" + String(repeating: ")", count: 100)
        #expect(try parse(s) == eq("a", 1))
    }

    @Test func longAndChainExceedsTreeHeight() {
        let s = String(repeating: "a == 1 AND ", count: 2_000) + "a == 1"
        expectError(s, "predicate is too complex (tree height over 1000)", 0, 10_995)
    }

    @Test func longMemberChainExceedsTreeHeight() {
        let e = syntaxError("a" + String(repeating: ".b", count: 2_000) + " == 1")
        #expect(e?.message == "predicate is too complex (tree height over 1000)")
    }

    @Test func tallestTreeIsSafeToUse() throws {
        // Height 1000 exactly: 997 ANDs over comparisons of height 2.
        let s = String(repeating: "a == 1 AND ", count: 998) + "a == 1"
        let p = try parse(s)
        let q = try parse(p.formatString)
        #expect(p == q)
        #expect(p.hashValue == q.hashValue)
        #expect(p.formatString == s)
    }

    @Test func hugeAggregate() {
        let s = "a IN {" + String(repeating: "1,", count: 10_000) + "1}"
        expectError(s, "aggregate has more than 10000 elements", 20_006, 20_007)
    }

    @Test func hugeArgumentList() {
        let s = "f(" + String(repeating: "1,", count: 10_000) + "1) == 1"
        expectError(s, "argument list has more than 10000 elements", 20_002, 20_003)
    }
}

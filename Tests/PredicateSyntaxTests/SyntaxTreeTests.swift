import Testing

@testable import PredicateSyntax

@Suite struct SyntaxTreeTests {
    @Test func equalityIgnoresSourceRanges() {
        let a = Expression(.key("name"), range: SourceRange(0, 4))
        let b = Expression(.key("name"), range: SourceRange(10, 14))
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        let c1 = Comparison(
            left: a, op: .equal, right: Expression(.constant(.integer(1))), operatorRange: SourceRange(5, 7))
        let c2 = Comparison(left: b, op: .equal, right: Expression(.constant(.integer(1))))
        #expect(Predicate(.comparison(c1), range: SourceRange(0, 9)) == Predicate(.comparison(c2)))
        #expect(Expression(.key("name")) != Expression(.key("Name")))
    }

    @Test func optionLettersPrintInCanonicalOrder() {
        let o: ComparisonOptions = [.localeSensitive, .caseInsensitive, .diacriticInsensitive]
        #expect(o.letters == "cdl")
        #expect(ComparisonOptions().letters == "")
    }

    @Test func rangeUnionCoversBoth() {
        #expect(SourceRange(3, 5).union(SourceRange(1, 4)) == SourceRange(1, 5))
        #expect(SourceRange.none.union(SourceRange(2, 3)) == SourceRange(2, 3))
    }
}

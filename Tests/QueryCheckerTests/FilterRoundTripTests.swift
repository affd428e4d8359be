// Filters → format string + arguments → checker → the same filters: the "and back" half of the
// one-to-one mapping between checked predicates and Web Services filter lists.

import CirrusTestSupport
import PredicateSyntax
import RecordModel
import Testing

@testable import QueryChecker

@Suite struct FilterRoundTripTests {
    static func randomValue(_ rng: inout SeededRandom) -> FieldValue {
        switch rng.below(6) {
        case 0: return .string(["", "a", "café", "it's", "%@", "x y"][rng.below(6)])
        case 1: return .int64(Int64(rng.below(2001)) - 1000)
        case 2: return .double(Double(rng.below(2001)) / 8 - 125)
        case 3: return .date(Timestamp(millisecondsSince1970: Int64(rng.below(1_000_000))))
        case 4: return .bytes((0..<rng.below(4)).map { _ in UInt8(rng.below(256)) })
        default: return .reference(Reference(recordID: RecordID(recordName: "r\(rng.below(9))")))
        }
    }

    static func randomFilter(_ rng: inout SeededRandom) -> QueryFilter {
        let field = ["kind", "population", "tags", "f_1", "recordName"][rng.below(5)]
        let c = Comparator.allCases[rng.below(Comparator.allCases.count)]
        var v = randomValue(&rng)
        switch c {
        case .near:
            let l = Location(latitude: Double(rng.below(181)) - 90, longitude: Double(rng.below(361)) - 180)
            return QueryFilter(
                fieldName: field == "recordName" ? "f_1" : field, comparator: .near, fieldValue: .location(l),
                distance: Double(rng.below(100_000)))
        case .containsAllTokens, .containsAnyTokens:
            return QueryFilter(
                fieldName: QueryFilter.allTokensFieldName, comparator: c,
                fieldValue: .string(["tea", "coffee shop", "Zürich"][rng.below(3)]))
        case .in, .notIn, .listContainsAny, .notListContainsAny, .listContainsAll, .notListContainsAll:
            let first = randomValue(&rng)
            var items = [first]
            for _ in 0..<rng.below(3) {
                let x = randomValue(&rng)
                if x.familyRank == first.familyRank { items.append(x) }
            }
            v = .list(items)
        case .beginsWith, .notBeginsWith, .listMemberBeginsWith, .notListMemberBeginsWith:
            v = .string(rng.chance(0.5) ? "pre" : "x y")  // BEGINSWITH takes string prefixes only
        case .lessThan, .lessThanOrEquals, .greaterThan, .greaterThanOrEquals:
            if case .reference = v { v = .int64(3) }
            if case .bytes = v { v = .string("m") }
        default: break
        }
        // recordName is a REFERENCE in every record type: only ==, !=, IN, NOT IN with references.
        let referenceOnly =
            [.equals, .notEquals, .in, .notIn].contains(c)
            && v.elements.allSatisfy { if case .reference = $0 { true } else { false } }
        if field == "recordName" && !referenceOnly {
            return QueryFilter(fieldName: "f_1", comparator: c, fieldValue: v)
        }
        return QueryFilter(fieldName: field, comparator: c, fieldValue: v)
    }

    @Test func filtersSurviveFormatAndCheck() throws {
        let seed = TestSeed.next()
        var rng = SeededRandom(seed: seed)
        for _ in 0..<2000 {
            let filters = (0..<(1 + rng.below(4))).map { _ in Self.randomFilter(&rng) }
            let (format, args) = QueryPredicate.filters(filters).predicateFormat
            let back = try QueryChecker.check(format, context: CheckContext(arguments: args))
            #expect(back.predicate == .filters(filters), "seed \(seed): \(format)")
            // Location and distance survive exactly (metres → km → metres).
            for (a, b) in zip(filters, back.predicate.filters) where a.comparator == .near {
                #expect(a.distance == b.distance, "seed \(seed)")
            }
        }
    }

    @Test func trueAndFalsePredicatesRoundTrip() throws {
        #expect(try QueryChecker.check(QueryPredicate.all.predicateFormat.format).predicate == .all)
        #expect(try QueryChecker.check(QueryPredicate.none.predicateFormat.format).predicate == .none)
    }

    @Test func everyComparatorHasAFormat() throws {
        for c in Comparator.allCases {
            var rng = SeededRandom(seed: UInt64(c.rawValue.utf8.count))
            var f = Self.randomFilter(&rng)
            while f.comparator != c { f = Self.randomFilter(&rng) }
            let (format, args) = QueryPredicate.filters([f]).predicateFormat
            #expect(
                try QueryChecker.check(format, context: CheckContext(arguments: args)).predicate.filters.first?
                    .comparator == c)
        }
    }
}

@Suite struct SortRuleTests {
    let dev = Schema(environment: .development, recordTypes: [placeType(production: false)])
    let prod = Schema(environment: .production, recordTypes: [placeType(production: true)])

    func check(_ sorts: [SortDescriptor], _ schema: Schema) throws(PredicateError) {
        try QueryChecker.checkSort(sorts, context: CheckContext(schema: schema, recordType: "Place"))
    }

    @Test func sortableFieldsSortInProduction() throws {
        try check([.field("population", ascending: false), .field("rating", ascending: true)], prod)
    }

    @Test func nonSortableFieldIsRejectedInProduction() {
        #expect(
            throws: PredicateError(
                .schema, "Field 'kind' is not marked sortable", hint: "add SORTABLE to 'kind' in Place", range: .none)
        ) {
            try check([.field("kind", ascending: true)], prod)
        }
    }

    @Test func developmentSortsAnySortableType() throws {
        try check([.field("kind", ascending: true), .distance(field: "location", from: eiffel)], dev)
    }

    @Test func listsAndLocationsCannotBeSortedByValue() {
        #expect(throws: PredicateError.self) { try check([.field("tags", ascending: true)], dev) }
        #expect(throws: PredicateError.self) { try check([.field("location", ascending: true)], dev) }
    }

    @Test func distanceSortNeedsALocationFieldAndQueryableInProduction() {
        #expect(throws: PredicateError(.schema, "Field 'name' of type STRING is not a location", range: .none)) {
            try check([.distance(field: "name", from: eiffel)], dev)
        }
        #expect(throws: PredicateError.self) { try check([.distance(field: "location", from: eiffel)], prod) }
        #expect(throws: PredicateError.self) {
            try check([.distance(field: "location", from: Location(latitude: 95, longitude: 0))], dev)
        }
    }

    @Test func recordChangeTagCannotBeSortedWithOrWithoutASchema() {
        for name in ["recordChangeTag", "___etag"] {
            #expect(throws: PredicateError.self) { try check([.field(name, ascending: true)], dev) }
            #expect(throws: PredicateError.self) {
                try QueryChecker.checkSort([.field(name, ascending: false)], context: CheckContext())
            }
        }
        #expect(throws: Never.self) {
            try QueryChecker.checkSort([.field("creationDate", ascending: false)], context: CheckContext())
        }
    }

    @Test func unknownSortFieldIsRejected() {
        #expect(throws: PredicateError.self) { try check([.field("nope", ascending: true)], dev) }
    }
}

@Suite struct DiagnosticsRenderingTests {
    @Test func caretSitsUnderTheRangeCountingCharactersNotBytes() {
        let src = "name == 'café' OR x == 1"
        let r = byteRange(of: "OR", in: src)!
        let text = PredicateError(.unsupported, "OR predicates are not supported", hint: "use IN", range: r).rendered(
            source: src)
        #expect(
            text == """
                  name == 'café' OR x == 1
                                 ^^
                error: OR predicates are not supported
                hint: use IN
                """)
    }

    @Test func caretOnTheRightLineOfAMultiLinePredicate() {
        let src = "a == 1 AND\nb LIKE 'x'"
        let text = Diagnostics.caret(source: src, range: byteRange(of: "LIKE", in: src)!)
        #expect(text == "  b LIKE 'x'\n    ^^^^\n")
    }

    @Test func emptyOrOutOfRangeRangesStillGetOneCaret() {
        #expect(Diagnostics.caret(source: "a ==", range: SourceRange(4, 4)) == "  a ==\n      ^\n")
        #expect(Diagnostics.caret(source: "", range: SourceRange(3, 9)) == "  \n  ^\n")
    }
}

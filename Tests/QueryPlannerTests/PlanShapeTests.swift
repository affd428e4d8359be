// Plans of the main query shapes, asserted as explain text (SQLite's EXPLAIN QUERY PLAN habit).
// Each expected plan was checked by hand against the costs in PlannerFixtures: the most
// selective path drives, cheap paths intersect, streams stop early under a page size.

import QueryPlanner
import RecordModel
import Testing

@Suite struct PlanShapeTests {
    let here = PredicateArgument.value(.location(louvre))

    func explain(
        _ p: String, _ a: [PredicateArgument] = [], sort: [SortDescriptor] = [], limit: Int?,
        stats s: StaticStatistics = stats
    ) throws -> String {
        QueryPlanner.plan(try query(p, a, sort: sort), statistics: s, limit: limit).explain()
    }

    @Test func equalityUsesItsIndexThenTopKByRecordID() throws {
        #expect(
            try explain("kind == 'cafe'", limit: 50) == """
                query: Place WHERE kind EQUALS "cafe"
                page size: 50
                top 50 by recordID  (est 50)
                  index kind = "cafe"  (est 1000)
                cost: 115.6
                rejected:
                  419566.9  full scan → filter → top 50

                """)
    }

    @Test func rangeWithSortAndLimitStreamsTheIndexAndStopsEarly() throws {
        #expect(
            try explain("population > 999000", sort: [.field("population", ascending: false)], limit: 50) == """
                query: Place WHERE population GREATER_THAN 999000 ORDER BY population DESC
                page size: 50
                limit 50  (est 50)
                  index scan population > 999000 DESC, ordered  (est 999)
                cost: 51.2
                rejected:
                  534.1  index scan population > 999000 → top 50
                  419566.8  full scan → filter → top 50

                """)
    }

    @Test func equalityPlusSortedRangeStreamsWithAMembershipSet() throws {
        // A common kind (5%): the stream meets a page after ~1 000 entries.
        let text = try explain(
            "kind == 'city' AND population > 5000", sort: [.field("population", ascending: false)], limit: 50)
        #expect(
            text.contains(
                """
                limit 50  (est 50)
                  intersect  (est 50)
                    index scan population > 5000 DESC, ordered  (est 994999)
                    index kind = "city"  (est 50000)
                """))
    }

    @Test func rareEqualityPlusSortedRangeSortsItsFewCandidates() throws {
        // A rare kind (0.1%): streaming would scan ~50 000 population entries, each tested
        // against the kind set, for 50 rows; reading the 1 000 candidates' two fields and a
        // top-50 costs less (calibrated: 1 000 partial fetches ≈ 437 vs 50 000 entries ≈ 585
        // fetches). Before calibration (an entry at 1/50 of a fetch, partial reads costed as
        // whole fetches) the stream won.
        let text = try explain(
            "kind == 'cafe' AND population > 5000", sort: [.field("population", ascending: false)], limit: 50)
        #expect(
            text.contains(
                """
                top 50 by population DESC, recordID  (est 50)
                  filter population GREATER_THAN 5000  (est 995)
                    index kind = "cafe"  (est 1000)
                """))
    }

    @Test func inUsesOneLookup() throws {
        #expect(
            try explain("kind IN {'cafe', 'castle'}", limit: 50).contains(
                """
                top 50 by recordID  (est 50)
                  index lookup kind IN ["cafe", "castle"]  (est 1040)
                """))
    }

    @Test func beginsWithUsesAPrefixScan() throws {
        #expect(
            try explain("name BEGINSWITH 'Par'", limit: 50).contains(
                "  index prefix name BEGINSWITH \"Par\"  (est 200)\n"))
    }

    @Test func listOperatorsUseTheElementIndex() throws {
        #expect(try explain("tags CONTAINS 'museum'", limit: 50).contains("  index tags = \"museum\"  (est 20000)\n"))
        #expect(
            try explain("ALL {'museum', 'art'} IN tags", limit: 50).contains(
                """
                  intersect  (est 20000)
                    index tags = "museum"  (est 20000)
                    index tags = "art"  (est 20000)
                """))
        #expect(
            try explain("ANY tags IN {'a', 'b'}", limit: 50).contains(
                "  index lookup tags IN [\"a\", \"b\"]  (est 40000)\n"))
    }

    @Test func textSearchesUseTheTextIndex() throws {
        #expect(
            try explain("self CONTAINS 'coffee shop'", limit: 50).contains("  text ANY \"coffee shop\"  (est 80000)\n"))
        #expect(
            try explain("ALL tokenize('coffee shop', 'Cdl') IN allTokens", limit: 50).contains(
                "  text ALL \"coffee shop\"  (est 2000)\n"))
    }

    @Test func radiusUsesTheSpatialIndex() throws {
        #expect(
            try explain("distanceToLocation:fromLocation:(location, %@) < 10", [here], limit: 50) == """
                query: Place WHERE location NEAR (48.8606, 2.3376) within 10000 m
                page size: 50
                top 50 by recordID  (est 25)
                  radius location within 10 km of (48.8606, 2.3376)  (est 25)
                cost: 29.1
                rejected:
                  419483.5  full scan → filter → top 50

                """)
    }

    @Test func radiusPlusEqualityDrivesWithTheCircleNotAFullScan() throws {
        #expect(
            try explain("distanceToLocation:fromLocation:(location, %@) < 10 AND kind == 'cafe'", [here], limit: 50)
                .hasPrefix(
                    """
                    query: Place WHERE location NEAR (48.8606, 2.3376) within 10000 m AND kind EQUALS "cafe"
                    page size: 50
                    top 50 by recordID  (est 1)
                      intersect  (est 0)
                        radius location within 10 km of (48.8606, 2.3376)  (est 25)
                        index kind = "cafe"  (est 1000)
                    """))
        // The circle drives; the kind joins as a set since calibration: its 1 000 rows cost
        // ~3 fetches to materialize (0.003 a row), reading the kind of the 25 candidates ~11 (a
        // partial fetch is 0.44 of a whole one), and a set answered by indexes alone fetches
        // only the page. Before, the filter on fetched candidates was chosen.
    }

    @Test func nearestFirstWithARareFilterSortsTheFewCandidates() throws {
        #expect(
            try explain("kind == 'cafe'", sort: [.distance(field: "location", from: louvre)], limit: 20).contains(
                """
                top 20 by location NEAREST (48.8606, 2.3376), recordID  (est 20)
                  index kind = "cafe"  (est 1000)
                """))
    }

    @Test func nearestFirstWithACommonFilterBrowsesNearestFirst() throws {
        #expect(
            try explain("kind == 'village'", sort: [.distance(field: "location", from: louvre)], limit: 20).contains(
                """
                limit 20  (est 20)
                  filter kind EQUALS "village"  (est 20)
                    nearest location from (48.8606, 2.3376)  (est 1000000)
                """))
    }

    @Test func nearestFirstInsideACircleBrowsesWithinTheRadius() throws {
        let text = try explain(
            "distanceToLocation:fromLocation:(location, %@) < 10", [here],
            sort: [.distance(field: "location", from: louvre)], limit: 20)
        #expect(text.contains("  nearest location from (48.8606, 2.3376) within 10 km  (est 25)\n"))
    }

    @Test func truePredicateWithSortStreamsTheSortIndex() throws {
        #expect(
            try explain("TRUEPREDICATE", sort: [.field("population", ascending: true)], limit: 50).contains(
                """
                limit 50  (est 50)
                  index scan population all, ordered  (est 1000000)
                """))
    }

    @Test func truePredicateWithoutSortStreamsRecordIDOrderWhenIndexed() throws {
        #expect(
            try explain("TRUEPREDICATE", limit: 100, stats: statsWithRecordName).contains(
                """
                limit 100  (est 100)
                  index scan recordName all, ordered  (est 1000000)
                """))
        #expect(
            try explain("TRUEPREDICATE", limit: 100).contains(
                "top 100 by recordID  (est 100)\n  full scan  (est 1000000)\n"))
    }

    @Test func textPlusRangeDoesNotScanWhenTheWordIsRare() throws {
        #expect(
            try explain("self CONTAINS 'rare' AND population > 1000", limit: 50).contains(
                """
                  filter population GREATER_THAN 1000  (est 30)
                    text ANY "rare"  (est 30)
                """))
        let both = try explain("ALL tokenize('coffee shop', 'Cdl') IN allTokens AND population > 990000", limit: 50)
        #expect(
            both.contains(
                "  intersect  (est 20)\n    text ALL \"coffee shop\"  (est 2000)\n    index scan population > 990000  (est 9999)\n"
            ))
        #expect(!both.contains("rejected:\n  1629.8"))  // the same intersection is not listed twice
    }

    @Test func unindexedFiltersFallBackToAFullScan() throws {
        #expect(
            try explain("rating > 4 AND kind != 'cafe'", limit: nil) == """
                query: Place WHERE rating GREATER_THAN 4 AND kind NOT_EQUALS "cafe"
                page size: all
                sort by recordID  (est 297000)
                  filter rating GREATER_THAN 4 AND kind NOT_EQUALS "cafe"  (est 297000)
                    full scan  (est 1000000)
                cost: 1091181.9

                """)
    }

    @Test func rangeOnBothSidesCombinesIntoOneScan() throws {
        #expect(
            try explain(
                "population > 10 AND population < 20", sort: [.field("population", ascending: true)], limit: nil
            )
            .contains("\nindex scan population (10, 20), ordered  (est 9)\n"))
    }

    @Test func contradictoryRangeIsEmptyAndFree() throws {
        #expect(
            try explain("population > 20 AND population < 10", limit: 50).contains(
                "  index scan population (20, 10)  (est 0)\n"))
    }

    @Test func addingTruePredicateDoesNotChangeThePlan() throws {
        // DuckDB's habit: EXPLAIN (X AND TRUE) == EXPLAIN X.
        for p in ["kind == 'cafe'", "population > 5 AND name BEGINSWITH 'a'"] {
            let a = try explain(p, limit: 50)
            let b = try explain("TRUEPREDICATE AND " + p, limit: 50)
            #expect(a == b)
        }
    }

    @Test func falsePredicateNeedsNoWork() throws {
        let plan = QueryPlanner.plan(try query("FALSEPREDICATE"), statistics: stats, limit: 10)
        #expect(plan.root.op == .limit(0))
        #expect(plan.cost == 0)
    }

    /// A run plans without its rejected list and drops candidates by a cost bound: across every
    /// shape below, page size and catalog, it must choose the plan `explain` shows.
    @Test func planningWithoutTheRejectedListChoosesTheSamePlan() throws {
        let predicates: [(String, [PredicateArgument])] = [
            ("TRUEPREDICATE", []), ("kind == 'cafe'", []), ("kind == 'village'", []), ("population > 999000", []),
            ("population > 10", []), ("name BEGINSWITH 'Sal'", []), ("kind IN {'cafe', 'city'}", []),
            ("tags CONTAINS 'x'", []), ("self CONTAINS 'rare'", []), ("self CONTAINS 'common'", []),
            ("rating < 3", []), ("kind == 'cafe' AND population > 5000 AND rating < 3", []),
            ("distanceToLocation:fromLocation:(location, %@) < 2", [here]),
            ("kind == 'castle' AND distanceToLocation:fromLocation:(location, %@) < 2", [here]),
            ("self CONTAINS 'rare' AND population BETWEEN {100, 5000}", []),
        ]
        let sorts: [[SortDescriptor]] = [
            [], [.field("population", ascending: false)], [.field("name", ascending: true)],
            [.distance(field: "location", from: louvre)], [.field("rating", ascending: true)],
        ]
        var withAlternatives = 0
        for (p, a) in predicates {
            for sort in sorts {
                let q = try query(p, a, sort: sort)
                for limit in [nil, 1, 20, 400] {
                    for s in [stats, statsWithRecordName] {
                        let full = QueryPlanner.plan(q, statistics: s, limit: limit)
                        let run = QueryPlanner.plan(q, statistics: s, limit: limit, withRejected: false)
                        #expect(run.root == full.root, "\(p) sort \(sort) limit \(String(describing: limit))")
                        #expect(run.cost == full.cost && run.residualFilters == full.residualFilters)
                        #expect(run.streamsInOrder == full.streamsInOrder && run.rejected.isEmpty)
                        if !full.rejected.isEmpty { withAlternatives += 1 }
                    }
                }
            }
        }
        #expect(withAlternatives > 0)
    }

    @Test func everyFilterIsAnsweredByASourceOrTheResidual() throws {
        let q = try query("kind == 'cafe' AND population > 5000 AND rating < 3 AND NOT (tags CONTAINS 'x')", [])
        let plan = QueryPlanner.plan(q, statistics: stats, limit: 50)
        #expect(Set(plan.residualFilters.map(\.fieldName)).isSuperset(of: ["rating", "tags"]))
    }
}

@Suite struct IndexAdvisorTests {
    @Test func listsTheOptionsAQueryNeeds() throws {
        let q = try query(
            "kind == 'cafe' AND population > 5 AND self CONTAINS 'x'", sort: [.field("name", ascending: true)])
        #expect(
            QueryPlanner.requiredIndexes(q).map(\.description) == [
                "kind QUERYABLE  (EQUALS)", "population SORTABLE  (GREATER_THAN)",
                "(a String field) SEARCHABLE  (CONTAINS_ANY_TOKENS)", "name SORTABLE  (sort)",
            ])
        #expect(QueryPlanner.requiredIndexes(try query("TRUEPREDICATE")).map(\.field) == ["recordName"])
    }

    @Test func fingerprintsAreStableAndDistinguishQueries() throws {
        let a = try query("kind == 'cafe'")
        #expect(QueryPlanner.fingerprint(a) == QueryPlanner.fingerprint(try query("kind = \"cafe\"")))
        #expect(QueryPlanner.fingerprint(a) != QueryPlanner.fingerprint(try query("kind == 'bar'")))
        #expect(
            QueryPlanner.fingerprint(a)
                != QueryPlanner.fingerprint(try query("kind == 'cafe'", sort: [.field("kind", ascending: true)])))
    }
}

@Suite struct KeyRangeTests {
    @Test func intersectionKeepsTheTighterBounds() {
        let a = KeyRange(lower: KeyBound(.int64(5), inclusive: true), upper: KeyBound(.int64(10), inclusive: true))
        let b = KeyRange(lower: KeyBound(.int64(5), inclusive: false), upper: KeyBound(.double(12), inclusive: true))
        let c = a.intersected(with: b)
        #expect(c.description == "(5, 10]")
        #expect(!c.isEmpty)
        #expect(
            KeyRange(lower: KeyBound(.int64(3), inclusive: true), upper: KeyBound(.int64(3), inclusive: false)).isEmpty)
        #expect(KeyRange.point(.string("x")).isPoint)
    }
}

extension PlanShapeTests {
    /// A stream that stops at the page on the strength of two filters' selectivities multiplied
    /// as if independent is charged part of its worst case (every entry read, when correlated
    /// filters match nothing), so the set plan bounded by its index sets wins the near tie —
    /// without that charge the stream costs about 406 here and wins.
    @Test func aStreamBettingOnTwoIndependentFiltersLosesANearTie() throws {
        let text = try explain(
            "kind == 'village' AND tags CONTAINS 'x'", sort: [.field("population", ascending: false)], limit: 50)
        #expect(
            text.contains(
                """
                top 50 by population DESC, recordID  (est 50)
                  intersect  (est 8000)
                    index tags = "x"  (est 20000)
                    index kind = "village"  (est 400000)
                """), "\(text)")
        // Over one filter the bet stands: the stream still wins where it should.
        #expect(
            try explain(
                "kind == 'city' AND population > 5000", sort: [.field("population", ascending: false)], limit: 50
            )
            .contains("index scan population > 5000 DESC, ordered"))
    }
}

import RecordModel
import Testing

@testable import QueryPlanner

/// Candidates are weighed without their trees; the chosen one's tree is built afterwards by
/// `Context.tree(of:)`, from the candidate's kind. That tree must be the one the candidate's
/// builder makes when it builds, at the cost it weighed.
@Suite struct CandidateTreeTests {
    @Test func aCandidatesTreeIsTheOneItsBuilderWeighed() throws {
        let here = PredicateArgument.value(.location(louvre))
        let predicates: [(String, [PredicateArgument])] = [
            ("TRUEPREDICATE", []), ("kind == 'cafe'", []), ("population > 10", []),
            ("kind == 'cafe' AND population > 5000 AND rating < 3", []),
            ("kind == 'castle' AND distanceToLocation:fromLocation:(location, %@) < 2", [here]),
            ("self CONTAINS 'rare' AND population BETWEEN {100, 5000} AND name BEGINSWITH 'Sa'", []),
            ("tags CONTAINS 'x' AND kind IN {'cafe', 'city'}", []),
        ]
        let sorts: [[SortDescriptor]] = [
            [], [.field("population", ascending: false)], [.distance(field: "location", from: louvre)],
        ]
        var weighed = 0
        for (p, a) in predicates {
            for sort in sorts {
                let q = try query(p, a, sort: sort)
                let filters = q.predicate.filters
                for s in [stats, statsWithRecordName] {
                    let paths = QueryPlanner.accessPaths(filters, s)
                    for limit in [nil, 20] {
                        let (shares, measured) = QueryPlanner.selectivities(
                            paths, q, limit: limit, rows: Double(s.rowCount), s)
                        let context = Context(
                            query: q, filters: filters, rows: Double(s.rowCount), estimate: 500, limit: limit,
                            paths: paths, pathShares: shares, measured: measured, stats: s)
                        func check(_ built: (Candidate, Candidate.Tree?)?, _ weighedOnly: (Candidate, Candidate.Tree?)?)
                        {
                            guard let (c, tree) = built, let tree, let (w, none) = weighedOnly else {
                                #expect(built == nil && weighedOnly == nil, "\(p)")
                                return
                            }
                            #expect(none == nil)
                            #expect(w.cost == c.cost, "\(p) sort \(sort)")
                            #expect(context.tree(of: w) == tree, "\(p) sort \(sort) kind \(w.kind)")
                            weighed += 1
                        }
                        for i in paths.indices {
                            check(context.setPlan(driver: i, build: true), context.setPlan(driver: i, build: false))
                        }
                        check(
                            context.orderedStream(bound: .infinity, build: true),
                            context.orderedStream(bound: .infinity, build: false))
                        check(
                            context.nearestStream(bound: .infinity, build: true),
                            context.nearestStream(bound: .infinity, build: false))
                        if let full = context.fullScan(bound: .infinity) {
                            #expect(context.tree(of: full) == context.fullScanTree())
                        }
                    }
                }
            }
        }
        #expect(weighed > 100)
    }
}

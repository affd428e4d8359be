// Conjunctions of correlated fields (a region and its country): the planner's estimate comes
// from a sample of the smallest key range's rows (`SnapshotStatistics.sampledShare`), not from
// multiplying the filters' shares as if independent; the answers are the full scan's either way.

import Indexes
import QueryChecker
import RecordModel
import Testing

@testable import QueryExecution
@testable import QueryPlanner

@Suite struct CorrelatedConjunctionTests {
    /// 6 000 places: region `r0`…`r59` (100 places each), each region in one country
    /// (`c<region / 6>`: 600 places each), distinct populations.
    static let records: [Record] = (0..<6_000).map { i in
        var fields: RecordFields = [:]
        fields["region"] = .string("r\(i % 60)")
        fields["country"] = .string("c\(i % 60 / 6)")
        fields["population"] = .int64(Int64(i * 7_919 % 6_000))
        return Record(recordType: "Place", recordID: RecordID(recordName: "p\(i)"), fields: fields)
    }
    static let schema = RecordTypeSchema(
        name: "Place",
        fields: [
            FieldSchema(name: "region", type: .string, options: [.queryable]),
            FieldSchema(name: "country", type: .string, options: [.queryable]),
            FieldSchema(name: "population", type: .int64, options: [.queryable, .sortable]),
        ])
    let snap = MemorySnapshot(schema: schema, records: records)

    func query(_ p: String, sort: [SortDescriptor]) throws -> Query {
        Query(
            recordType: "Place", predicate: try QueryChecker.check(p, context: CheckContext()).predicate,
            sortDescriptors: sort)
    }

    @Test func aShareIsExactOverFewRowsAndSampledOverMany() {
        let stats = snap.statistics
        let r35 = KeyRange.point(.string("r35"))  // in c5
        // 100 rows, sampled: every sampled row is in c5 (smoothed a little), none in c3.
        #expect(stats.sampledShare("region", in: r35, other: "country", in: .point(.string("c5")))! > 0.95)
        #expect(stats.sampledShare("region", in: r35, other: "country", in: .point(.string("c3")))! < 0.05)
        // A range of 64 rows or fewer is read whole: exact.
        let small = KeyRange(lower: KeyBound(.int64(5_990), inclusive: true), upper: nil)  // 10 rows
        let exact = stats.sampledShare("population", in: small, other: "country", in: .point(.string("c0")))
        let want = Self.records.filter {
            if case .int64(let p)? = $0["population"], p >= 5_990 { $0["country"] == .string("c0") } else { false }
        }.count
        #expect(exact == Double(want) / 10)
        // 600 rows: a sample of about 64, one region in six.
        let c5 = KeyRange.point(.string("c5"))
        let share = stats.sampledShare("country", in: c5, other: "region", in: .point(.string("r30")))
        #expect(share.map { $0 > 0.05 && $0 < 0.35 } == true, "\(String(describing: share))")
        // Not measured: a list or system field, a field without an index, no rows.
        #expect(stats.sampledShare("nothing", in: c5, other: "region", in: r35) == nil)
        #expect(stats.sampledShare("country", in: .point(.string("zz")), other: "region", in: r35) == nil)
        #expect(stats.sampledShare("country", in: c5, other: "recordName", in: r35) == nil)
        // Without a reader (statistics built from indexes alone): not measured.
        let bare = SnapshotStatistics(indexes: snap.indexes, schema: Self.schema, rows: 6_000)
        #expect(bare.sampledShare("region", in: r35, other: "country", in: .point(.string("c5"))) == nil)
    }

    /// A sorted page over a region and its own country: the conjunction's estimate is the
    /// region's 100 rows, not the 10 that independence gives; over a region and another country,
    /// about none.
    @Test(arguments: [("c5", 100.0), ("c3", 0.0)])
    func theEstimateCountsWhatCorrelatedFiltersMatchTogether(country: String, expected: Double) throws {
        let q = try query(
            "country == '\(country)' AND region == 'r35'", sort: [.field("population", ascending: false)])
        func estimate(_ stats: some IndexStatistics, limit: Int?) -> Double {
            let paths = QueryPlanner.accessPaths(q.predicate.filters, stats)
            let (shares, _) = QueryPlanner.selectivities(paths, q, limit: limit, rows: 6_000, stats)
            return shares.reduce(6_000, *)
        }
        let sampled = estimate(snap.statistics, limit: 10)
        if expected > 0 { #expect(sampled > expected * 0.9) } else { #expect(sampled < 1) }
        // Independent: 6 000 × 1/10 × 1/60 — without a reader, or without a page to stop early.
        let bare = SnapshotStatistics(indexes: snap.indexes, schema: Self.schema, rows: 6_000)
        #expect(abs(estimate(bare, limit: 10) - 10) < 1e-9)
        #expect(abs(estimate(snap.statistics, limit: nil) - 10) < 1e-9)
    }

    /// Whatever plan the sampled estimates choose, the answers are the full scan's.
    @Test func answersAreTheOraclesWhateverThePlan() throws {
        for (p, sort, limit) in [
            ("country == 'c5' AND region == 'r35'", [SortDescriptor.field("population", ascending: false)], 10),
            ("country == 'c3' AND region == 'r35'", [.field("population", ascending: false)], 10),
            ("country == 'c5' AND region == 'r35' AND population > 3000", [.field("population", ascending: true)], 7),
            ("region == 'r35' AND country == 'c5'", [.field("region", ascending: true)], 20),
            ("country == 'c1' AND region IN {'r6', 'r7', 'r50'}", [.field("population", ascending: false)], 25),
        ] {
            let q = try query(p, sort: sort)
            let plan = QueryPlanner.plan(q, statistics: snap.statistics, limit: limit)
            let page = try QueryExecutor.run(plan, on: snap, after: nil, pageSize: limit)
            let full = QueryPlanner.plan(q, statistics: StaticStatistics(rowCount: 6_000), limit: limit)
            let oracle = try QueryExecutor.run(full, on: snap, after: nil, pageSize: limit)
            #expect(page.records.map(\.recordID) == oracle.records.map(\.recordID), "\(p)\n\(plan.explain())")
        }
    }
}

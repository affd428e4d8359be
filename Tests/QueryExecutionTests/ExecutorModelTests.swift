// The executor against a full-scan oracle on random data, with forced continuations: for every
// random query, paging with sizes 1, 2, 7 and 50 must concatenate to the one-shot result, which
// must equal the oracle's answer in the same order (sort keys, then record id).

import CirrusTestSupport
import Indexes
import QueryChecker
import QueryPlanner
import RecordModel
import Testing

@testable import QueryExecution

@Suite struct ExecutorModelTests {
    /// All pages of `q`; with `live`, each page continues the previous page's live stream state
    /// (as the database does while nothing changes) instead of seeking to the cursor position.
    func pages(_ q: Query, _ snap: MemorySnapshot, size: Int, zone: ZoneID?, live: Bool = false) throws -> [RecordID] {
        var out: [RecordID] = []
        var after: OrderKey? = nil
        var continuation: StreamContinuation? = nil
        for _ in 0..<10_000 {
            let plan = QueryPlanner.plan(q, statistics: snap.statistics, limit: size)
            let page = try QueryExecutor.run(
                plan, on: snap, after: after, pageSize: size, zone: zone,
                resume: live ? continuation : nil)
            continuation = page.continuation
            out += page.records.map(\.recordID)
            guard let next = page.next else { return out }
            #expect(page.records.count == size, "a page with a cursor is full")
            after = next
        }
        Issue.record("paging did not end")
        return out
    }

    @Test func randomQueriesMatchTheOracleInEveryPageSize() throws {
        let seed = TestSeed.next()
        var data = PlaceGenerator(rng: SeededRandom(seed: seed))
        for size in [0, 1, 2, 5, 40, 150, 400] {
            let records = (0..<size).map { data.record($0) }
            let schema = data.schema()
            let snap = MemorySnapshot(schema: schema, records: records, nodeSize: 4)
            try snap.indexes.checkInvariants()
            for _ in 0..<(size < 50 ? 15 : 40) {
                var format: [String] = []
                var args: [PredicateArgument] = []
                for _ in 0..<(data.rng.below(3)) {
                    let (f, a) = data.filter()
                    format.append(f)
                    args += a
                }
                let checked = try QueryChecker.check(
                    format.isEmpty ? "TRUEPREDICATE" : format.joined(separator: " AND "),
                    context: CheckContext(arguments: args))
                let q = Query(recordType: "Place", predicate: checked.predicate, sortDescriptors: data.sorts())
                let zone: ZoneID? = data.rng.chance(0.3) ? data.zones[data.rng.below(2)] : nil
                let expected = FullScan.results(q, records: records, schema: schema, zone: zone).map(\.recordName)
                let oneShot = try pages(q, snap, size: 100_000, zone: zone).map(\.recordName)
                #expect(
                    oneShot == expected,
                    "missing \(Set(expected).subtracting(oneShot).sorted()), extra \(Set(oneShot).subtracting(expected).sorted()); seed \(seed), \(size) records: \(q)\n\(QueryPlanner.plan(q, statistics: snap.statistics, limit: 100_000).explain())"
                )
                for pageSize in [1, 2, 7, 50] {
                    let paged = try pages(q, snap, size: pageSize, zone: zone, live: pageSize != 7).map(\.recordName)
                    #expect(
                        paged == expected,
                        "missing \(Set(expected).subtracting(paged).sorted()), extra \(Set(paged).subtracting(expected).sorted()); seed \(seed), page size \(pageSize): \(q)\n\(QueryPlanner.plan(q, statistics: snap.statistics, limit: pageSize).explain())"
                    )
                }
            }
        }
    }
}

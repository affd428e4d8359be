// PostgreSQL against the embedded engine's full-scan oracle (QueryExecution's FullScan, whose
// filter is RecordMatcher): seeded random places and schemas (CirrusTestSupport's
// PlaceGenerator, as ExecutorModelTests), random checked predicates and sorts; the records
// PostgreSQL returns — the set, and the order — must be the oracle's, and paging through
// keyset cursors with pages of 1, 3 and 50 must concatenate to the one-shot answer.
// On failure the message has the seed: CIRRUS_SEED=<seed> make test-postgres replays it.

import CirrusPostgres
import CirrusTestSupport
import QueryChecker
import QueryExecution
import RecordModel
import Testing

@Suite(.enabled(if: PG.available, PG.disabledReason))
struct PostgresOracleTests {
    /// Every record of `q`, following cursors with pages of `size`.
    func paged(_ store: PostgresStore, _ q: Query, zone: ZoneID?, size: Int) async throws -> [String] {
        var out: [String] = []
        var page = try await store.records(matching: q, inZone: zone, resultsLimit: size)
        for _ in 0..<10_000 {
            out += page.records.map(\.recordID.recordName)
            guard let next = page.cursor else { return out }
            #expect(page.records.count == size, "a page with a cursor is full")
            page = try await store.records(continuingFrom: next, resultsLimit: size)
        }
        Issue.record("paging did not end")
        return out
    }

    @Test func randomQueriesMatchTheOracle() async throws {
        let seed = TestSeed.next()
        var data = PlaceGenerator(rng: SeededRandom(seed: seed))
        for size in [0, 30, 300] {
            let store = try await PG.store(PG.freshContainer("oracle"))
            let typeSchema = data.schema()
            try await store.apply(schema: Schema(environment: .development, recordTypes: [typeSchema]))
            let generated = (0..<size).map { PG.conforming(data.record($0), to: typeSchema) }
            var start = 0
            while start < generated.count {  // several requests: creation dates differ
                let end = min(generated.count, start + 1 + data.rng.below(120))
                _ = try await store.modify(saving: Array(generated[start..<end]), policy: .allKeys, atomically: false)
                start = end
            }
            // The oracle reads what the store holds (system fields are the store's).
            let stored = Array(try await store.records(for: generated.map(\.recordID)).values)
            #expect(stored.count == size, "seed \(seed)")
            for _ in 0..<(size < 50 ? 15 : 40) {
                let q = try PG.randomPlaceQuery(&data)
                let zone: ZoneID? = data.rng.chance(0.3) ? data.zones[data.rng.below(2)] : nil
                let expected = FullScan.results(q, records: stored, schema: typeSchema, zone: zone).map(\.recordName)
                let oneShot = try await store.records(matching: q, inZone: zone, resultsLimit: 100_000).records.map(
                    \.recordID.recordName)
                let explain = { () async -> String in
                    (try? await store.explain(q, inZone: zone).text) ?? "(explain failed)"
                }
                if oneShot != expected {
                    Issue.record(
                        "missing \(Set(expected).subtracting(oneShot).sorted()), extra \(Set(oneShot).subtracting(expected).sorted()), order \(oneShot == expected); seed \(seed), \(size) records: \(q)\n\(await explain())"
                    )
                }
                for pageSize in [1, 3, 50] where size < 50 || pageSize != 1 {
                    let pages = try await paged(store, q, zone: zone, size: pageSize)
                    if pages != expected {
                        Issue.record(
                            "paged by \(pageSize): missing \(Set(expected).subtracting(pages).sorted()), extra \(Set(pages).subtracting(expected).sorted()); seed \(seed), \(size) records: \(q)\n\(await explain())"
                        )
                    }
                }
            }
            await store.close()
        }
    }
}

// Statistics that follow a growing table: ANALYZE as the records double.
//
// PostgreSQL plans from the statistics ANALYZE last gathered. A container's tables start empty,
// and autovacuum analyzes them only after a naptime (a minute by default) — long after a burst
// of writes has grown them. Until then the planner reasons from no column statistics at all,
// and it reasons wrong: looking up 400 names by primary key, it chose `cirrus_names_seq`
// (tenant, zone_name, seq, …), whose prefix matches two of the four equalities, so each probe
// read every name of the zone, and a request grew slower with the table (figures:
// docs/benchmarks.md, "Statistics that follow the writes").
//
// So the store counts the records its saves wrote since it last analyzed, and once that count
// reaches the rows analyzed before (at least `TableGrowth.first`), it runs ANALYZE on the
// names and the tables written, after the request's commit, outside any transaction (ANALYZE
// in the writer's transaction would hold its lock to the commit, beside row locks another
// writer may wait on). Doubling keeps the work proportional: log2(n) analyses over n records,
// each sampling at most PostgreSQL's 30 000 rows. Per store, in memory: another process's
// writes are its own to count, and autovacuum keeps statistics fresh in the long run.

import CirrusFacade
import Logging
import PostgresNIO
import RecordModel

/// Records written since the last ANALYZE, and how many there were then.
struct TableGrowth: Sendable {
    /// Records written before the first ANALYZE.
    static let first = 256

    /// Records counted at the last ANALYZE (0: none yet).
    private(set) var analyzed = 0
    /// Records written since.
    private(set) var pending = 0
    /// Record types written since.
    private(set) var types: Set<String> = []

    /// Counts `records` written of `types`; true when the tables should be analyzed now (the
    /// count is then taken as analyzed).
    mutating func add(_ records: Int, types written: some Sequence<String>) -> Bool {
        guard records > 0 else { return false }
        pending += records
        types.formUnion(written)
        guard pending >= max(Self.first, analyzed) else { return false }
        analyzed += pending
        pending = 0
        return true
    }

    /// The types written since the last ANALYZE, forgotten.
    mutating func takeTypes() -> Set<String> {
        defer { types = [] }
        return types
    }
}

extension PostgresStore {
    /// Counts the saves of a request that committed and, when the records have doubled since
    /// the last ANALYZE, analyzes the names and the tables written (see the file header). A
    /// failed ANALYZE is logged: the request has committed, and its outcome stands.
    func noteWritten(_ items: [PostgresItem], _ results: [Result<Record?, CirrusError>]) async {
        guard layout == .singleNode else { return }  // foreign tables: ANALYZE samples remote shards
        var saved = 0
        var types: Set<String> = []
        for (item, result) in zip(items, results) {
            guard case .save(let r, _, _) = item, case .success = result else { continue }
            saved += 1
            types.insert(r.recordType)
        }
        guard growth.add(saved, types: types) else { return }
        let written = growth.takeTypes().compactMap { tables[$0]?.qualifiedTable }.sorted()
        let statement =
            "ANALYZE " + ([SQLName.qualified(tenant.namespace, "cirrus_names")] + written).joined(separator: ", ")
        do {
            try await run("analyzing the tables of \(tenant.namespace)") { client in
                _ = try await client.query(PostgresQuery(unsafeSQL: statement))
            }
        } catch {
            logger.warning("statistics not refreshed after a write: \(error.message)")
        }
    }
}

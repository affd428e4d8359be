// PostgresPeer: the same records on Cirrus-on-PostgreSQL (CirrusPostgres, PostgreSQL + PostGIS),
// the third engine of `qbench --postgres URL`. A fresh container per run (its own namespace of
// tables, so runs never read each other's rows), the embedded container's schema applied as is,
// records saved through `PostgresStore.modify` in requests of the run's batch (≤ 400, one
// transaction each), then `analyze()` — what an application would do after a bulk load. Queries
// go through `PostgresStore.query` (the same QueryChecker as the embedded engine, checked on
// every call as `Database.records(matching:)` checks) and `records(matching:)` /
// `records(continuingFrom:)` with keyset cursors. The tables are left in the database (the
// `make bench-postgres` cluster is dropped afterwards); their namespace is printed.

import Cirrus
import CirrusPostgres
import Foundation
import RecordModel

final class PostgresPeer {
    let store: PostgresStore
    let tenant: PostgresTenant

    /// Connects to `url` with a container no earlier run used.
    init(url: String) async throws {
        let id =
            "iCloud.qbench.r\(ProcessInfo.processInfo.processIdentifier)t\(UInt64(Date().timeIntervalSince1970 * 1000))"
        tenant = PostgresTenant(containerID: id, environment: .development, database: .public)
        store = try await PostgresStore.connect(url: url, tenant: tenant, timeout: .seconds(120))
    }

    /// `host:port/database`.
    var address: String { store.address }

    func apply(_ schema: Schema) async throws { try await store.apply(schema: schema) }

    /// Saves `records` in requests of `batch` (≤ 400), each one transaction, calling `progress(n)`.
    func ingest(_ records: [Record], batch: Int, progress: (Int) -> Void) async throws {
        var i = 0
        while i < records.count {
            let end = min(records.count, i + batch)
            _ = try await store.modify(saving: Array(records[i..<end]), policy: .allKeys, atomically: true)
            i = end
            progress(i)
        }
    }

    /// The administrator's import of `records` (COPY, one transaction; PostgresStore+Import.swift)
    /// in batches of 4 096; throws when any record is rejected.
    func bulkImport(_ records: [Record]) async throws {
        let rejected = try await store.importing { importer in
            var refused = 0
            var i = 0
            while i < records.count {
                let end = min(records.count, i + 4096)
                refused += try await importer.add(Array(records[i..<end])).count
                i = end
            }
            return refused
        }
        if rejected > 0 { throw GenericError(message: "the PostgreSQL import rejected \(rejected) records") }
    }

    /// Nanoseconds of `ANALYZE` on the container's tables.
    func analyze() async throws -> Double {
        let t0 = Measure.now()
        try await store.analyze()
        return Double(Measure.now() - t0)
    }

    func close() async { await store.close() }

    /// The checked query of `q` (the store's schema; invalidArguments when refused).
    func checked(_ q: RecordQuery) async throws -> Query {
        try await store.query(q.recordType, q.predicate, q.arguments, sortDescriptors: q.sortDescriptors)
    }

    /// One page of `q` and its cursor.
    func page(_ q: RecordQuery, limit: Int) async throws -> ([Record], PostgresCursor?) {
        let p = try await store.records(matching: try await checked(q), resultsLimit: limit)
        return (p.records, p.cursor)
    }

    func next(_ cursor: PostgresCursor, limit: Int) async throws -> ([Record], PostgresCursor?) {
        let p = try await store.records(continuingFrom: cursor, resultsLimit: limit)
        return (p.records, p.cursor)
    }

    /// Every record of `q`, following cursors.
    func all(_ q: RecordQuery, pageSize: Int = 10_000) async throws -> [Record] {
        var (out, cursor) = try await page(q, limit: pageSize)
        while let c = cursor {
            let (more, nc) = try await next(c, limit: pageSize)
            out += more
            cursor = nc
        }
        return out
    }

    /// The record named `recordName` (default zone), as a one-element list.
    func point(_ recordName: String) async throws -> [String] {
        [try await store.record(for: RecordID(recordName: recordName)).recordID.recordName]
    }
}

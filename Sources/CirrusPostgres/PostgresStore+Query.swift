// Queries: a checked `Query` → QueryTranslator's SELECT → a page of records and a keyset cursor.
// `explain` shows PostgreSQL's plan of the very statement a page runs.

import NIOCore
import PostgresNIO
import PredicateSyntax
import QueryChecker
import RecordModel

/// Where the next page of a query starts. Not a snapshot (as CloudKit's cursors are not): the
/// next page runs on the rows as they are then, after the last row returned.
public struct PostgresCursor: Sendable, Hashable {
    /// The checked query.
    public let query: Query
    /// The zone searched (nil: every zone of the tenant).
    public let zone: ZoneID?
    /// The tenant that issued the cursor (another tenant's store refuses it).
    public let tenantKey: String
    let position: KeysetPosition

    /// The record id of the last row of the page that issued this cursor.
    public var lastRecordID: RecordID { position.recordID }
}

/// One page of a query.
public struct PostgresQueryPage: Sendable {
    /// The records, in the query's order (projected to `desiredKeys`).
    public var records: [Record]
    /// Non-nil when more records may follow.
    public var cursor: PostgresCursor?
}

/// The SQL a page runs and PostgreSQL's plan of it.
public struct PostgresExplanation: Sendable {
    /// The statement, with `$n` parameters.
    public var sql: String
    /// The parameters' values, as bound (text forms).
    public var parameters: [String]
    /// `EXPLAIN` (or `EXPLAIN ANALYZE`) output, one line per plan line.
    public var plan: [String]

    /// The statement, its parameters and the plan.
    public var text: String {
        sql + "\n" + parameters.enumerated().map { "  $\($0.offset + 1) = \($0.element)" }.joined(separator: "\n")
            + "\n" + plan.joined(separator: "\n")
    }
}

extension PostgresStore {
    /// The page size when `resultsLimit` is 0 ("the engine chooses").
    public static let defaultResultsLimit = 100

    /// Checks a CKQuery predicate against the store's schema (QueryChecker: the CKQuery subset,
    /// production index options) and its sort descriptors; invalidArguments (12) with the
    /// checker's rendered message when refused.
    ///
    /// ```swift
    /// let q = try await store.query("Place", "kind == %@ AND population > %@", ["cafe", 1000])
    /// ```
    public func query(
        _ recordType: String, _ format: String, _ arguments: [PredicateArgument] = [],
        sortDescriptors: [SortDescriptor] = []
    ) throws(PostgresStoreError) -> Query {
        let ctx = CheckContext(
            arguments: arguments, schema: schema, recordType: recordType, now: clock(), source: format)
        do throws(PredicateError) {
            let checked = try QueryChecker.check(format, context: ctx)
            try QueryChecker.checkSort(sortDescriptors, context: ctx)
            return Query(recordType: recordType, predicate: checked.predicate, sortDescriptors: sortDescriptors)
        } catch {
            throw PostgresStoreError(
                .invalidArguments, error.range == .none ? error.message : error.rendered(source: format))
        }
    }

    /// The first page of `query` in this tenant (`zone` nil: every zone); `desiredKeys` nil
    /// returns whole records, `[]` system fields only.
    public func records(
        matching query: Query, inZone zone: ZoneID? = nil, desiredKeys: [String]? = nil, resultsLimit: Int = 0
    ) async throws(PostgresStoreError) -> PostgresQueryPage {
        try await page(query, zone: zone, after: nil, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
    }

    /// The page after `cursor`'s.
    public func records(
        continuingFrom cursor: PostgresCursor, desiredKeys: [String]? = nil, resultsLimit: Int = 0
    ) async throws(PostgresStoreError) -> PostgresQueryPage {
        guard cursor.tenantKey == tenant.key else {
            throw PostgresStoreError(
                .invalidArguments, "the cursor was issued for another tenant (\(cursor.tenantKey))")
        }
        return try await page(
            cursor.query, zone: cursor.zone, after: cursor.position, desiredKeys: desiredKeys,
            resultsLimit: resultsLimit)
    }

    /// PostgreSQL's plan of the first page of `query` (`analyze`: run it and show actual rows and
    /// times; `verbose`: `EXPLAIN (VERBOSE)`, which shows each foreign scan's remote SQL).
    public func explain(
        _ query: Query, inZone zone: ZoneID? = nil, resultsLimit: Int = 0, analyze: Bool = false,
        verbose: Bool = false
    ) async throws(PostgresStoreError) -> PostgresExplanation {
        let limit = resultsLimit > 0 ? resultsLimit : Self.defaultResultsLimit
        let t = try QueryTranslator.translate(
            query, layout: try layout(query.recordType), tenant: tenant.key, zone: zone, after: nil, limit: limit + 1)
        let sql = t.sql
        let binds = t.builder.binds
        let chosen = (analyze ? ["ANALYZE", "BUFFERS"] : []) + (verbose ? ["VERBOSE"] : [])
        let options = chosen.isEmpty ? "" : "(" + chosen.joined(separator: ", ") + ") "
        let plan = try await run("explaining a query of \(tenant.key)", retryRead: true) { client in
            var lines: [String] = []
            let rows = try await client.query(
                PostgresQuery(unsafeSQL: "EXPLAIN \(options)\(sql)", binds: binds))
            for try await line in rows.decode(String.self) { lines.append(line) }
            return lines
        }
        return PostgresExplanation(sql: sql, parameters: t.builder.texts, plan: plan)
    }

    func page(
        _ query: Query, zone: ZoneID?, after: KeysetPosition?, desiredKeys: [String]?, resultsLimit: Int
    ) async throws(PostgresStoreError) -> PostgresQueryPage {
        let limit = resultsLimit > 0 ? resultsLimit : Self.defaultResultsLimit
        let t = try QueryTranslator.translate(
            query, layout: try layout(query.recordType), tenant: tenant.key, zone: zone, after: after, limit: limit + 1)
        let sql = t.sql
        let binds = t.builder.binds
        let rows = try await run("querying \(query.recordType) of \(tenant.key)", retryRead: true) { client in
            var out: [([UInt8], [String])] = []
            let rows = try await client.query(PostgresQuery(unsafeSQL: sql, binds: binds))
            for try await (data, keys) in rows.decode((ByteBuffer, [String]).self) {
                out.append((Array(data.readableBytesView), keys))
            }
            return out
        }
        var records: [Record] = []
        for (data, _) in rows.prefix(limit) {
            var r = try RecordRow.decode(data)
            if let desiredKeys { r.fields = r.fields.filter { desiredKeys.contains($0.key) } }
            records.append(r)
        }
        var cursor: PostgresCursor? = nil
        if rows.count > limit, let last = records.last {
            cursor = PostgresCursor(
                query: query, zone: zone, tenantKey: tenant.key,
                position: KeysetPosition(keys: rows[limit - 1].1, recordID: last.recordID))
        }
        return PostgresQueryPage(records: records, cursor: cursor)
    }
}

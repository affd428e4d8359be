// Queries: a checked `Query` → QueryTranslator's SELECT → a page of records and a keyset cursor.
// `explain` shows PostgreSQL's plan of the very statement a page runs.

import CirrusFacade
import NIOCore
import PostgresNIO
import PredicateSyntax
import QueryChecker
import RecordModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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
    ) throws(CirrusError) -> Query {
        let ctx = CheckContext(
            arguments: arguments, schema: schema, recordType: recordType, now: clock(), source: format)
        do throws(PredicateError) {
            let checked = try QueryChecker.check(format, context: ctx)
            try QueryChecker.checkSort(sortDescriptors, context: ctx)
            return Query(recordType: recordType, predicate: checked.predicate, sortDescriptors: sortDescriptors)
        } catch {
            throw CirrusError(
                .invalidArguments, error.range == .none ? error.message : error.rendered(source: format))
        }
    }

    /// The first page of `query` in this tenant (`zone` nil: every zone); `desiredKeys` nil
    /// returns whole records, `[]` system fields only.
    public func records(
        matching query: Query, inZone zone: ZoneID? = nil, desiredKeys: [String]? = nil, resultsLimit: Int = 0
    ) async throws(CirrusError) -> PostgresQueryPage {
        try await page(query, zone: zone, after: nil, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
    }

    /// The page after `cursor`'s.
    public func records(
        continuingFrom cursor: PostgresCursor, desiredKeys: [String]? = nil, resultsLimit: Int = 0
    ) async throws(CirrusError) -> PostgresQueryPage {
        guard cursor.tenantKey == tenant.key else {
            throw CirrusError(
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
    ) async throws(CirrusError) -> PostgresExplanation {
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
    ) async throws(CirrusError) -> PostgresQueryPage {
        let limit = resultsLimit > 0 ? resultsLimit : Self.defaultResultsLimit
        let layout = try layout(query.recordType)
        var t = try QueryTranslator.translate(
            query, layout: layout, tenant: tenant.key, zone: zone, after: after, limit: limit + 1)
        var rows = try await fetch(t, query.recordType)
        if t.knn {
            if let exact = Self.knnPage(rows, fetched: limit + 1 + QueryTranslator.defaultKNNExtra, page: limit + 1) {
                rows = exact
            } else {
                // Rows at (nearly) the same distance straddle the fetched ones: sort on the server.
                t = try QueryTranslator.translate(
                    query, layout: layout, tenant: tenant.key, zone: zone, after: after, limit: limit + 1, exact: true)
                rows = try await fetch(t, query.recordType)
            }
        }
        var records: [Record] = []
        for row in rows.prefix(limit) {
            var r = row.record
            if let desiredKeys { r.fields = r.fields.filter { desiredKeys.contains($0.key) } }
            records.append(r)
        }
        var cursor: PostgresCursor? = nil
        if rows.count > limit, let last = records.last {
            cursor = PostgresCursor(
                query: query, zone: zone, tenantKey: tenant.key,
                position: KeysetPosition(keys: rows[limit - 1].keys, recordID: last.recordID))
        }
        return PostgresQueryPage(records: records, cursor: cursor)
    }

    /// One row of a page's statement: the record, its sort keys as PostgreSQL printed them, and
    /// (KNN scans) PostGIS's distance in metres.
    struct PageRow: Sendable {
        var record: Record
        var keys: [String]
        var knnMetres: Double?
    }

    /// Runs a page's statement (prepared, unless it `plansPerCall`) and decodes its rows.
    func fetch(_ t: TranslatedQuery, _ recordType: String) async throws(CirrusError) -> [PageRow] {
        let sql = t.sql
        let binds = t.builder.binds
        let registry = t.plansPerCall ? nil : statements
        let logger = self.logger
        let knn = t.knn
        let raw = try await run("querying \(recordType) of \(tenant.key)", retryRead: true) { client in
            var out: [([UInt8], [String], Double?)] = []
            for row in try await client.run(sql, binds, registry: registry, logger: logger) {
                if knn {
                    let (data, keys, metres) = try row.decode((ByteBuffer, [String], Double?).self)
                    out.append((Array(data.readableBytesView), keys, metres))
                } else {
                    let (data, keys) = try row.decode((ByteBuffer, [String]).self)
                    out.append((Array(data.readableBytesView), keys, nil))
                }
            }
            return out
        }
        var rows: [PageRow] = []
        rows.reserveCapacity(raw.count)
        for (data, keys, metres) in raw {
            rows.append(PageRow(record: try RecordRow.decode(data), keys: keys, knnMetres: metres))
        }
        return rows
    }

    /// The first `page` rows in the query's order (squared chord, then record id) of rows a KNN
    /// scan returned nearest first (PostGIS's sphere distance), when they are certainly the
    /// query's: fewer rows than `fetched` (the scan returned every row), or the last row fetched
    /// is farther than the page's last row by more than the two distances can differ (1e-6
    /// relative and 1 m: PostGIS's sphere radius differs from Cirrus's by 5e-9 relative) — no row
    /// the scan did not return can then belong to the page. nil otherwise.
    static func knnPage(_ rows: [PageRow], fetched: Int, page: Int) -> [PageRow]? {
        var keyed: [(chord: Double, row: PageRow)] = []
        keyed.reserveCapacity(rows.count)
        for r in rows {
            guard let k = r.keys.first, let c = Double(k) else { return nil }
            keyed.append((c, r))
        }
        keyed.sort { a, b in
            if a.chord != b.chord { return a.chord < b.chord }
            let x = a.row.record.recordID, y = b.row.record.recordID
            if x.recordName != y.recordName { return compareUTF8(x.recordName, y.recordName) < 0 }
            if x.zoneID.zoneName != y.zoneID.zoneName { return compareUTF8(x.zoneID.zoneName, y.zoneID.zoneName) < 0 }
            return compareUTF8(x.zoneID.ownerName, y.zoneID.ownerName) < 0
        }
        if rows.count >= fetched {
            guard let farthest = rows.last?.knnMetres, page > 0, page <= keyed.count else { return nil }
            let chord = keyed[page - 1].chord
            let metres = 2 * 6_371_008.8 * asin(min(1, max(0, chord).squareRoot() / 2))
            guard farthest > metres * 1.000001 + 1 else { return nil }
        }
        return keyed.prefix(page).map(\.row)
    }
}

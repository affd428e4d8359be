// QueryTranslator: a checked `Query` → one parameterized SELECT on the record type's table.
//
// The semantics are RecordMatcher's (QueryExecution), filter by filter, so that PostgreSQL and
// the embedded engine return the same records in the same order:
// - a record without a value for the field never matches (NOT_ forms included): every
//   condition implies `column IS NOT NULL`;
// - a value of another family than the target never equals it (NOT_EQUALS: it differs) and is
//   never ordered with it; list comparators treat a scalar column as a one-element list;
// - a number is compared in its column's kind (INT64 bigint, DOUBLE float8) exactly: a target
//   with no exact form there equals nothing, and a range bound becomes the nearest one of the
//   column's kind that keeps the same values (ColumnType.bound);
// - NEAR is `ST_DWithin` on the geography (the GiST index, with a margin) and then the exact
//   test the matcher applies: 2R·asin(|p−c|/2) ≤ radius, R = 6371.0088 km, on the stored unit
//   vector — the same floating-point operations in the same order, so the boundary agrees;
// - token searches are `tokens @@ tsquery` over the TextTokenizer tokens stored at save.
// Order: the sort keys (records lacking one are not in the results), then the record id
// (record_name, zone_name, zone_owner, byte order). A distance sort orders by the squared chord
// from the centre, computed from the stored unit vector exactly as the executor computes it;
// nearest-first on an indexed location is the GiST index's KNN scan (`<->`, PostGIS's sphere
// distance) for a few rows more than the page, re-sorted by the exact key in Swift and checked
// (PostgresStore+Query.swift: the page is exact when the last row fetched is farther than the
// page's last row by more than the two distances can differ); when the check fails, or with more
// sort keys after the distance, the page first bounds the rows with a KNN scan (`knn` CTE) and
// sorts every row within that bound by the exact key.
// A cursor is the last row's keys as PostgreSQL printed them: the next page adds a keyset
// condition `(keys, id) > (last keys, last id)` — no OFFSET.
// The page size is the one number written into the text (an Int, never a user's string): the
// statements are prepared, and a generic plan made for `LIMIT $n` assumes a tenth of the table,
// which chose a full sort over an index scan that stops after the page.

import CirrusFacade
import Indexes
import RecordModel

/// The SELECT of one page.
struct TranslatedQuery {
    var builder: SQLBuilder
    var sql: String
    /// How many sort-key columns follow `data` in each row (as a text array).
    var keyCount: Int
    /// Rows come in the KNN scan's order (PostGIS's sphere distance, a third column, metres),
    /// not the query's: the caller sorts them by the exact key and checks the page.
    var knn = false
    /// Planned at each call with its values (the unnamed statement), not prepared:
    /// ``QueryTranslator/plansPerCall(_:)``.
    var plansPerCall = false
}

/// Where a page starts: the previous page's last row.
struct KeysetPosition: Sendable, Hashable {
    /// Each sort key as PostgreSQL printed it.
    var keys: [String]
    var recordID: RecordID
}

enum QueryTranslator {
    /// Rows a nearest-first KNN scan fetches beyond the page, for the check that the page is exact.
    static let defaultKNNExtra = 2

    /// The page query: rows of `tenant` (in `zone` when given) after `after`, at most `limit`.
    /// `exact`: a nearest-first page sorted on the server (the `knn` CTE form), never the plain
    /// KNN scan (`knn` in the result) that fetches `limit + knnExtra` rows in KNN order.
    static func translate(
        _ q: Query, layout: TableLayout, tenant: String, zone: ZoneID?, after: KeysetPosition?, limit: Int,
        exact: Bool = false, knnExtra: Int = QueryTranslator.defaultKNNExtra
    ) throws(CirrusError) -> TranslatedQuery {
        var b = SQLBuilder()
        var conditions = try filterConditions(q, layout: layout, tenant: tenant, zone: zone, &b)
        let keys = try sortKeys(q, layout: layout, &conditions, &b)
        for k in keys { conditions.append("\(k.expr) IS NOT NULL") }
        if let after {
            guard after.keys.count == keys.count else {
                throw CirrusError(.invalidArguments, "the cursor does not belong to this query")
            }
            conditions.append(keyset(keys, after, &b))
        }
        var order = keys.map { "\($0.expr) \($0.ascending ? "ASC" : "DESC")" }
        order += ["record_name", "zone_name", "zone_owner"]
        let keyList =
            keys.isEmpty
            ? "ARRAY[]::text[]" : "ARRAY[" + keys.map { "(\($0.expr))::text" }.joined(separator: ", ") + "]"
        if !exact, q.sortDescriptors.count == 1, case .distance(let name, let from)? = q.sortDescriptors.first,
            let c = layout.columns[name], c.options.contains(.queryable)
        {
            // The KNN scan alone: the GiST index yields rows nearest first; a few more than the
            // page, so that the caller can check that no row beyond them belongs to it.
            let point = try b.value(.location(from), ColumnType(system: .location))
            let sql = """
                SELECT data, \(keyList), (\(c.sql) <-> \(point)) FROM \(layout.qualifiedTable)
                WHERE \(conditions.joined(separator: "\n  AND "))
                ORDER BY \(c.sql) <-> \(point)
                LIMIT \(limit + knnExtra)
                """
            return TranslatedQuery(builder: b, sql: sql, keyCount: keys.count, knn: true)
        }
        var with = ""
        if case .distance(let name, let from)? = q.sortDescriptors.first, let c = layout.columns[name],
            c.options.contains(.queryable)
        {
            with = try knnBound(c, from: from, layout: layout, limit: limit, &conditions, &b)
        }
        let sql = """
            \(with)SELECT data, \(keyList) FROM \(layout.qualifiedTable)
            WHERE \(conditions.joined(separator: "\n  AND "))
            ORDER BY \(order.joined(separator: ", "))
            LIMIT \(limit)
            """
        return TranslatedQuery(builder: b, sql: sql, keyCount: keys.count, plansPerCall: plansPerCall(q))
    }

    /// Whether a page is planned at each call rather than prepared. PostgreSQL plans a prepared
    /// statement's later runs without its parameters' values (its generic plan), estimating a
    /// range between two parameters at 0.5% of the rows whatever they are. On a page sorted by
    /// the field of such a range (BEGINSWITH, or a lower and an upper bound) with another filter
    /// beside it, that estimate is what chooses between walking the sort field's index and
    /// ANDing the filters' indexes then sorting what they match, and either can be 20× the
    /// other: `name BEGINSWITH 'lib' AND section == 'libs'` sorted by name (Debian's packages)
    /// took 12–18 ms on its generic plan, an AND and a sort of 5 978 rows estimated at 5, against
    /// 0.6 ms planned with its values (0.4 ms of it planning). Such a page pays that planning
    /// at every call (docs/scale-out.md, "Speed").
    static func plansPerCall(_ q: Query) -> Bool {
        guard case .filters(let fs) = q.predicate, case .field(let sorted, _)? = q.sortDescriptors.first else {
            return false
        }
        let onSorted = fs.filter { $0.fieldName == sorted }
        guard onSorted.count < fs.count else { return false }  // no other filter
        if onSorted.contains(where: { $0.comparator == .beginsWith }) { return true }
        let lower = onSorted.contains { $0.comparator == .greaterThan || $0.comparator == .greaterThanOrEquals }
        let upper = onSorted.contains { $0.comparator == .lessThan || $0.comparator == .lessThanOrEquals }
        return lower && upper
    }

    /// The page's first conditions: the tenant, the zone when given, and the predicate's filters
    /// (in this order: their parameters are numbered as they are bound).
    static func filterConditions(
        _ q: Query, layout: TableLayout, tenant: String, zone: ZoneID?, _ b: inout SQLBuilder
    ) throws(CirrusError) -> [String] {
        // The public database names its key as the literal of its partial indexes' predicate;
        // a private one adds that it is not the public one (its indexes' predicate), which a
        // parameter cannot show the planner (TableLayout.indexes).
        var conditions =
            tenant == layout.publicTenantKey
            ? ["tenant = \(layout.publicTenant)"]
            : ["tenant = \(b.param(tenant)) AND tenant <> \(layout.publicTenant)"]
        if let zone {
            conditions.append("zone_name = \(b.param(zone.zoneName)) AND zone_owner = \(b.param(zone.ownerName))")
        }
        switch q.predicate {
        case .all: break
        case .none: conditions.append("FALSE")
        case .filters(let fs):
            for f in fs { conditions.append(try filter(f, layout: layout, &b)) }
        }
        return conditions
    }

    /// The query's sort keys: expression, SQL type (for cursor values), direction. A sort by a
    /// list field adds `FALSE` to `conditions` (lists have no order key: no results).
    static func sortKeys(
        _ q: Query, layout: TableLayout, _ conditions: inout [String], _ b: inout SQLBuilder
    ) throws(CirrusError) -> [(expr: String, type: String, ascending: Bool)] {
        var keys: [(expr: String, type: String, ascending: Bool)] = []
        for s in q.sortDescriptors {
            switch s {
            case .field(let name, let asc):
                guard let (expr, type, isList) = try sortColumn(name, layout: layout) else {
                    throw CirrusError(
                        .invalidArguments,
                        "cannot sort by \(name): the record type \(layout.recordType) has no such field")
                }
                if isList { conditions.append("FALSE") }  // lists have no order key: no results
                keys.append((expr, type, asc))
            case .distance(let name, let from):
                guard let c = layout.columns[name], c.family == .location else {
                    throw CirrusError(
                        .invalidArguments, "cannot sort by distance on \(name): not a location field")
                }
                keys.append((chord2(c, from, &b), "float8", true))
            }
        }
        return keys
    }

    /// The `knn` CTE of a nearest-first page sorted on the server, and its bound appended to
    /// `conditions`.
    ///
    /// Nearest first: a KNN scan of the GiST index (`<->`, PostGIS's sphere distance) finds the
    /// page's farthest row; every row of the exact order's page lies within that distance plus
    /// a margin far above the two distances' difference (~1e-8 relative, < 1 m near the
    /// antipode), so ST_DWithin on the same index bounds the rows the exact order (the squared
    /// chord) sorts.
    static func knnBound(
        _ c: Column, from: Location, layout: TableLayout, limit: Int, _ conditions: inout [String],
        _ b: inout SQLBuilder
    ) throws(CirrusError) -> String {
        let point = try b.value(.location(from), ColumnType(system: .location))
        let all = conditions.joined(separator: " AND ")
        let with = """
            WITH knn AS (SELECT (\(c.sql) <-> \(point)) AS d FROM \(layout.qualifiedTable) WHERE \(all)
                ORDER BY \(c.sql) <-> \(point) LIMIT 1 OFFSET \(limit - 1))

            """
        // One ST_DWithin whose radius is an init-plan parameter, so the GiST index bounds
        // the scan; fewer rows than a page (no knn row): a radius beyond any distance on
        // Earth (1e8 m). An `OR NOT EXISTS (…)` form made PostgreSQL read every row.
        conditions.append(
            "ST_DWithin(\(c.sql), \(point), COALESCE((SELECT d FROM knn) * 1.000001::float8 + 1::float8, "
                + "1e8::float8), false)")
        return with
    }

    /// `(k1, …, id) > (v1, …, last id)` in the query's directions, as nested OR/AND.
    static func keyset(
        _ keys: [(expr: String, type: String, ascending: Bool)], _ after: KeysetPosition, _ b: inout SQLBuilder
    ) -> String {
        let id = after.recordID
        var tail =
            "(record_name, zone_name, zone_owner) > (\(b.param(id.recordName))::text COLLATE \"C\", "
            + "\(b.param(id.zoneID.zoneName))::text COLLATE \"C\", \(b.param(id.zoneID.ownerName))::text COLLATE \"C\")"
        for (i, k) in keys.enumerated().reversed() {
            let v = "\(b.param(after.keys[i]))::\(k.type)"
            tail = "(\(k.expr) \(k.ascending ? ">" : "<") \(v) OR (\(k.expr) = \(v) AND \(tail)))"
        }
        return tail
    }

    /// The squared chord between the column's stored unit vector and `from`, as the executor computes it.
    static func chord2(_ c: Column, _ from: Location, _ b: inout SQLBuilder) -> String {
        let u = UnitVector(latitude: from.latitude, longitude: from.longitude)
        let v = c.vectorColumns
        let cx = "\(b.param(SQLText.double(u.x)))::float8"
        let cy = "\(b.param(SQLText.double(u.y)))::float8"
        let cz = "\(b.param(SQLText.double(u.z)))::float8"
        return "((((\(cx) - \(v[0])) * (\(cx) - \(v[0]))) + ((\(cy) - \(v[1])) * (\(cy) - \(v[1])))) "
            + "+ ((\(cz) - \(v[2])) * (\(cz) - \(v[2]))))"
    }

    /// The sort expression of a field or system field, its SQL type, and whether it is a list.
    static func sortColumn(_ name: String, layout: TableLayout) throws(CirrusError) -> (String, String, Bool)? {
        if let c = layout.columns[name] {
            if c.family == .location {
                throw CirrusError(.invalidArguments, "sort by the distance of \(name) from a location instead")
            }
            return (c.sql, c.type.castType, c.isList)
        }
        guard let s = SystemField.named(name) else { return nil }
        let (expr, family) = system(s)
        return (expr, ColumnType(system: family).castType, false)
    }

    /// The column expression and family of a system field.
    static func system(_ s: SystemField) -> (String, ColumnFamily) {
        switch s {
        case .recordName: (referenceKeyExpression, .reference)
        case .creationDate: ("created_at", .date)
        case .modificationDate: ("modified_at", .date)
        case .creatorUserRecordID: ("created_by", .reference)
        case .lastModifiedUserRecordID: ("modified_by", .reference)
        case .recordChangeTag: ("change_tag", .string)
        }
    }

    static let referenceKeyExpression =
        "((record_name || chr(1) || zone_name || chr(1) || zone_owner) COLLATE \"C\")"

    // MARK: - filters

    static func filter(
        _ f: QueryFilter, layout: TableLayout, _ b: inout SQLBuilder
    ) throws(CirrusError)
        -> String
    {
        if f.comparator.isTokenSearch {
            guard case .string(let words) = f.fieldValue else { return "FALSE" }
            let groups = TextTokenizer.groups(words)
            if groups.isEmpty || layout.searchableFields.isEmpty { return "FALSE" }
            let q = SQLText.tsquery(groups, all: f.comparator == .containsAllTokens)
            return "tokens @@ \(b.param(q))::tsquery"
        }
        if let c = layout.columns[f.fieldName] {
            if f.comparator == .near { return try near(c, f, &b) }
            if c.family == .location {
                throw CirrusError(
                    .invalidArguments, "\(f.comparator.rawValue) on the location field \(f.fieldName) is not supported")
            }
            return c.isList ? try listFilter(c.sql, c.type, f, &b) : try scalarFilter(c.sql, c.type, f, &b)
        }
        guard let s = SystemField.named(f.fieldName) else {
            throw CirrusError(
                .invalidArguments, "the record type \(layout.recordType) has no field \(f.fieldName) in its schema")
        }
        if s == .recordName, case .string = f.fieldValue.elements.first {
            // A string compares the record name.
            return try scalarFilter("record_name", ColumnType(system: .string), f, &b)
        }
        let (expr, family) = system(s)
        return try scalarFilter(expr, ColumnType(system: family), f, &b)
    }

    /// The elements of `v` that have an exact form in `type`, in that form (for IN and the list
    /// comparators), and whether all had (one that has none equals no stored value).
    static func elements(_ v: FieldValue, _ type: ColumnType) -> ([FieldValue], Bool) {
        let all = v.elements
        let kept = all.compactMap { type.exact($0) }
        return (kept, kept.count == all.count)
    }

    static func scalarFilter(
        _ c: String, _ fam: ColumnType, _ f: QueryFilter, _ b: inout SQLBuilder
    )
        throws(CirrusError) -> String
    {
        let t = f.fieldValue
        let exact = fam.exact(t)
        let present = "\(c) IS NOT NULL"
        switch f.comparator {
        case .equals, .listContains:
            return try exact.map { v throws(CirrusError) in "\(c) = \(try b.value(v, fam))" } ?? "FALSE"
        case .notEquals, .notListContains:
            return try exact.map { v throws(CirrusError) in "\(c) <> \(try b.value(v, fam))" } ?? present
        case .lessThan, .lessThanOrEquals, .greaterThan, .greaterThanOrEquals:
            guard ColumnFamily(of: t) == fam.family else { return "FALSE" }
            let op =
                switch f.comparator {
                case .lessThan: "<"
                case .lessThanOrEquals: "<="
                case .greaterThan: ">"
                default: ">="
                }
            switch fam.bound(op, t) {
            case .compare(let op, let v): return "\(c) \(op) \(try b.value(v, fam))"
            case .everyValue: return present
            case .noValue: return "FALSE"
            }
        case .in, .listContainsAny:
            let (es, _) = elements(t, fam)
            return es.isEmpty ? "FALSE" : "\(c) = ANY(\(try b.array(es, fam)))"
        case .notIn, .notListContainsAny:
            let (es, _) = elements(t, fam)
            return es.isEmpty ? present : "(\(present) AND NOT (\(c) = ANY(\(try b.array(es, fam)))))"
        case .listContainsAll:
            let (es, all) = elements(t, fam)
            guard all else { return "FALSE" }
            return es.isEmpty ? present : "(\(present) AND \(c) = ALL(\(try b.array(es, fam))))"
        case .notListContainsAll:
            let (es, all) = elements(t, fam)
            guard all else { return present }
            return es.isEmpty ? "FALSE" : "(\(present) AND NOT (\(c) = ALL(\(try b.array(es, fam)))))"
        case .beginsWith, .listMemberBeginsWith:
            return try prefix(c, fam, t, &b) ?? "FALSE"
        case .notBeginsWith, .notListMemberBeginsWith:
            guard let p = try prefix(c, fam, t, &b) else { return present }
            return "(\(present) AND NOT \(p))"
        case .near, .containsAllTokens, .containsAnyTokens:
            return "FALSE"
        }
    }

    static func listFilter(
        _ c: String, _ fam: ColumnType, _ f: QueryFilter, _ b: inout SQLBuilder
    )
        throws(CirrusError) -> String
    {
        let t = f.fieldValue
        let present = "\(c) IS NOT NULL"
        switch f.comparator {
        case .equals, .notEquals:
            let (es, all) = elements(t, fam)
            let equal = t.isList && all ? "\(c) = \(try b.array(es, fam))" : "FALSE"
            return f.comparator == .equals ? equal : "(\(present) AND NOT (\(equal)))"
        case .lessThan, .lessThanOrEquals, .greaterThan, .greaterThanOrEquals, .in, .near, .beginsWith:
            return "FALSE"
        case .notIn, .notBeginsWith:
            return present
        case .listContains:
            guard let v = fam.exact(t) else { return "FALSE" }
            return "\(c) @> \(try b.array([v], fam))"
        case .notListContains:
            guard let v = fam.exact(t) else { return present }
            return "(\(present) AND NOT (\(c) @> \(try b.array([v], fam))))"
        case .listContainsAny:
            let (es, _) = elements(t, fam)
            return es.isEmpty ? "FALSE" : "\(c) && \(try b.array(es, fam))"
        case .notListContainsAny:
            let (es, _) = elements(t, fam)
            return es.isEmpty ? present : "(\(present) AND NOT (\(c) && \(try b.array(es, fam))))"
        case .listContainsAll:
            let (es, all) = elements(t, fam)
            return all ? "\(c) @> \(try b.array(es, fam))" : "FALSE"
        case .notListContainsAll:
            let (es, all) = elements(t, fam)
            return all ? "(\(present) AND NOT (\(c) @> \(try b.array(es, fam))))" : present
        case .listMemberBeginsWith, .notListMemberBeginsWith:
            let member = try prefix("e", fam, t, &b).map { "EXISTS (SELECT 1 FROM unnest(\(c)) AS e WHERE \($0))" }
            if f.comparator == .listMemberBeginsWith { return member ?? "FALSE" }
            return member.map { "(\(present) AND NOT \($0))" } ?? present
        case .containsAllTokens, .containsAnyTokens:
            return "FALSE"
        }
    }

    /// `c` starts with the target: a range on the B-tree (`c >= p AND c < successor(p)`).
    /// nil when the target is not a prefix of this family (never matches).
    static func prefix(
        _ c: String, _ fam: ColumnType, _ t: FieldValue, _ b: inout SQLBuilder
    )
        throws(CirrusError) -> String?
    {
        switch (fam.family, t) {
        case (.string, .string(let p)):
            let lo = try b.value(t, fam)
            guard let hi = SQLText.successor(ofPrefix: p) else { return "(\(c) >= \(lo))" }
            return "(\(c) >= \(lo) AND \(c) < \(try b.value(.string(hi), fam)))"
        case (.bytes, .bytes(let p)):
            let lo = try b.value(t, fam)
            guard let hi = SQLText.successor(ofPrefix: p) else { return "(\(c) >= \(lo))" }
            return "(\(c) >= \(lo) AND \(c) < \(try b.value(.bytes(hi), fam)))"
        default:
            return nil
        }
    }

    /// NEAR: the GiST prefilter, then the matcher's exact test.
    static func near(_ c: Column, _ f: QueryFilter, _ b: inout SQLBuilder) throws(CirrusError) -> String {
        guard !c.isList, case .location(let centre) = f.fieldValue, let metres = f.distance, metres.isFinite else {
            return "FALSE"
        }
        let point = try b.value(f.fieldValue, ColumnType(system: .location))
        let margin = b.param(SQLText.double(metres * 1.0001 + 1))
        let km = b.param(SQLText.double(metres / 1000))
        let c2 = chord2(c, centre, &b)
        return "(ST_DWithin(\(c.sql), \(point), \(margin)::float8, false) AND "
            + "(2::float8 * 6371.0088::float8) * asin(least(1::float8, sqrt(greatest(0::float8, \(c2))) / 2::float8))"
            + " <= \(km)::float8)"
    }
}

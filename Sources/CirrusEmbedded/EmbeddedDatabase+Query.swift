// Queries on a database, shaped like CloudKit's async API:
// `records(matching:inZoneWith:desiredKeys:resultsLimit:)` and
// `records(continuingMatchFrom:desiredKeys:resultsLimit:)`, plus `explain` and the index advisor.
//
// A query is checked by the CKQuery checker against this database's schema (production enforces
// index options exactly; development answers anything the schema can type), planned on the
// statistics of one consistent snapshot of the record type, executed on that same snapshot, and
// returns a page with a cursor when more may follow. Access rules apply before anything runs.

import CirrusFacade
import Dispatch
import Indexes
import PredicateSyntax
import QueryChecker
import QueryExecution
import QueryPlanner
import RecordModel

extension EmbeddedDatabase {
    /// The page size when `resultsLimit` is 0 ("the engine chooses").
    static var defaultResultsLimit: Int { Database.defaultResultsLimit }

    /// Records of `query`, in its order: the first page of at most `resultsLimit` records (0: the
    /// engine chooses) and a cursor when more may follow. `zoneID` nil means every zone of this
    /// database. `desiredKeys` nil returns whole records, `[]` only the system fields.
    public func records(
        matching query: RecordQuery, inZoneWith zoneID: ZoneID? = nil, desiredKeys: [String]? = nil,
        resultsLimit: Int = 0
    ) async throws(CirrusError) -> (matchResults: [(RecordID, Result<Record, CirrusError>)], queryCursor: QueryCursor?)
    {
        // One schema for the whole query, read with the type's table under one lock: the check
        // and the run see the same one (a schema change between them cannot mix two), with
        // whether everyone may read the type.
        let (schema, everyone, snap) = queryView(recordType: query.recordType)
        let limit = resultsLimit > 0 ? resultsLimit : Self.defaultResultsLimit
        let text = query.variables.isEmpty ? PlanCache.Text(owner: owner, query: query, limit: limit) : nil
        if let text, let (checked, plan) = core.plans.prepared(text, schema: schema, version: snap.version) {
            // Asked before against this schema and table: checked and planned then. Who may
            // read, and the zone, are checked now.
            try AccessRules.checkCanRead(
                recordType: query.recordType, scope: scope, identity: identity, schema: schema,
                worldReadable: everyone)
            let zone = try resolveQueryZone(zoneID)
            return try page(
                checked, snap, plan: plan, found: nil, zone: zone, desiredKeys: desiredKeys, limit: limit,
                schema: schema, worldReadable: everyone)
        }
        let (checked, _, reusable) = try checkKeeping(query, schema: schema, worldReadable: everyone)
        let zone = try resolveQueryZone(zoneID)
        let (plan, found) = plan(
            checked, snap, limit: limit,
            prepared: reusable ? text.map { PlanCache.Checked(text: $0, schema: schema, query: checked) } : nil)
        return try page(
            checked, snap, plan: plan, found: found, zone: zone, desiredKeys: desiredKeys, limit: limit,
            schema: schema, worldReadable: everyone)
    }

    /// The next page of the query a cursor came from. The query is checked again against the
    /// current schema; a cursor of another database is rejected.
    public func records(
        continuingMatchFrom cursor: QueryCursor, desiredKeys: [String]? = nil, resultsLimit: Int = 0
    ) async throws(CirrusError) -> (matchResults: [(RecordID, Result<Record, CirrusError>)], queryCursor: QueryCursor?)
    {
        guard cursor.scope == cursorScope else {
            throw CirrusError(.invalidArguments, "the cursor was issued by another database (\(cursor.scope))")
        }
        try checkCanRead(recordType: cursor.query.recordType)
        try recheck(cursor.query)
        let snap = querySnapshot(recordType: cursor.query.recordType)
        let limit = resultsLimit > 0 ? resultsLimit : Self.defaultResultsLimit
        let (plan, found) = plan(cursor.query, snap, limit: limit)
        return try page(
            cursor.query, snap, plan: plan, found: found, zone: cursor.zone, desiredKeys: desiredKeys, limit: limit,
            after: cursor.position, from: cursor)
    }

    /// The printable token of a cursor, signed with this database's secret (docs/cursor-format.md).
    public func token(for cursor: QueryCursor) -> String { cursor.token(secret: cursorSecret) }

    /// The cursor of a token issued by this database; with `expecting`, it must belong to that query.
    public func cursor(fromToken token: String, expecting query: RecordQuery? = nil) throws(CirrusError) -> QueryCursor
    {
        let expected = try query.map { (q) throws(CirrusError) in try check(q).0 }
        do {
            return try QueryCursor(token: token, secret: cursorSecret, expecting: expected)
        } catch {
            throw CirrusError(.invalidArguments, "\(error)")
        }
    }

    /// Plans `query` (and, with `execute`, runs its first page) and describes what happened.
    public func explain(
        _ query: RecordQuery, inZoneWith zoneID: ZoneID? = nil, resultsLimit: Int = 0, execute: Bool = true
    ) async throws(CirrusError) -> QueryExplanation {
        let (checked, warnings) = try check(query)
        let zone = try resolveQueryZone(zoneID)
        let snap = querySnapshot(recordType: checked.recordType)
        let limit = resultsLimit > 0 ? resultsLimit : Self.defaultResultsLimit
        // Planned as `page` plans (small circles counted by finding their rows), so the plan
        // explained is the plan a query runs.
        let found = Self.keepsFoundRows(checked) ? FoundRows() : nil
        let plan = QueryPlanner.plan(
            checked, statistics: found.map(snap.statistics(keeping:)) ?? snap.statistics, limit: limit)
        var actual: [Int: Int] = [:]
        var returned: Int? = nil
        if execute {
            let result = try run(plan, snap, zone: zone, desiredKeys: [], after: nil, limit: limit, found: found)
            actual = result.actual
            returned = result.records.count
        }
        let required = QueryPlanner.requiredIndexes(checked)
        return QueryExplanation(
            plan: plan, actual: actual, requiredIndexes: required,
            missingIndexes: QueryExplanation.missing(required, in: schema.recordTypes[checked.recordType]),
            warnings: warnings, returned: returned)
    }

    /// The index options `query` needs in production (the development index advisor).
    public func requiredIndexes(for query: RecordQuery) throws(CirrusError) -> [IndexRequirement] {
        QueryPlanner.requiredIndexes(try check(query).0)
    }

    // MARK: - internals

    /// Whether planning `q` may find rows for its execution (a circle: a NEAR filter); other
    /// queries make no `FoundRows` (an object and a lock each).
    static func keepsFoundRows(_ q: Query) -> Bool { q.predicate.filters.contains { $0.comparator == .near } }

    var cursorScope: String { scope.cursorScope }

    /// Checks a query against the schema: access, predicate (parsed through the container's
    /// cache), sort descriptors. `worldReadable`: the schema lets everyone read the type.
    func check(
        _ q: RecordQuery, schema: Schema? = nil, worldReadable: Bool = false
    ) throws(CirrusError) -> (Query, [String]) {
        let (query, warnings, _) = try checkKeeping(q, schema: schema ?? self.schema, worldReadable: worldReadable)
        return (query, warnings)
    }

    /// `check`, and whether its result may be kept for the same query and schema
    /// (`DatabaseRules.check`'s `reusable`).
    func checkKeeping(
        _ q: RecordQuery, schema: Schema, worldReadable: Bool
    ) throws(CirrusError) -> (Query, [String], reusable: Bool) {
        try AccessRules.checkCanRead(
            recordType: q.recordType, scope: scope, identity: identity, schema: schema, worldReadable: worldReadable)
        return try DatabaseRules.check(q, schema: schema, now: { now }, cache: core.predicates)
    }

    /// Checks a cursor's query against the current schema (it may have changed since).
    func recheck(_ q: Query) throws(CirrusError) { try DatabaseRules.recheck(q, schema: schema, now: now) }

    /// The page of `q` after `after` (or its first), run by `plan` on `snap` (`found`: the rows
    /// planning found, FoundRows); with the cursor of the page before (`previous`), the ranking it
    /// left is resumed.
    func page(
        _ q: Query, _ snap: RecordTypeSnapshot, plan: consuming QueryPlan, found: FoundRows?, zone: ZoneID?,
        desiredKeys: [String]?, limit: Int, after: OrderKey? = nil, from previous: QueryCursor? = nil,
        schema: Schema? = nil, worldReadable: Bool = false
    ) throws(CirrusError) -> (matchResults: [(RecordID, Result<Record, CirrusError>)], queryCursor: QueryCursor?) {
        // A table in several layers is charged for them (ReadMerge.swift): the query is timed.
        let meter = snap.table?.mergeMeter
        let began = meter == nil ? 0 : DispatchTime.now().uptimeNanoseconds
        let resume = previous.flatMap { core.continuations.take($0, version: snap.version) }
        if let previous, let resume, resume.isReusable {
            // A cursor presented again (a retry, a second reader) finds its ranking still there.
            core.continuations.put(previous, version: snap.version, resume)
        }
        let result = try run(
            consume plan, snap, zone: zone, desiredKeys: desiredKeys, after: after, limit: limit, resume: resume,
            found: found, schema: schema, worldReadable: worldReadable)
        if let meter, meter.charge(elapsedNanoseconds: DispatchTime.now().uptimeNanoseconds &- began) {
            core.startReadMerge(meter)
        }
        let cursor = result.next.map {
            QueryCursor(scope: cursorScope, query: q, zone: zone, desiredKeys: desiredKeys, position: $0)
        }
        if let cursor, let c = result.continuation { core.continuations.put(cursor, version: snap.version, c) }
        return (result.records.map { ($0.recordID, .success($0)) }, cursor)
    }

    /// The plan of `q` for pages of `limit` on `snap`: the one kept for this very query and
    /// version (PlanCache.swift), or made now. Planning counts a small circle by finding its
    /// rows, which the execution of that plan then reads (`found`, FoundRows); a kept plan's
    /// execution finds them again — the search planning would make — and skips the rest of
    /// planning.
    /// With `prepared`, a plan found or kept is also kept under the query's text.
    func plan(
        _ q: Query, _ snap: RecordTypeSnapshot, limit: Int, prepared: PlanCache.Checked? = nil
    ) -> (QueryPlan, FoundRows?) {
        let key = PlanCache.Key(owner: owner, query: q, limit: limit)
        let (kept, keep) = core.plans.plan(key, version: snap.version, checked: prepared)
        if let kept { return (kept, nil) }
        let found = Self.keepsFoundRows(q) ? FoundRows() : nil
        let plan = QueryPlanner.plan(
            q, statistics: found.map(snap.statistics(keeping:)) ?? snap.statistics, limit: limit, withRejected: false)
        if keep { core.plans.keep(plan, key, version: snap.version, checked: prepared) }
        return (plan, found)
    }

    func run(
        _ plan: consuming QueryPlan, _ snap: RecordTypeSnapshot, zone: ZoneID?, desiredKeys: [String]?,
        after: OrderKey?,
        limit: Int,
        resume: StreamContinuation? = nil, found: FoundRows? = nil, schema: Schema? = nil,
        worldReadable: Bool = false
    ) throws(CirrusError) -> QueryPage {
        var visible: (@Sendable (Record) -> Bool)? = nil
        if case .public = scope, !worldReadable {
            // One schema for the whole query (the caller's when it has read it); and when the
            // type's grants let this identity read every record (world or signed-in READ), no
            // per-row test at all.
            let schema = schema ?? self.schema, owner = self.owner, identity = self.identity
            if !Access.allows(.read, type: plan.query.recordType, creator: nil, identity: identity, schema: schema) {
                visible = { r in Access.canRead(r, owner: owner, identity: identity, schema: schema) }
            }
        }
        // A row that does not decode is never left out of a result in silence (RowDamage.swift).
        let damage = snap.table?.damage
        let damaged = damage?.count ?? 0
        let page: QueryPage
        do {
            page = try QueryExecutor.run(
                consume plan, on: snap, after: after, pageSize: limit, zone: zone, desiredKeys: desiredKeys,
                visible: visible,
                resume: resume, found: found)
        } catch {
            throw CirrusError(.internalError, "query execution failed: \(error.message)")
        }
        if let damage, damage.count > damaged {
            let error = damage.error(snap.recordType, since: damaged)
            core.options.logger.error("\(error)", metadata: ["container": .string(core.directory)])
            throw error
        }
        return page
    }
}

// DatabaseRules: the checks every engine makes before it touches storage — which zone an id may
// name in a database, and a query checked against the schema (the CKQuery subset, index options,
// sorts) with CloudKit's error and the checker's rendering. One implementation, so the embedded
// engine and PostgreSQL refuse the same calls with the same messages. Access rules: Access.swift.

import PredicateSyntax
import QueryChecker
import RecordModel

/// The checks of ids, zones and queries every `DatabaseBackend` makes the same way.
///
/// ```swift
/// let zone = try DatabaseRules.checkZone(ZoneID(zoneName: "Trips"), scope: .public)   // badDatabase
/// ```
public enum DatabaseRules {
    /// operationCancelled when the calling task is cancelled.
    public static func checkCancelled() throws(CirrusError) {
        if Task.isCancelled { throw .cancelled() }
    }

    /// A zone of the database with `scope`, in API form: another owner's zone →
    /// permissionFailure, a custom zone in the public database → badDatabase. Whether it
    /// exists is the engine's to check.
    public static func checkZone(_ z: ZoneID, scope: Database.Scope) throws(CirrusError) -> ZoneID {
        if z.ownerName != ZoneID.defaultOwnerName && z.ownerName != scope.owner {
            throw .zone(.permissionFailure, z, "zone owned by \"\(z.ownerName)\" is not part of the \(scope)")
        }
        if case .public = scope, !z.isDefaultZone {
            throw .zone(.badDatabase, z, "the public database has only the default zone")
        }
        return ZoneID(zoneName: z.zoneName)
    }

    /// A record id of the database with `scope`, in API form (the zone checked as `checkZone`;
    /// the error names the record).
    public static func checkID(_ id: RecordID, scope: Database.Scope) throws(CirrusError) -> RecordID {
        do {
            return RecordID(recordName: id.recordName, zoneID: try checkZone(id.zoneID, scope: scope))
        } catch {
            var e = error
            e.recordID = id
            throw e
        }
    }

    /// `query` checked against `schema` at `now`: the checked `Query` and the checker's
    /// warnings, or invalidArguments with the checker's rendered message. `parse` gives the
    /// predicate's tree (an engine with a cache of parsed predicates passes its cache; the
    /// default parses the text).
    public static func check(
        _ query: RecordQuery, schema: Schema, now: Timestamp,
        parse: (String) throws(SyntaxError) -> PredicateSyntax.Predicate = { text throws(SyntaxError) in
            try PredicateParser.parse(text)
        }
    ) throws(CirrusError) -> (Query, [String]) {
        let ctx = CheckContext(
            arguments: query.arguments, variables: query.variables, schema: schema, recordType: query.recordType,
            now: now, source: query.predicate)
        do throws(PredicateError) {
            let tree: PredicateSyntax.Predicate
            do { tree = try parse(query.predicate) } catch { throw PredicateError(error) }
            let checked = try QueryChecker.check(tree, sorts: query.sortDescriptors, context: consume ctx)
            return result(query, checked)
        } catch {
            throw invalid(error, query)
        }
    }

    /// `check(_:schema:now:parse:)` through `cache`: the tree parsed before, and — for a query
    /// without `$variables` — the shape checked before for this record type, this very schema and
    /// these argument types, bound to the query's arguments (CheckedShape). A shape that does
    /// not bind (a value fails a check) or is missing means a full check, whose shape — or that
    /// it has none, so that the next full check records nothing — is kept. `now` is read only
    /// for a full check: a shape never holds `now()`. `reusable`: the checked query is a
    /// function of the query and the schema alone (it has a checked shape, so it read no `now()`
    /// and no `$variables`): the same query against the same schema checks to the same result.
    package static func check(
        _ query: RecordQuery, schema: Schema, now: () -> Timestamp, cache: PredicateCache
    ) throws(CirrusError) -> (query: Query, warnings: [String], reusable: Bool) {
        let arguments = query.variables.isEmpty ? ArgumentShape(query.arguments) : nil
        let found = arguments.flatMap {
            cache.shaped(query.predicate, recordType: query.recordType, schema: schema, arguments: $0)
        }
        if let shape = found?.shape,
            let checked = shape.bind(
                sorts: query.sortDescriptors,
                context: CheckContext(arguments: query.arguments, schema: schema, recordType: query.recordType))
        {
            let (q, warnings) = result(query, checked)
            return (q, warnings, true)
        }
        let ctx = CheckContext(
            arguments: query.arguments, variables: query.variables, schema: schema, recordType: query.recordType,
            now: now(), source: query.predicate)
        do throws(PredicateError) {
            let checked: CheckedPredicate
            var reusable = false
            if let found, found.shape == nil {
                checked = try QueryChecker.check(found.tree, sorts: query.sortDescriptors, context: consume ctx)
            } else {
                let tree: PredicateSyntax.Predicate
                do { tree = try cache.tree(query.predicate) } catch { throw PredicateError(error) }
                let shape: CheckedShape?
                (checked, shape) = try QueryChecker.checkShaped(
                    tree, sorts: query.sortDescriptors, context: consume ctx)
                reusable = arguments != nil && shape != nil
                if found == nil, let arguments {
                    cache.remember(
                        PredicateCache.Shaped(
                            recordType: query.recordType, schema: schema, arguments: arguments, shape: shape,
                            tree: tree),
                        for: query.predicate)
                }
            }
            let (q, warnings) = result(query, checked)
            return (q, warnings, reusable)
        } catch {
            throw invalid(error, query)
        }
    }

    /// The checked query of `query` and the messages of `checked`'s warnings.
    private static func result(_ query: RecordQuery, _ checked: CheckedPredicate) -> (Query, [String]) {
        (
            Query(recordType: query.recordType, predicate: checked.predicate, sortDescriptors: query.sortDescriptors),
            checked.warnings.map(\.message)
        )
    }

    /// invalidArguments with the checker's message, rendered against the query's text.
    private static func invalid(_ error: PredicateError, _ query: RecordQuery) -> CirrusError {
        CirrusError(.invalidArguments, error.range == .none ? error.message : error.rendered(source: query.predicate))
    }

    /// Checks a cursor's query against the current `schema` (it may have changed since the
    /// cursor was issued): invalidArguments saying the query can no longer run.
    public static func recheck(_ query: Query, schema: Schema, now: Timestamp) throws(CirrusError) {
        let (format, args) = query.predicate.predicateFormat
        let ctx = CheckContext(arguments: args, schema: schema, recordType: query.recordType, now: now)
        do throws(PredicateError) {
            _ = try QueryChecker.check(format, context: ctx)
            try QueryChecker.checkSort(query.sortDescriptors, context: ctx)
        } catch {
            throw CirrusError(.invalidArguments, "the query of this cursor can no longer run: \(error.message)")
        }
    }
}

extension DatabaseRules {
    /// `given` under its save `policy` over `server` (nil: no server version), the same on every
    /// engine: `ifServerRecordUnchanged` checks the change tag (stale → serverRecordChanged carrying
    /// the server's record; a tag with no server version → unknownItem) and, when `merging` (Web
    /// Services' `update`), keeps the server's fields that `given` does not have; `changedKeys`
    /// keeps them always; `allKeys` replaces the record.
    package static func applying(
        _ policy: SavePolicy, merging: Bool, to given: Record, over server: Record?
    ) throws(CirrusError) -> Record {
        var r = given
        switch policy {
        case .ifServerRecordUnchanged:
            if let server {
                if r.recordChangeTag != server.recordChangeTag {
                    throw CirrusError(
                        .serverRecordChanged,
                        r.recordChangeTag == nil
                            ? "the record already exists; fetch it and save with its recordChangeTag (or use another "
                                + "save policy)"
                            : "recordChangeTag \"\(r.recordChangeTag ?? "")\" is stale; the server has "
                                + "\"\(server.recordChangeTag ?? "")\"",
                        recordID: given.recordID, serverRecord: server)
                }
                if merging { r.fields = server.fields.merging(r.fields) { _, new in new } }
            } else if r.recordChangeTag != nil {
                throw CirrusError(
                    .unknownItem, "the record was deleted on the server (it has a change tag but no server version)",
                    recordID: given.recordID)
            }
        case .changedKeys:
            if let server { r.fields = server.fields.merging(r.fields) { _, new in new } }
        case .allKeys: break
        }
        return r
    }
}

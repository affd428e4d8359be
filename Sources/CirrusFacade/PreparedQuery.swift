// PreparedQuery: a query checked once, run again with other arguments — as an SQLite application
// prepares a statement and binds new values to it.
//
// Preparing checks the query in full against the database's schema and access rules (every
// error comes now, with its position and hint), and keeps it with the index options it relies on.
// Running it binds new arguments: the engine reuses what it keeps per format string (the syntax
// tree, and the checked shape per argument types, PredicateCache.swift) and, on the embedded
// engine, per query (the plan, while the table is unchanged, and — for the same text, arguments
// and schema — the checked query itself, PlanCache.swift). A run with values
// it has not seen is planned for those values: the planner's estimates come from them (a common
// value and a rare one can need different plans), so only a plan made for the very same values
// on the very same table is reused.

import QueryExecution
import QueryPlanner
import RecordModel

/// A query checked once against a database's schema, to be run again with other arguments.
///
/// ```swift
/// let byKind = try db.prepare(RecordQuery(recordType: "Place", predicate: "kind == %@", arguments: ["cafe"]))
/// let cafes = try await db.records(matching: byKind, arguments: ["cafe"])
/// let bars = try await db.records(matching: byKind, arguments: ["bar"], resultsLimit: 20)
/// ```
public struct PreparedQuery: Sendable, Hashable {
    /// The query as it was prepared, with the arguments it was checked with.
    public let query: RecordQuery
    /// The index options the query relies on (what production requires).
    public let requiredIndexes: [IndexRequirement]

    /// The query with `arguments` in place of the prepared ones, and `variables` (when given) in
    /// place of its variables. Throws invalidArguments (12) unless there are as many arguments
    /// as the query was prepared with.
    public func bound(
        _ arguments: [PredicateArgument], variables: [String: PredicateArgument]? = nil
    ) throws(CirrusError) -> RecordQuery {
        guard arguments.count == query.arguments.count else {
            throw CirrusError(
                .invalidArguments,
                "the prepared query '\(query.predicate)' takes \(query.arguments.count) "
                    + "argument\(query.arguments.count == 1 ? "" : "s"); \(arguments.count) given")
        }
        var q = query
        q.arguments = arguments
        if let variables { q.variables = variables }
        return q
    }
}

extension Database {
    /// Checks `query` now — access, predicate, arguments, sort descriptors against the current
    /// schema — and returns it prepared, to be run with other arguments by
    /// `records(matching:arguments:variables:inZoneWith:desiredKeys:resultsLimit:)`. Throws what
    /// `records(matching:)` would throw for the query.
    public func prepare(_ query: RecordQuery) throws(CirrusError) -> PreparedQuery {
        PreparedQuery(query: query, requiredIndexes: try backend.requiredIndexes(for: query))
    }

    /// Records of a prepared query with `arguments` (as many as it was prepared with) and, when
    /// given, `variables`: the first page and a cursor, as `records(matching:)` returns them. The
    /// query is checked against the schema of the moment (a schema changed since preparing is
    /// applied, and new values are checked as every value is).
    public func records(
        matching prepared: PreparedQuery, arguments: [PredicateArgument],
        variables: [String: PredicateArgument]? = nil, inZoneWith zoneID: ZoneID? = nil,
        desiredKeys: [String]? = nil, resultsLimit: Int = 0
    ) async throws(CirrusError) -> (matchResults: [(RecordID, Result<Record, CirrusError>)], queryCursor: QueryCursor?)
    {
        try await backend.records(
            matching: try prepared.bound(arguments, variables: variables), inZoneWith: zoneID,
            desiredKeys: desiredKeys, resultsLimit: resultsLimit)
    }
}

// PlanCache: the plans of recent queries, reused while the table they were planned on is unchanged.
//
// The planner is a pure function of the checked query, the page size and the statistics of the
// snapshot (QueryPlanner.swift), and the statistics are a function of the table: equal publish
// versions, equal tables (ContainerCore.versionedTable reads both under one lock). A plan made for
// a database's query at one version is therefore the very plan the planner would make again at
// that version, and is reused as is — no heuristics, no estimate that could go stale. Any commit,
// checkpoint, read merge or schema change (an index added or dropped) publishes a new version, and
// the next run of the query plans it afresh.
//
// An application asks the same few queries again and again (a list refreshed, the first page of a
// screen); for a one-row query, planning is about a third of the work. Keyed by the database's
// owner, the checked query (values included) and the page size; an entry keeps the latest plan
// and the version it was made at. Bounded: when full the cache starts over, as PredicateCache
// does. Queries with a NEAR filter are not kept: their planning finds a small circle's rows, which
// the execution then reads instead of searching again (FoundRows), so a kept plan would save
// nothing.

import Foundation
import QueryPlanner
import RecordModel

/// Recent query plans of one container, each valid at one publish version; thread-safe.
final class PlanCache: @unchecked Sendable {
    // @unchecked: `entries`, `hits` and `misses` are read and written only under `lock`.
    static let capacity = 512

    private struct Key: Hashable {
        var owner: String
        var query: Query
        var limit: Int
    }

    private struct Entry {
        var version: UInt64
        var plan: QueryPlan
    }

    private let lock = NSLock()
    private var entries: [Key: Entry] = [:]
    private var hits = 0
    private var misses = 0

    /// The plan kept for `query` in `owner`'s database with pages of `limit`, if it was made at
    /// `version`.
    func plan(owner: String, query: Query, limit: Int, version: UInt64) -> QueryPlan? {
        let key = Key(owner: owner, query: query, limit: limit)
        return lock.withLock {
            guard let e = entries[key], e.version == version else {
                misses += 1
                return nil
            }
            hits += 1
            return e.plan
        }
    }

    /// Keeps `plan`, made at `version` for its query in `owner`'s database with pages of `limit`.
    func keep(_ plan: QueryPlan, owner: String, limit: Int, version: UInt64) {
        let key = Key(owner: owner, query: plan.query, limit: limit)
        lock.withLock {
            if entries.count >= Self.capacity && entries[key] == nil { entries.removeAll(keepingCapacity: true) }
            entries[key] = Entry(version: version, plan: plan)
        }
    }

    /// Lookups that found a plan valid at their version, and those that did not (tests, statistics).
    var counts: (hits: Int, misses: Int) { lock.withLock { (hits, misses) } }

    /// Plans kept.
    var count: Int { lock.withLock { entries.count } }
}

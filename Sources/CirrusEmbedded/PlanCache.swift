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
// and the version it was made at. A query is kept from its second run on (the first leaves its
// hash in a set): a stream of queries each asked once — new values every time — pays a hash and
// a set entry, not a dictionary entry and a copy of its plan per query. Bounded: when full the cache
// starts over, as PredicateCache does. Queries with a NEAR filter are kept too: planning one
// finds a small circle's rows to count them, and that plan's execution reads them (FoundRows);
// a kept plan's execution searches the circle itself — the one search planning would have made —
// and the rest of planning (the other filters' counts, the candidate plans) is saved.
//
// Beside each kept plan, the query as the caller wrote it (`Text`: record type, format string,
// arguments, sort descriptors — no `$variables`) maps to its checked form and that plan, for the
// schema it was checked against (`Schema.isIdentical`) and the version the plan was made at: a
// query asked again skips the check as well as planning (a checked query is a function of its
// text, its arguments and the schema — only a check that read `now()` is not, and such queries
// have no checked shape, so they are never kept this way: `DatabaseRules.check`'s `reusable`).
// Access rules and the zone are still checked on every run.

import CirrusFacade
import Foundation
import QueryPlanner
import RecordModel

/// Recent query plans of one container, each valid at one publish version; thread-safe.
final class PlanCache: @unchecked Sendable {
    // @unchecked: `entries`, `missed`, `hits` and `misses` are read and written only under `lock`.
    static let capacity = 512

    /// What a plan is kept under: the database's owner, the checked query and the page size.
    typealias Key = CacheKey<Query>
    /// A query as the caller wrote it (no `$variables`), for a database's owner and a page size.
    typealias Text = CacheKey<RecordQuery>

    /// A database's owner, a query and a page size, hashed once (a query that misses is looked
    /// up and then kept: one hash of its values); equal only when all three are.
    struct CacheKey<Q: Hashable & Sendable>: Hashable {
        let owner: String
        let query: Q
        let limit: Int
        /// The hash, computed once.
        let fingerprint: Int

        func hash(into hasher: inout Hasher) { hasher.combine(fingerprint) }

        static func == (a: CacheKey, b: CacheKey) -> Bool {
            a.fingerprint == b.fingerprint && a.limit == b.limit && a.owner == b.owner && a.query == b.query
        }
    }

    /// What a query's text was checked as, against which schema, and the plan kept for it.
    struct Checked: Sendable {
        let text: Text
        let schema: Schema
        let query: Query
    }

    private struct Entry {
        var version: UInt64
        var plan: QueryPlan
    }

    private struct Prepared {
        var schema: Schema
        var version: UInt64
        var query: Query
        var plan: QueryPlan
    }

    private let lock = NSLock()
    private var entries: [Key: Entry] = [:]
    private var prepared: [Text: Prepared] = [:]
    /// The hashes of keys missed since the set last started over: a key missed twice is kept.
    /// (One slot per hash's low bits was tried: two queries asked in turn whose hashes shared a
    /// slot pushed each other out for ever, and a tenth of 200 queries were never kept.)
    private var missed = Set<Int>()
    private static let missedCapacity = 4096
    private var hits = 0
    private var misses = 0

    /// The plan kept under `key` if it was made at `version`; otherwise nil, and whether a plan
    /// made now should be kept: only for a query missed before (recently, on any version), so
    /// that queries asked once — a stream of new values — cost a hash and a set entry, never a kept plan.
    /// With `checked`, a plan found is also kept under the query's text (`prepared`).
    func plan(_ key: Key, version: UInt64, checked: Checked? = nil) -> (plan: QueryPlan?, keep: Bool) {
        lock.withLock {
            if let e = entries[key] {
                if e.version == version {
                    hits += 1
                    if let checked { keepPrepared(checked, e.plan, version: version) }
                    return (e.plan, false)
                }
                misses += 1
                return (nil, true)  // kept at another version: keep the new one in its place
            }
            misses += 1
            if missed.count >= Self.missedCapacity { missed.removeAll(keepingCapacity: true) }
            return (nil, !missed.insert(key.fingerprint).inserted)
        }
    }

    /// Keeps `plan`, made at `version`, under `key` and, with `checked`, under the query's text.
    func keep(_ plan: QueryPlan, _ key: Key, version: UInt64, checked: Checked? = nil) {
        lock.withLock {
            if entries.count >= Self.capacity && entries[key] == nil { entries.removeAll(keepingCapacity: true) }
            entries[key] = Entry(version: version, plan: plan)
            if let checked { keepPrepared(checked, plan, version: version) }
        }
    }

    /// The checked query and the plan kept for `text` when it was checked against this very
    /// `schema` and planned at `version` (a hit); otherwise nil, and nothing is counted (the
    /// lookup of the checked query that follows counts).
    func prepared(_ text: Text, schema: Schema, version: UInt64) -> (query: Query, plan: QueryPlan)? {
        lock.withLock {
            guard let p = prepared[text], p.version == version, p.schema.isIdentical(to: schema) else { return nil }
            hits += 1
            return (p.query, p.plan)
        }
    }

    /// Under `lock`: keeps the checked query and plan of a text.
    private func keepPrepared(_ c: Checked, _ plan: QueryPlan, version: UInt64) {
        if prepared.count >= Self.capacity && prepared[c.text] == nil { prepared.removeAll(keepingCapacity: true) }
        prepared[c.text] = Prepared(schema: c.schema, version: version, query: c.query, plan: plan)
    }

    /// Lookups that found a plan valid at their version, and those that did not (tests, statistics).
    var counts: (hits: Int, misses: Int) { lock.withLock { (hits, misses) } }

    /// Plans kept.
    var count: Int { lock.withLock { entries.count } }

    /// Queries kept by their text.
    var preparedCount: Int { lock.withLock { prepared.count } }
}

extension PlanCache.CacheKey where Q == Query {
    /// The key of a checked query: owner, query and page size hashed.
    init(owner: String, query: Query, limit: Int) {
        var h = Hasher()
        h.combine(owner)
        h.combine(query)
        h.combine(limit)
        self.init(owner: owner, query: query, limit: limit, fingerprint: h.finalize())
    }
}

extension PlanCache.CacheKey where Q == RecordQuery {
    /// The key of a query's text: the text, the arguments and the page size tell queries apart;
    /// the owner, the type and the sorts are compared by `==` only.
    init(owner: String, query: RecordQuery, limit: Int) {
        var h = Hasher()
        h.combine(query.predicate)
        h.combine(query.arguments)
        h.combine(limit)
        self.init(owner: owner, query: query, limit: limit, fingerprint: h.finalize())
    }
}

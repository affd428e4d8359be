// QueryExecutor: runs a QueryPlan over a QuerySnapshot and returns one page.
//
// Two shapes of execution, chosen by the plan:
//  - Streams (an ordered index scan or nearest-first browsing at the bottom): rows arrive in the
//    order of the first sort key; each is tested against the membership sets (other access
//    paths), its zone, and the residual filters, then grouped with the rows of equal first key
//    so that ties can be ordered by the remaining keys and the record id. The scan starts at the
//    cursor position (a seek, O(log n)) and stops as soon as a page and one more row are known.
//  - Sets (everything else): the sources are materialized as row-id sets and intersected; the
//    survivors are fetched, filtered, and the page is taken by a bounded top-K (or a full sort)
//    in the query's order, skipping everything up to the cursor position.
// Records are fetched only for rows that passed every index test; `desiredKeys` projects them.

import Indexes
import QueryPlanner
import RecordModel

/// One page of results.
public struct QueryPage: Sendable {
    /// The records of the page, projected to the desired keys.
    public var records: [Record]
    /// The position of the last record when more may follow; nil when the results are complete.
    public var next: OrderKey?
    /// Rows each plan node produced (node id → count), for `explain`.
    public var actual: [Int: Int] {
        get { counts.dictionary }
        set { counts = NodeCounts(newValue) }
    }
    /// For a nearest-first stream that stopped at the page size, or a set plan's second or later
    /// page: its live state, with which the next page can go on without seeking or computing its
    /// sets again — valid only while the snapshot is unchanged.
    public var continuation: StreamContinuation? = nil
    /// What ``actual`` reads.
    var counts: NodeCounts

    init(records: [Record], next: OrderKey?, counts: NodeCounts, continuation: StreamContinuation? = nil) {
        self.records = records
        self.next = next
        self.counts = counts
        self.continuation = continuation
    }
}

/// Rows each plan node produced, by node id (a plan numbers its nodes from 1): a list with -1
/// for a node that produced nothing yet, grown as nodes count. (Not a dictionary: every
/// execution, even of a one-row query, would make one.)
@usableFromInline
struct NodeCounts: Sendable {
    private var rows: [Int] = []

    @usableFromInline
    init() {}

    init(_ counts: [Int: Int]) {
        for (id, n) in counts where id >= 0 { add(id, n) }
    }

    /// Adds `n` rows to node `id`'s count (a node that counts has a count, even 0).
    mutating func add(_ id: Int, _ n: Int) {
        if id >= rows.count { rows.append(contentsOf: repeatElement(-1, count: id - rows.count + 1)) }
        rows[id] = max(rows[id], 0) + n
    }

    /// Node id → count, for the nodes that counted.
    var dictionary: [Int: Int] {
        var out: [Int: Int] = [:]
        for (id, n) in rows.enumerated() where n >= 0 { out[id] = n }
        return out
    }
}

/// The live state of a query between pages. Resuming from it gives exactly the rows a stateless
/// resume from the cursor position would, without the work before the position again. The
/// caller must use it only on the same snapshot it came from, for the same query and reader.
///
/// - A nearest-first stream: the distance-browsing iterator and the rows it had already read
///   past the page (rows up to the position are skipped either way), so the R-tree is not walked
///   down to the position again.
/// - A set plan (from its second page, and only without a per-record read rule): the rows that
///   follow the page in the query's order, so the sets are not intersected, filtered and ranked
///   again for every page of a long result. At most ``rankedCapacity`` rows are ranked at once;
///   past them, a page computes its sets again.
public struct StreamContinuation: Sendable {
    enum State: Sendable {
        case nearest(scan: PlanOperator, iterator: NearestIterator, pending: [RowID])
        /// The rows after a page, in order, each with its order key (nil: record-id order, the
        /// key read from the record); `complete` when no passing row was left out of the ranking.
        case ranked(ArraySlice<RankedRow>, complete: Bool)
    }

    let state: State

    /// Whether the state can serve its page again (a set plan's ranking, a value); a nearest-first
    /// iterator moves on as it is read, so it serves once.
    public var isReusable: Bool {
        if case .ranked = state { return true }
        return false
    }

    /// The most rows a set plan's page ranks to continue from (each held with its order key).
    public static let rankedCapacity = 4096
}

/// A row of a set plan's ranked remainder, with its order key (nil in record-id order).
struct RankedRow: Sendable {
    let key: OrderKey?
    let row: RowID
}

/// An execution that cannot go on: an index the plan needs is missing from the snapshot.
public struct ExecutionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is missing, e.g. `the plan needs an ordered index on 'rating', which this snapshot does not have`.
    public var message: String
    /// The message.
    public var description: String { message }
}

/// Runs plans: one page per call, over a snapshot, resuming after a cursor position.
///
/// A plan whose root streams in order (an ordered index scan or nearest-first browsing) reads only as
/// far as the page and one more row; any other plan materializes its row sets, filters the fetched
/// candidates, and takes the page by top-K or a sort. Both skip every row up to `after`.
///
/// ```swift
/// let snapshot = MemorySnapshot(schema: placeSchema, records: places)
/// let plan = QueryPlanner.plan(query, statistics: snapshot.statistics, limit: 20)
/// let page = try QueryExecutor.run(plan, on: snapshot, pageSize: 20)
/// if let next = page.next {
///     let more = try QueryExecutor.run(plan, on: snapshot, after: next, pageSize: 20)
/// }
/// print(plan.explain(actual: page.actual))
/// ```
public enum QueryExecutor {
    /// Runs `plan` on `snapshot`: the `pageSize` rows after `after` (from the start when nil),
    /// in zone `zone` (every zone when nil), among the records `visible` accepts (access rules;
    /// nil: all), projected to `desiredKeys` (nil: whole records, []: system fields only).
    /// `found`: the rows the plan's statistics kept (``QuerySnapshot/statistics(keeping:)``,
    /// made on this same snapshot), read instead of searched for again.
    ///
    /// Inlinable, so a caller in another module names the execution's type (`Run` of its
    /// snapshot type) itself: called unspecialized, this looked the type's metadata up at run
    /// time on every query.
    @inlinable
    public static func run(
        _ plan: consuming QueryPlan, on snapshot: some QuerySnapshot, after: OrderKey? = nil, pageSize: Int,
        zone: ZoneID? = nil, desiredKeys: [String]? = nil, visible: (@Sendable (Record) -> Bool)? = nil,
        resume: StreamContinuation? = nil, found: FoundRows? = nil
    ) throws(ExecutionError) -> QueryPage {
        var run = Run(
            plan: consume plan, snapshot: snapshot, after: after, pageSize: max(0, pageSize), zone: zone,
            visible: visible)
        run.resume = resume
        run.found = found
        var page = try run.execute()
        if desiredKeys != nil { page.records = page.records.map { $0.projected(to: desiredKeys) } }
        return page
    }
}

/// One execution.
@usableFromInline
struct Run<S: QuerySnapshot> {
    @usableFromInline let plan: QueryPlan
    @usableFromInline let snapshot: S
    @usableFromInline let after: OrderKey?
    @usableFromInline let pageSize: Int
    @usableFromInline let zone: ZoneID?
    @usableFromInline let visible: (@Sendable (Record) -> Bool)?
    @usableFromInline var resume: StreamContinuation? = nil
    /// Rows found while planning (see ``FoundRows``).
    @usableFromInline var found: FoundRows? = nil
    @usableFromInline let ordering: Ordering
    /// Rows each plan node produced.
    @usableFromInline var actual = NodeCounts()

    // Inlinable with `QueryExecutor.run`: made unspecialized, it would look the type's metadata
    // up at run time to place its fields, on every query.
    @inlinable
    init(
        plan: consuming QueryPlan, snapshot: S, after: OrderKey?, pageSize: Int, zone: ZoneID?,
        visible: (@Sendable (Record) -> Bool)?
    ) {
        self.ordering = Ordering(plan.query.sortDescriptors)
        self.snapshot = snapshot
        self.after = after
        self.pageSize = pageSize
        self.zone = zone
        self.visible = visible
        // The plan's last use: moved in, not copied (each of its references retained and released).
        self.plan = plan
    }

    @usableFromInline
    mutating func execute() throws(ExecutionError) -> QueryPage {
        if plan.query.predicate == .none {
            var counts = NodeCounts()
            counts.add(plan.root.id, 0)
            return QueryPage(records: [], next: nil, counts: counts)
        }
        if plan.streamsInOrder { return try executeStream() }
        return try executeSet()
    }

    func matcher(_ filters: [QueryFilter]) -> RecordMatcher {
        RecordMatcher(
            predicate: filters.isEmpty ? .all : .filters(filters), searchableFields: snapshot.indexes.searchableFields)
    }

    func inZone(_ row: RowID) -> Bool { isRow(row, of: snapshot, in: zone) }

    mutating func count(_ node: PlanNode, _ n: Int) { actual.add(node.id, n) }

    func ordered(_ field: String) throws(ExecutionError) -> OrderedIndex {
        let key: IndexedField = SystemField.named(field).map { .system($0) } ?? .user(field)
        guard let idx = snapshot.indexes.ordered[key] else {
            throw ExecutionError(
                message: "the plan needs an ordered index on '\(field)', which this snapshot does not have")
        }
        return idx
    }

    func spatial(_ field: String) throws(ExecutionError) -> SpatialIndex {
        guard let idx = snapshot.indexes.spatial[field] else {
            throw ExecutionError(
                message: "the plan needs a spatial index on '\(field)', which this snapshot does not have")
        }
        return idx
    }

    /// The rows of a set-producing node, ascending and without duplicates.
    mutating func rowSet(_ node: PlanNode) throws(ExecutionError) -> [RowID] {
        var rows: [RowID]
        switch node.op {
        case .fullScan:
            rows = snapshot.allRows()
        case .indexScan, .indexPrefix:
            rows = Postings.sortedUnique(try unsortedRows(node) ?? [])
        case .indexLookup(let field, let values):
            rows = try ordered(field).rows(equalToAnyOf: values)
        case .textSearch(let words, let all):
            guard let text = snapshot.indexes.text else {
                throw ExecutionError(message: "the plan needs the text index, which this snapshot does not have")
            }
            rows = all ? text.rows(matchingAll: [words]) : text.rows(matchingAny: [words])
        case .radius(let field, let center, let km):
            if let kept = found?.rows(field: field, center: center, km: km) {
                rows = kept  // found while planning, on this snapshot (FoundRows)
            } else {
                // The planner's estimate, rounded up a little, sizes the result (a hand-made
                // plan's estimate may be anything: only a finite, positive one is used).
                let estimate = node.estimatedRows
                let expected = estimate > 0 && estimate < 1e6 ? Int((estimate * 1.25).rounded(.up)) + 8 : 0
                rows = try spatial(field).rows(withinKm: km, of: center, expected: expected)
            }
        case .intersect:
            // Ranges and prefixes come in value order: rather than sorting them, they filter
            // the intersection of the others through a bitmap — unless they are much smaller.
            var lists: [[RowID]] = []
            var unsorted: [[RowID]] = []
            for c in node.children {
                if let r = try unsortedRows(c) {
                    count(c, r.count)
                    unsorted.append(r)
                } else {
                    lists.append(try rowSet(c))
                }
            }
            unsorted.sort { $0.count < $1.count }
            if lists.isEmpty, !unsorted.isEmpty { lists.append(Postings.sortedUnique(unsorted.removeFirst())) }
            rows = Postings.intersect(lists)
            for r in unsorted where !rows.isEmpty {
                rows =
                    r.count < rows.count / 8
                    ? Postings.intersect([rows, Postings.sortedUnique(r)]) : Postings.keeping(rows, in: r)
            }
        case .nearest, .filter, .sort, .topK, .limit:
            throw ExecutionError(message: "internal: \(node.op) is not a row-set source")
        }
        count(node, rows.count)
        return rows
    }
}

extension Run {
    /// The rows of an index scan or prefix in no particular order (each layer's in value order,
    /// one entry per list element; `OrderedIndex.unorderedRows`); nil for the other nodes, whose
    /// row sets come sorted.
    func unsortedRows(_ node: PlanNode) throws(ExecutionError) -> [RowID]? {
        switch node.op {
        case .indexScan(let field, let range, _, _):
            return range.isEmpty ? [] : try ordered(field).unorderedRows(in: range.valueRange)
        case .indexPrefix(let field, let prefix):
            return try ordered(field).unorderedRows(beginningWith: prefix)
        default:
            return nil
        }
    }

    /// The rows of a node as a membership set, built without sorting them.
    mutating func membership(_ node: PlanNode) throws(ExecutionError) -> RowMembership {
        guard let r = try unsortedRows(node) else { return RowMembership(try rowSet(node)) }
        count(node, r.count)
        return RowMembership(r)
    }
}

/// Whether `row` of `snapshot` is in `zone` (every live row when nil): its id is read, not its
/// record. A free function, so that per-row closures can call it without reading the generic
/// `Run`'s fields (each such read looked up `Run<S>`'s metadata).
func isRow<S: QuerySnapshot>(_ row: RowID, of snapshot: S, in zone: ZoneID?) -> Bool {
    guard let zone else { return true }
    return snapshot.recordID(row)?.zoneID == zone
}

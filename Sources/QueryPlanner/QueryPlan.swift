// QueryPlan: the tree of small operators the planner chooses, with its estimates.
//
// Which algorithm, not how the loop runs (that is QueryExecution). Row sources yield row ids:
// sets in row-id order (lookups, prefixes, words, circles), or streams in the query's order
// (an ordered index scan, nearest-first browsing). Operators above them intersect, filter,
// sort, keep the top K, and stop at a limit. Node ids number the nodes in pre-order, so the
// executor can report actual row counts per node for `explain`.

import RecordModel

/// One operator of a plan.
public enum PlanOperator: Sendable, Hashable {
    /// Every row of the type, in row-id order.
    case fullScan
    /// An ordered index scan over a key range. `ordered` when it supplies the query's order
    /// (then it streams in that direction); otherwise its rows are used as a set.
    case indexScan(field: String, range: KeyRange, descending: Bool, ordered: Bool)
    /// Rows whose indexed value (or list element) is any of the values (IN, LIST_CONTAINS_ANY).
    case indexLookup(field: String, values: [FieldValue])
    /// Rows whose string or bytes value (or list element) begins with the prefix.
    case indexPrefix(field: String, prefix: FieldValue)
    /// Rows containing the words (ANY or ALL of them).
    case textSearch(words: String, all: Bool)
    /// Rows of a Location field inside a circle.
    case radius(field: String, center: Location, km: Double)
    /// Rows in nearest-first order from a point (distance browsing), optionally within `maxKm`.
    case nearest(field: String, center: Location, maxKm: Double?)
    /// Rows present in every child (children are row-id sets).
    case intersect
    /// Rows whose records satisfy the filters (fetches each record).
    case filter([QueryFilter])
    /// Sorts all rows into the query's order.
    case sort([SortDescriptor])
    /// Keeps the first `k` rows of the query's order (a bounded heap).
    case topK([SortDescriptor], k: Int)
    /// Stops after `n` rows.
    case limit(Int)
}

/// A node of a plan: an operator, its children and the planner's estimate of its output rows.
public struct PlanNode: Sendable, Hashable {
    /// The node's number: pre-order from 1 in a plan the planner returns (0 until numbered); it keys the
    /// actual row counts of ``QueryPlan/explain(actual:)``.
    public var id: Int
    /// The operator.
    public var op: PlanOperator
    /// The planner's estimate of the rows this node yields.
    public var estimatedRows: Double
    /// The inputs, for operators that take any (a row source has none).
    public var children: [PlanNode]

    /// A node; the planner numbers the finished tree, so `id` is usually left at 0.
    public init(id: Int = 0, op: PlanOperator, estimatedRows: Double, children: [PlanNode] = []) {
        self.id = id
        self.op = op
        self.estimatedRows = estimatedRows
        self.children = children
    }

    /// The nodes in pre-order.
    public var allNodes: [PlanNode] { [self] + children.flatMap(\.allNodes) }

    /// Renumbers the tree in pre-order from `start`; returns the next free id.
    mutating func number(from start: Int) -> Int {
        id = start
        var next = start + 1
        for i in children.indices { next = children[i].number(from: next) }
        return next
    }
}

/// A plan that was considered and not chosen, for `explain`.
public struct RejectedPlan: Sendable, Hashable {
    /// How a plan reads its rows.
    enum Shape: Hashable {
        /// Row-id sets intersected, filtered, then a top-K or a sort.
        case set
        /// An ordered or nearest-first scan that stops at the page.
        case stream
        /// Every row.
        case fullScan
    }

    /// Its estimated cost, in the units of ``QueryPlan/cost``.
    public var cost: Double
    let shape: Shape
    /// The row sources, the driver (or the stream's scan) first.
    let sources: [PlanNode]
    /// Whether a filter runs on the fetched records.
    let filtered: Bool
    let limit: Int?

    /// One line naming the plan's row sources and operators, e.g. `index kind = "cafe" → top 50`;
    /// built when read, not when the planner weighs the plan.
    public var summary: String {
        let filter = filtered ? " → filter" : ""
        switch shape {
        case .set:
            return sources.map(describe).joined(separator: " ∩ ") + filter + (limit.map { " → top \($0)" } ?? " → sort")
        case .stream:
            return "stream " + sources.map(describe).joined(separator: " ∩ ") + filter
                + (limit.map { " → limit \($0)" } ?? "")
        case .fullScan:
            return "full scan" + filter + (limit.map { " → top \($0)" } ?? " → sort")
        }
    }
}

/// The planner's answer for one query and page size.
///
/// ```swift
/// let plan = QueryPlanner.plan(query, statistics: snapshot.statistics, limit: 50)
/// plan.streamsInOrder       // true when no sort is needed above the root
/// plan.residualFilters      // what the filter node tests on fetched records
/// print(plan.explain())     // the tree, its cost, and the rejected plans
/// ```
public struct QueryPlan: Sendable, Hashable {
    /// The query the plan answers.
    public var query: Query
    /// The page size the plan was costed for (nil: all results).
    public var limit: Int?
    /// The chosen tree of operators.
    public var root: PlanNode
    /// The estimated cost: one record fetch costs 1, an index entry or posting 0.02, a comparison 0.01.
    public var cost: Double
    /// The other plans considered, cheapest first (empty when planned `withRejected: false`).
    public var rejected: [RejectedPlan]
    /// Filters no index answers exactly: applied by the plan's filter node (or none).
    public var residualFilters: [QueryFilter]
    /// Whether the plan's root yields rows already in the query's order (no sort needed).
    public var streamsInOrder: Bool
}

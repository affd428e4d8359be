// QueryPlanner: checked query + index statistics → the cheapest plan, with the rejected ones.
//
// Candidates:
//  1. Set plans: each access path may drive; other paths join by intersection while
//     materializing them costs less than the fetches they save; residual filters run on the
//     fetched candidates; then top-K (with a page size) or a full sort into the query's order.
//  2. Ordered stream: when an ordered index supplies the first sort key (or, for a query without
//     sort descriptors, the record-name index supplies record-id order), scan it in order —
//     narrowed by the filters on that field — test the other cheap access paths as row-id sets,
//     fetch and filter the rest, and stop at the page size.
//  3. Nearest stream: for a distance sort with a spatial index, browse nearest-first (within the
//     radius of a NEAR filter on the same field and centre), with the same sets and filters.
//  4. Full scan.
// Costs use exact counts where the catalog has them; unindexed filters get fixed selectivity
// guesses, combined as if independent. No I/O: the planner sees only `IndexStatistics`.

import RecordModel

#if canImport(Glibc)
    import Glibc
#else
    import Darwin
#endif

/// The query planner: chooses the cheapest plan for a checked query from index statistics alone.
///
/// It performs no I/O and keeps no state; every answer comes from ``IndexStatistics``.
/// Candidates are set plans (one per access path as driver), an ordered stream of the index on the
/// first sort key, a nearest-first stream for a distance sort, and the full scan; the others become
/// the plan's ``QueryPlan/rejected`` list.
///
/// ```swift
/// let stats = StaticStatistics(
///     rowCount: 10_000, fieldTypes: ["kind": .string],
///     ordered: ["kind": { range in range.isPoint ? 120 : 10_000 }])
/// let cafes = QueryFilter(fieldName: "kind", comparator: .equals, fieldValue: .string("cafe"))
/// let query = Query(recordType: "Place", predicate: .filters([cafes]))
/// let plan = QueryPlanner.plan(query, statistics: stats, limit: 50)
/// print(plan.explain())   // the chosen tree with estimated rows, its cost, and the rejected plans
/// ```
public enum QueryPlanner {
    /// Plans `query` for pages of `limit` rows (nil: all rows in one go).
    public static func plan(_ query: Query, statistics stats: some IndexStatistics, limit: Int?) -> QueryPlan {
        let rows = Double(max(stats.rowCount, 0))
        let filters = query.predicate.filters
        if query.predicate == .none {
            var root = PlanNode(op: .limit(0), estimatedRows: 0)
            _ = root.number(from: 1)
            return QueryPlan(
                query: query, limit: limit, root: root, cost: 0, rejected: [], residualFilters: [], streamsInOrder: true
            )
        }
        let paths = accessPaths(filters, stats)
        var estimate = rows
        for p in paths { estimate *= rows > 0 ? min(1, p.estimate / rows) : 0 }
        let answeredByAny = paths.reduce(into: Set<Int>()) { $0.formUnion($1.answers) }
        for (i, f) in filters.enumerated() where !answeredByAny.contains(i) {
            estimate *= selectivity(i, f, paths, rows)
        }
        let context = Context(
            query: query, filters: filters, rows: rows, estimate: estimate, limit: limit, paths: paths, stats: stats)

        var candidates: [Candidate] = []
        for (i, _) in paths.enumerated() { candidates.append(context.setPlan(driver: i)) }
        if let s = context.orderedStream() { candidates.append(s) }
        if let n = context.nearestStream() { candidates.append(n) }
        candidates.append(context.fullScan())
        candidates.sort { $0.cost < $1.cost || ($0.cost == $1.cost && $0.rank < $1.rank) }

        var best = candidates[0]
        _ = best.root.number(from: 1)
        var seen = Set<String>([best.key])
        var rejected: [RejectedPlan] = []
        for c in candidates.dropFirst() where seen.insert(c.key).inserted {
            rejected.append(RejectedPlan(summary: c.summary, cost: c.cost))
        }
        return QueryPlan(
            query: query, limit: limit, root: best.root, cost: best.cost, rejected: rejected,
            residualFilters: best.residual, streamsInOrder: best.streams)
    }
}

/// One candidate plan.
struct Candidate {
    var root: PlanNode
    var cost: Double
    var residual: [QueryFilter]
    var streams: Bool
    var summary: String
    /// Tie-break between equal costs: prefer index plans over the full scan.
    var rank: Int
    /// Identity for deduplication: the same sources in another order are the same plan.
    var key: String

    init(
        root: PlanNode, cost: Double, residual: [QueryFilter], streams: Bool, summary: String, rank: Int,
        sources: [String]
    ) {
        self.root = root
        self.cost = cost
        self.residual = residual
        self.streams = streams
        self.summary = summary
        self.rank = rank
        self.key = (streams ? "stream " : "") + sources.sorted().joined(separator: " ∩ ")
    }
}

/// What every candidate builder needs.
struct Context<S: IndexStatistics> {
    let query: Query
    let filters: [QueryFilter]
    let rows: Double
    let estimate: Double
    let limit: Int?
    let paths: [AccessPath]
    let stats: S

    var outputRows: Double { min(estimate, Double(limit ?? Int.max)) }

    /// The query's order as sort descriptors (record id implied last).
    var sorts: [SortDescriptor] { query.sortDescriptors }

    /// Adds paths (other than `excluded`) as intersection sets while each saves more fetches
    /// than it costs to materialize. Returns the chosen path indices and the rows left.
    func joinSets(startRows: Double, excluded: Set<Int>) -> ([Int], Double) {
        var chosen: [Int] = []
        var current = startRows
        let order = paths.indices.filter { !excluded.contains($0) }.sorted { paths[$0].estimate < paths[$1].estimate }
        for j in order {
            let sel = rows > 0 ? min(1, paths[j].estimate / rows) : 0
            let saved = current * (1 - sel) * Cost.fetch
            if paths[j].materializeCost < saved {
                chosen.append(j)
                current *= sel
            }
        }
        return (chosen, current)
    }

    func residual(excluding answered: Set<Int>) -> [QueryFilter] {
        filters.enumerated().filter { !answered.contains($0.offset) }.map(\.element)
    }

    func wrap(_ source: PlanNode, residual: [QueryFilter], candidates: Double) -> PlanNode {
        guard !residual.isEmpty else { return source }
        return PlanNode(op: .filter(residual), estimatedRows: min(candidates, estimate), children: [source])
    }

    /// Adds the ordering and limit operators above a set-producing node.
    func order(_ node: PlanNode, candidates: Double, fetched: Bool) -> (PlanNode, Double) {
        let n = max(candidates, 1)
        // Sort keys need the records, except record-id order.
        let needsFetch = !sorts.isEmpty && !fetched
        var cost = needsFetch ? n * Cost.fetch : 0
        let out: PlanNode
        if let k = limit {
            cost += n * log2(Double(k) + 2) * Cost.compare
            out = PlanNode(op: .topK(sorts, k: k), estimatedRows: min(n, Double(k)), children: [node])
        } else {
            cost += n * log2(n + 2) * Cost.compare
            out = PlanNode(op: .sort(sorts), estimatedRows: candidates, children: [node])
        }
        return (out, cost)
    }

    func setPlan(driver: Int) -> Candidate {
        let d = paths[driver]
        let (others, candidates) = joinSets(startRows: d.estimate, excluded: [driver])
        var answered = d.answers
        var cost = d.materializeCost
        var sources = [d.node]
        for j in others {
            answered.formUnion(paths[j].answers)
            cost += paths[j].materializeCost
            sources.append(paths[j].node)
        }
        let source =
            sources.count == 1 ? sources[0] : PlanNode(op: .intersect, estimatedRows: candidates, children: sources)
        let residual = residual(excluding: answered)
        cost += residual.isEmpty ? 0 : candidates * Cost.fetch
        let filtered = wrap(source, residual: residual, candidates: candidates)
        let (ordered, orderCost) = order(
            filtered, candidates: residual.isEmpty ? candidates : min(candidates, estimate), fetched: !residual.isEmpty)
        cost += orderCost + outputRows * Cost.fetch
        let summary =
            ([describe(d.node)] + others.map { describe(paths[$0].node) }).joined(separator: " ∩ ")
            + (residual.isEmpty ? "" : " → filter") + (limit.map { " → top \($0)" } ?? " → sort")
        return Candidate(
            root: ordered, cost: cost, residual: residual, streams: false, summary: summary, rank: 1,
            sources: sources.map(describe))
    }

    /// A scan of the ordered index that supplies the query's first sort key.
    func orderedStream() -> Candidate? {
        let field: String
        let descending: Bool
        switch sorts.first {
        case .field(let f, let asc)?:
            field = f
            descending = !asc
        case .distance?: return nil
        case nil:
            field = SystemField.recordName.rawValue  // record-id order
            descending = false
        }
        guard stats.hasOrderedIndex(field), !(stats.fieldType(field)?.isList ?? false) else { return nil }
        let own = paths.firstIndex { $0.rangeField == field }
        let range = own.flatMap { paths[$0].range } ?? .all
        let inRange = own.map { paths[$0].estimate } ?? Double(stats.count(field, in: .all))
        var answered = own.map { paths[$0].answers } ?? []
        return stream(
            PlanNode(
                op: .indexScan(field: field, range: range, descending: descending, ordered: true),
                estimatedRows: inRange),
            inRange: inRange, answered: &answered, excluded: own.map { [$0] } ?? [], step: Cost.entry, rank: 0)
    }

    /// Distance browsing for a nearest-first sort.
    func nearestStream() -> Candidate? {
        guard case .distance(let field, let center)? = sorts.first, stats.hasSpatialIndex(field) else { return nil }
        let own = paths.firstIndex {
            if case .radius(let f, let c, _) = $0.node.op { return f == field && c == center }
            return false
        }
        var maxKm: Double? = nil
        if let own, case .radius(_, _, let km) = paths[own].node.op { maxKm = km }
        let inRange = own.map { paths[$0].estimate } ?? rows
        var answered = own.map { paths[$0].answers } ?? []
        return stream(
            PlanNode(op: .nearest(field: field, center: center, maxKm: maxKm), estimatedRows: inRange),
            inRange: inRange, answered: &answered, excluded: own.map { [$0] } ?? [], step: Cost.nearestStep, rank: 0)
    }

    func stream(
        _ scan: PlanNode, inRange: Double, answered: inout Set<Int>, excluded: Set<Int>, step: Double, rank: Int
    ) -> Candidate {
        let selectivity = inRange > 0 ? min(1, estimate / inRange) : 1
        var scanned = inRange
        if let k = limit { scanned = min(inRange, (Double(k) / max(selectivity, 1e-9)).rounded(.up)) }
        // Other paths become membership sets when they save fetches of the scanned rows.
        let (others, _) = joinSets(startRows: scanned, excluded: excluded)
        var cost = scanned * step
        var children = [scan]
        var afterSets = scanned
        for j in others {
            answered.formUnion(paths[j].answers)
            cost += paths[j].materializeCost
            children.append(paths[j].node)
            afterSets *= rows > 0 ? min(1, paths[j].estimate / rows) : 0
        }
        let source = children.count == 1 ? scan : PlanNode(op: .intersect, estimatedRows: afterSets, children: children)
        let residual = residual(excluding: answered)
        cost += residual.isEmpty ? 0 : afterSets * Cost.fetch
        // Tie groups beyond the first sort key are sorted in the executor: a small cost.
        cost += sorts.count > 1 ? outputRows * log2(outputRows + 2) * Cost.compare : 0
        // A stream's filter passes about a page of rows (or all matches without a page size).
        var node = wrap(source, residual: residual, candidates: outputRows)
        if let k = limit { node = PlanNode(op: .limit(k), estimatedRows: outputRows, children: [node]) }
        cost += outputRows * Cost.fetch
        let summary =
            "stream " + ([describe(scan)] + others.map { describe(paths[$0].node) }).joined(separator: " ∩ ")
            + (residual.isEmpty ? "" : " → filter") + (limit.map { " → limit \($0)" } ?? "")
        return Candidate(
            root: node, cost: cost, residual: residual, streams: true, summary: summary, rank: rank,
            sources: children.map(describe))
    }

    func fullScan() -> Candidate {
        var cost = rows * (filters.isEmpty ? Cost.entry : Cost.fetch)
        let scan = PlanNode(op: .fullScan, estimatedRows: rows)
        let filtered = wrap(scan, residual: filters, candidates: rows)
        let (ordered, orderCost) = order(
            filtered, candidates: filters.isEmpty ? rows : estimate, fetched: !filters.isEmpty)
        cost += orderCost + outputRows * Cost.fetch
        let summary = "full scan" + (filters.isEmpty ? "" : " → filter") + (limit.map { " → top \($0)" } ?? " → sort")
        return Candidate(
            root: ordered, cost: cost, residual: filters, streams: false, summary: summary, rank: 2,
            sources: ["full scan"])
    }
}

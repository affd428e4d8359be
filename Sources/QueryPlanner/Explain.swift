// Explain: the chosen plan as stable text — one operator per line, indented under its parent,
// with the estimated rows and, after execution, the actual rows — then the plans rejected and
// their costs. Tests assert on this text, so its format changes only on purpose.
//
//     query: Place WHERE kind EQUALS "cafe" ORDER BY population DESC
//     page size: 50
//     limit 50  (est 50)
//       filter kind EQUALS "cafe"  (est 50)
//         index scan population all DESC, ordered  (est 1000)
//     cost: 612.0
//     rejected:
//       1250.0  index kind = "cafe" → top 50

import RecordModel

#if canImport(Glibc)
    import Glibc
#else
    import Darwin
#endif

/// One-line label of an operator.
func describe(_ node: PlanNode) -> String {
    switch node.op {
    case .fullScan: return "full scan"
    case .indexScan(let f, let r, let desc, let ordered):
        if !ordered, r.isPoint { return "index \(f) \(r)" }
        return "index scan \(f) \(r)" + (desc ? " DESC" : "") + (ordered ? ", ordered" : "")
    case .indexLookup(let f, let values):
        return values.count == 1 ? "index \(f) = \(values[0])" : "index lookup \(f) IN \(FieldValue.list(values))"
    case .indexPrefix(let f, let p): return "index prefix \(f) BEGINSWITH \(p)"
    case .textSearch(let words, let all): return "text \(all ? "ALL" : "ANY") \(FieldValue.string(words))"
    case .radius(let f, let c, let km): return "radius \(f) within \(formatNumber(km)) km of \(c)"
    case .nearest(let f, let c, let maxKm):
        return "nearest \(f) from \(c)" + (maxKm.map { " within \(formatNumber($0)) km" } ?? "")
    case .intersect: return "intersect"
    case .filter(let fs): return "filter " + fs.map(\.description).joined(separator: " AND ")
    case .sort(let s): return "sort by " + orderText(s)
    case .topK(let s, let k): return "top \(k) by " + orderText(s)
    case .limit(let n): return "limit \(n)"
    }
}

func orderText(_ s: [SortDescriptor]) -> String {
    (s.map(\.description) + ["recordID"]).joined(separator: ", ")
}

/// One decimal: `612.0`, `1250.5`.
func formatCost(_ d: Double) -> String {
    let tenths = (d * 10).rounded()
    guard tenths.isFinite, abs(tenths) < 1e15 else { return String(d) }
    let t = Int64(tenths)
    return "\(t / 10).\(abs(t % 10))"
}

func formatNumber(_ d: Double) -> String {
    d.rounded() == d && abs(d) < 1e15 ? String(Int64(d)) : String(d)
}

extension QueryPlan {
    /// The plan as text; `actual` maps node ids to the rows each node produced.
    public func explain(actual: [Int: Int] = [:]) -> String {
        var out = "query: \(query)\n"
        out += "page size: " + (limit.map(String.init) ?? "all") + "\n"
        func walk(_ n: PlanNode, _ depth: Int) {
            var counts = "est \(formatNumber(n.estimatedRows.rounded()))"
            if let a = actual[n.id] { counts += ", actual \(a)" }
            out += String(repeating: "  ", count: depth) + describe(n) + "  (\(counts))\n"
            for c in n.children { walk(c, depth + 1) }
        }
        walk(root, 0)
        out += "cost: " + formatCost(cost) + "\n"
        if !rejected.isEmpty {
            out += "rejected:\n"
            for r in rejected { out += "  " + formatCost(r.cost) + "  " + r.summary + "\n" }
        }
        return out
    }

    /// A stable fingerprint of the query this plan answers (record type, filters, order) — not
    /// of the plan, which may differ with the page size. Cursors carry it.
    public var queryFingerprint: UInt64 { QueryPlanner.fingerprint(query) }
}

extension QueryPlanner {
    /// FNV-1a over the query's canonical text: stable across processes and releases.
    public static func fingerprint(_ query: Query) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in query.description.utf8 {
            h ^= UInt64(b)
            h = h &* 0x0000_0100_0000_01B3
        }
        return h
    }
}

extension PlanNode {
    /// The operator as `explain` prints it, without estimates (`index scan rank >= 3`, `filter …`).
    public var summary: String { describe(self) }
}

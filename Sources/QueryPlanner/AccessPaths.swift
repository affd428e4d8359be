// Access paths: which filters an index can answer, and how many rows each would yield.
//
// A filter is sargable when an index of the right kind exists on its field and answers it
// exactly: equality and ranges on a scalar field (one range per field, bounds combined), IN,
// BEGINS_WITH, the LIST_ comparators on a list field (its index has one entry per element),
// NEAR on a spatial index, token searches on the text index. NOT_ comparators and anything
// without an index are residual: evaluated on fetched records.

import RecordModel

#if canImport(Glibc)
    import Glibc
#else
    import Darwin
#endif

/// A way to get candidate rows from one index, with the filters it answers exactly.
struct AccessPath {
    var node: PlanNode
    /// Estimated rows (distinct records; list lookups may overcount slightly).
    var estimate: Double
    /// Indices (into the query's filters) of the filters this path answers exactly.
    var answers: SmallIntSet
    /// For ordered-scan paths: the field and range (a stream can reuse them).
    var rangeField: String?
    var range: KeyRange?
    /// Cost to materialize the path's rows as a row-id set.
    var materializeCost: Double
}

extension QueryPlanner {
    /// Every way an index can answer one or more of `filters`: per field, one range scan for all
    /// its equality and range filters together; per other filter an index lookup, prefix, radius
    /// or text search when the field has the index.
    static func accessPaths(_ filters: [QueryFilter], _ stats: some IndexStatistics) -> [AccessPath] {
        var paths: [AccessPath] = []
        paths.reserveCapacity(filters.count)
        // Per field, its range and the filters it answers, in the order the fields first appear
        // (a query has few: a list searched in place costs less than a dictionary's hashing).
        var ranges: [(field: String, range: KeyRange, answers: SmallIntSet)] = []
        for i in filters.indices {
            let f = filters[i]
            switch f.comparator {
            case .near, .containsAllTokens, .containsAnyTokens:
                // Answered by the spatial or text index alone: the field's type and ordered
                // index (two lookups by its name) are not asked.
                if let path = lookupPath(f, index: i, indexed: false, isList: false, stats) { paths.append(path) }
                continue
            default: break
            }
            let isList = stats.fieldType(f.fieldName)?.isList ?? false
            let indexed = stats.hasOrderedIndex(f.fieldName)
            // The index holds record ids with zones; a bare record name is a residual filter.
            if f.fieldName == SystemField.recordName.rawValue && f.fieldValue.elements.first?.scalarType == .string {
                continue
            }
            if let r = comparisonRange(f) {
                guard indexed, !isList, !f.fieldValue.isList else { continue }
                if let k = ranges.firstIndex(where: { $0.field == f.fieldName }) {
                    ranges[k].range = ranges[k].range.intersected(with: r)
                    ranges[k].answers.insert(i)
                } else {
                    ranges.append((f.fieldName, r, SmallIntSet(i)))
                }
            } else if let path = lookupPath(f, index: i, indexed: indexed, isList: isList, stats) {
                paths.append(path)
            }
        }
        for (field, r, ids) in ranges {
            let n = r.isEmpty ? 0 : Double(stats.count(field, in: r))
            paths.append(
                AccessPath(
                    node: PlanNode(
                        op: .indexScan(field: field, range: r, descending: false, ordered: false), estimatedRows: n),
                    estimate: n, answers: ids, rangeField: field, range: r,
                    materializeCost: n * Cost.rangeRow))
        }
        return paths
    }

    /// The key range of an equality or range comparison; nil for every other comparator.
    static func comparisonRange(_ f: QueryFilter) -> KeyRange? {
        switch f.comparator {
        case .equals: .point(f.fieldValue)
        case .lessThan: KeyRange(upper: KeyBound(f.fieldValue, inclusive: false))
        case .lessThanOrEquals: KeyRange(upper: KeyBound(f.fieldValue, inclusive: true))
        case .greaterThan: KeyRange(lower: KeyBound(f.fieldValue, inclusive: false))
        case .greaterThanOrEquals: KeyRange(lower: KeyBound(f.fieldValue, inclusive: true))
        default: nil
        }
    }

    /// The index path answering filter `i` that is not a comparison, if its index exists.
    static func lookupPath(
        _ f: QueryFilter, index i: Int, indexed: Bool, isList: Bool, _ stats: some IndexStatistics
    ) -> AccessPath? {
        func lookup(_ values: [FieldValue], costPerRow: Double) -> AccessPath {
            let n = Double(stats.count(f.fieldName, equalToAnyOf: values))
            return AccessPath(
                node: PlanNode(op: .indexLookup(field: f.fieldName, values: values), estimatedRows: n),
                estimate: n, answers: SmallIntSet(i), materializeCost: n * costPerRow)
        }
        switch f.comparator {
        case .in where indexed && !isList, .listContainsAny where indexed && isList:
            return lookup(f.fieldValue.elements, costPerRow: Cost.lookupRow)
        case .listContains where indexed && isList:
            return lookup([f.fieldValue], costPerRow: Cost.lookupRow)
        case .listContainsAll where indexed && isList && !f.fieldValue.elements.isEmpty:
            return listContainsAllPath(f, index: i, stats)
        case .beginsWith where indexed && !isList, .listMemberBeginsWith where indexed && isList:
            let n = Double(stats.count(f.fieldName, beginningWith: f.fieldValue))
            // A string prefix is also the key range [p, p⁺) (strings order by scalars), so an
            // ordered stream on the same field can scan just the prefix instead of the index.
            let prefixRange = isList ? nil : Self.prefixRange(f.fieldValue)
            return AccessPath(
                node: PlanNode(op: .indexPrefix(field: f.fieldName, prefix: f.fieldValue), estimatedRows: n),
                estimate: n, answers: SmallIntSet(i), rangeField: prefixRange == nil ? nil : f.fieldName,
                range: prefixRange,
                materializeCost: n * Cost.prefixRow)
        case .near where stats.hasSpatialIndex(f.fieldName):
            guard case .location(let c) = f.fieldValue, let m = f.distance else { return nil }
            let n = Double(stats.estimatedRadiusCount(f.fieldName, center: c, km: m / 1000))
            return AccessPath(
                node: PlanNode(op: .radius(field: f.fieldName, center: c, km: m / 1000), estimatedRows: n),
                estimate: n, answers: SmallIntSet(i), materializeCost: Cost.radiusStart + n * Cost.radiusHit)
        case .containsAllTokens where stats.hasTextIndex, .containsAnyTokens where stats.hasTextIndex:
            guard case .string(let words) = f.fieldValue else { return nil }
            let all = f.comparator == .containsAllTokens
            let n = Double(stats.estimatedTextCount(words, all: all))
            return AccessPath(
                node: PlanNode(op: .textSearch(words: words, all: all), estimatedRows: n),
                estimate: n, answers: SmallIntSet(i), materializeCost: Cost.textStart + n * Cost.posting)
        default:
            return nil
        }
    }

    /// CONTAINS ALL on a list: the intersection of one lookup per element.
    static func listContainsAllPath(_ f: QueryFilter, index i: Int, _ stats: some IndexStatistics) -> AccessPath {
        var children: [PlanNode] = []
        for v in f.fieldValue.elements {
            let n = Double(stats.count(f.fieldName, equalToAnyOf: [v]))
            children.append(PlanNode(op: .indexLookup(field: f.fieldName, values: [v]), estimatedRows: n))
        }
        let n = children.map(\.estimatedRows).min() ?? 0
        let total = children.map(\.estimatedRows).reduce(0, +)
        return AccessPath(
            node: PlanNode(op: .intersect, estimatedRows: n, children: children),
            estimate: n, answers: SmallIntSet(i), materializeCost: total * Cost.lookupRow)
    }

    /// The key range of the strings starting with `prefix`: [prefix, prefix with its last scalar
    /// incremented); nil when there is no such bound (empty prefix, bytes, last scalar U+10FFFF
    /// or U+D7FF) — then the prefix is only a set, never a stream range.
    static func prefixRange(_ prefix: FieldValue) -> KeyRange? {
        guard case .string(let p) = prefix else { return nil }
        var scalars = Array(p.unicodeScalars)
        guard let last = scalars.popLast(), let next = Unicode.Scalar(last.value + 1) else { return nil }
        scalars.append(next)
        var upper = String.UnicodeScalarView()
        upper.append(contentsOf: scalars)
        return KeyRange(
            lower: KeyBound(.string(p), inclusive: true), upper: KeyBound(.string(String(upper)), inclusive: false))
    }

    /// Fraction of the rows a filter keeps: exact from an access path when one answers it,
    /// otherwise a fixed guess by comparator.
    static func selectivity(_ i: Int, _ f: QueryFilter, _ paths: [AccessPath], _ rows: Double) -> Double {
        if let p = paths.first(where: { $0.answers.contains(i) }), rows > 0 {
            return min(1, p.estimate / rows)
        }
        switch f.comparator {
        case .equals, .listContains: return 0.05
        case .in, .listContainsAny: return min(0.5, 0.05 * Double(max(1, f.fieldValue.elements.count)))
        case .listContainsAll, .near, .containsAllTokens: return 0.01
        case .containsAnyTokens, .beginsWith, .listMemberBeginsWith: return 0.05
        case .lessThan, .lessThanOrEquals, .greaterThan, .greaterThanOrEquals: return 0.33
        case .notEquals, .notIn, .notListContains, .notListContainsAny, .notListContainsAll, .notBeginsWith,
            .notListMemberBeginsWith:
            return 0.9
        }
    }
}

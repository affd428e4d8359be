// RecordMatcher: does one record satisfy a checked predicate?
//
// The reference semantics of every Web Services comparator, evaluated on one record with no
// index. Subscriptions use it to decide "matches", and every planner/executor test uses it as
// the full-scan oracle, so it must agree exactly with the indexes:
//
// - A record without a value for the filter's field never matches (NOT_ forms included).
// - EQUALS/IN compare with CloudKit equality (numbers across Int64/Double, strings by scalars,
//   references by record id); `recordName` compared with a string compares the record name.
// - Ranges compare within a type family only (FieldValue.compare); across families: no match.
// - LIST_* treat a scalar field as a one-element list.
// - NEAR: great-circle distance (GeoMath, R = 6371.0088 km) ≤ radius, the boundary included —
//   the same test the spatial index applies.
// - Token searches tokenize the SEARCHABLE string fields with TextTokenizer. ALL: every token of
//   every query word is present; ANY: for some query word, all its tokens are present. A query
//   with no tokens (only stop words) matches nothing — as TextIndex answers.

import Indexes
import RecordModel

/// Evaluates a checked predicate against single records.
///
/// ```swift
/// let m = RecordMatcher(predicate: checked.predicate, searchableFields: ["name", "description"])
/// let hits = records.filter(m.matches)
/// ```
public struct RecordMatcher: Sendable {
    /// The predicate every record is tested against.
    public let predicate: QueryPredicate
    /// The fields whose words a token search sees; nil means every String / String-list field.
    public let searchableFields: [String]?
    /// Per filter: the token groups of its words (token filters only); empty when the predicate
    /// has no token search.
    private let queryTokens: [[[String]]]
    /// The user fields the filters read, when every filter reads one user field (no token
    /// search, no system field): ``matches(values:)`` then tests a row from those values alone.
    public let selection: FieldSelection?
    /// Per filter (with a selection): its field's slot in `selection`, its comparator, value
    /// and distance, read in place by ``matches(values:)`` for every row tested (a filter copied
    /// out of the predicate's list retained and released its field name and value).
    private let tests: [(slot: Int, comparator: Comparator, target: FieldValue, metres: Double?)]

    /// A matcher whose token searches see `searchableFields` (nil: every String and String-list field).
    public init(predicate: QueryPredicate, searchableFields: [String]?) {
        self.predicate = predicate
        self.searchableFields = searchableFields
        let filters = predicate.filters
        // A matcher is made per query: no array is made that the predicate does not need.
        queryTokens =
            filters.contains(where: \.comparator.isTokenSearch)
            ? filters.map { f in
                guard f.comparator.isTokenSearch, case .string(let words) = f.fieldValue else { return [] }
                return TextTokenizer.groups(words)
            } : []
        if case .filters = predicate,
            filters.allSatisfy({ !$0.comparator.isTokenSearch && SystemField.named($0.fieldName) == nil })
        {
            let selection = FieldSelection(filters.map(\.fieldName))
            self.selection = selection
            tests = filters.map { (selection.slot(of: $0.fieldName) ?? 0, $0.comparator, $0.fieldValue, $0.distance) }
        } else {
            selection = nil
            tests = []
        }
    }

    /// The searchable fields of a record type's schema (SEARCHABLE strings and string lists).
    public init(predicate: QueryPredicate, schema: RecordTypeSchema?) {
        let fields = schema.map { s in
            s.sortedFields.filter { $0.options.contains(.searchable) && $0.type.scalar == .string }.map(\.name)
        }
        self.init(predicate: predicate, searchableFields: fields)
    }

    /// Whether `record` satisfies every filter.
    public func matches(_ record: Record) -> Bool {
        switch predicate {
        case .all: return true
        case .none: return false
        case .filters(let filters):
            var tokens: Set<String>? = nil
            for (i, f) in filters.enumerated() {
                if f.comparator.isTokenSearch {
                    if tokens == nil { tokens = recordTokens(record) }
                    if !matchesTokens(queryTokens[i], all: f.comparator == .containsAllTokens, tokens!) { return false }
                } else if !matches(f, record) {
                    return false
                }
            }
            return true
        }
    }

    /// The tokens of the record's searchable text.
    public func recordTokens(_ record: Record) -> Set<String> {
        var out = Set<String>()
        let names = searchableFields ?? Array(record.fields.keys)  // in name order already
        for name in names {
            for e in record.fields[name]?.elements ?? [] {
                if case .string(let s) = e { TextTokenizer.forEachGroup(s) { out.formUnion($0) } }
            }
        }
        return out
    }

    private func matchesTokens(_ groups: [[String]], all: Bool, _ tokens: Set<String>) -> Bool {
        if groups.isEmpty { return false }
        if all { return groups.allSatisfy { g in g.allSatisfy(tokens.contains) } }
        return groups.contains { g in g.allSatisfy(tokens.contains) }
    }

    /// Whether a row whose ``selection`` fields hold `values` (slot order, as
    /// `FieldSelection.values(of:into:)` or a store fills them) satisfies every filter — the same
    /// answer as ``matches(_:)-(Record)`` on its record. Only for a matcher with a selection.
    public func matches(values: [FieldValue?]) -> Bool {
        switch predicate {
        case .all: return true
        case .none: return false
        case .filters:
            // Through the buffers: each test and value is borrowed where it lies, not copied out.
            return tests.withUnsafeBufferPointer { ts in
                values.withUnsafeBufferPointer { vs in
                    for i in ts.indices {
                        guard let value = vs[ts[i].slot] else { return false }
                        if !matches(ts[i].comparator, ts[i].target, ts[i].metres, value) { return false }
                    }
                    return true
                }
            }
        }
    }

    private func matches(_ f: QueryFilter, _ record: Record) -> Bool {
        guard var value = record.queryValue(f.fieldName) else { return false }
        if f.fieldName == SystemField.recordName.rawValue, case .string = f.fieldValue.elements.first {
            value = .string(record.recordID.recordName)
        }
        return matches(f, value)
    }

    private func matches(_ f: QueryFilter, _ value: FieldValue?) -> Bool {
        guard let value else { return false }
        return matches(f.comparator, f.fieldValue, f.distance, value)
    }

    private func matches(_ comparator: Comparator, _ target: FieldValue, _ metres: Double?, _ value: FieldValue) -> Bool
    {
        switch comparator {
        case .equals: return value == target
        case .notEquals: return value != target
        case .lessThan: return ordered(value, target) { $0 < 0 }
        case .lessThanOrEquals: return ordered(value, target) { $0 <= 0 }
        case .greaterThan: return ordered(value, target) { $0 > 0 }
        case .greaterThanOrEquals: return ordered(value, target) { $0 >= 0 }
        case .in: return target.elements.contains(value)
        case .notIn: return !target.elements.contains(value)
        case .listContains: return value.elements.contains(target)
        case .notListContains: return !value.elements.contains(target)
        case .listContainsAny: return containsAny(value, target)
        case .notListContainsAny: return !containsAny(value, target)
        case .listContainsAll: return target.elements.allSatisfy(value.elements.contains)
        case .notListContainsAll: return !target.elements.allSatisfy(value.elements.contains)
        case .beginsWith: return hasPrefix(value, target)
        case .notBeginsWith: return !hasPrefix(value, target)
        case .listMemberBeginsWith: return value.elements.contains { hasPrefix($0, target) }
        case .notListMemberBeginsWith: return !value.elements.contains { hasPrefix($0, target) }
        case .near:
            guard case .location(let l) = value, case .location(let c) = target, let metres else {
                return false
            }
            let km = GeoMath.distanceKm(
                latitude1: c.latitude, longitude1: c.longitude, latitude2: l.latitude, longitude2: l.longitude)
            return km <= metres / 1000
        case .containsAllTokens, .containsAnyTokens: return false  // handled by matches(_:)
        }
    }

    private func ordered(_ a: FieldValue, _ b: FieldValue, _ test: (Int) -> Bool) -> Bool {
        guard a.isComparable(with: b) else { return false }
        return test(FieldValue.compare(a, b))
    }

    private func containsAny(_ value: FieldValue, _ target: FieldValue) -> Bool {
        let have = value.elements
        return target.elements.contains(where: have.contains)
    }

    private func hasPrefix(_ value: FieldValue, _ prefix: FieldValue) -> Bool {
        switch (value, prefix) {
        case (.string(let s), .string(let p)): return s.utf8.starts(with: p.utf8)
        case (.bytes(let b), .bytes(let p)): return b.starts(with: p)
        default: return false
        }
    }
}

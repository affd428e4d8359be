// IndexAdvisor: which index options a query needs in production — what development answers
// without, and production rejects with `Field 'x' is not marked queryable` / `sortable`.

import RecordModel

/// One index option a query relies on.
public struct IndexRequirement: Sendable, Hashable, CustomStringConvertible {
    /// The field as the query names it; `(a String field)` for a token search, which needs some SEARCHABLE field.
    public var field: String
    /// The option needed: queryable, sortable or searchable.
    public var option: IndexOptions
    /// Why: the filter or sort that needs it.
    public var reason: String

    /// `field OPTION  (reason)`, e.g. `rating SORTABLE  (GREATER_THAN)`.
    public var description: String { "\(field) \(option.names.joined(separator: " "))  (\(reason))" }
}

extension QueryPlanner {
    /// The index options `query` needs (one entry per field and option, in query order).
    public static func requiredIndexes(_ query: Query) -> [IndexRequirement] {
        var out: [IndexRequirement] = []
        func need(_ field: String, _ option: IndexOptions, _ reason: String) {
            if !out.contains(where: { $0.field == field && $0.option == option }) {
                out.append(IndexRequirement(field: field, option: option, reason: reason))
            }
        }
        switch query.predicate {
        case .all: need(SystemField.recordName.rawValue, .queryable, "TRUEPREDICATE lists the type")
        case .none: break
        case .filters(let fs):
            for f in fs {
                if f.comparator.isTokenSearch {
                    need("(a String field)", .searchable, f.comparator.rawValue)
                } else {
                    need(f.fieldName, f.comparator.isRange ? .sortable : .queryable, f.comparator.rawValue)
                }
            }
        }
        for s in query.sortDescriptors {
            switch s {
            case .field(let f, _): need(f, .sortable, "sort")
            case .distance(let f, _): need(f, .queryable, "distance sort")
            }
        }
        return out
    }
}

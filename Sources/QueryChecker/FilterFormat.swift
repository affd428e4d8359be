// From filters back to a predicate: every checked predicate maps onto a Web Services filter
// list and back. `QueryPredicate.predicateFormat` writes a format string with `%K`/`%@`
// placeholders and the matching arguments; checking that pair gives the same filters again
// (a property test holds the two directions together).

import RecordModel

extension QueryPredicate {
    /// A format string and arguments that the checker turns back into this predicate.
    ///
    /// ```swift
    /// let (format, args) = checked.predicate.predicateFormat
    /// // "%K == %@ AND distanceToLocation:fromLocation:(%K, %@) < %@"
    /// ```
    public var predicateFormat: (format: String, arguments: [PredicateArgument]) {
        switch self {
        case .all: return ("TRUEPREDICATE", [])
        case .none: return ("FALSEPREDICATE", [])
        case .filters(let filters):
            var parts: [String] = []
            var args: [PredicateArgument] = []
            for f in filters {
                let (p, a) = f.predicateFormat
                parts.append(p)
                args += a
            }
            return (parts.joined(separator: " AND "), args)
        }
    }
}

extension QueryFilter {
    /// One comparison with placeholders, and its arguments.
    public var predicateFormat: (format: String, arguments: [PredicateArgument]) {
        let k = PredicateArgument.key(fieldName)
        let v = PredicateArgument.value(fieldValue)
        switch comparator {
        case .equals: return ("%K == %@", [k, v])
        case .notEquals: return ("%K != %@", [k, v])
        case .lessThan: return ("%K < %@", [k, v])
        case .lessThanOrEquals: return ("%K <= %@", [k, v])
        case .greaterThan: return ("%K > %@", [k, v])
        case .greaterThanOrEquals: return ("%K >= %@", [k, v])
        case .near:
            return ("distanceToLocation:fromLocation:(%K, %@) < %@", [k, v, .value(.double((distance ?? 0) / 1000))])
        case .containsAllTokens: return ("ALL tokenize(%@, 'Cdl') IN allTokens", [v])
        case .containsAnyTokens: return ("self CONTAINS %@", [v])
        case .in: return ("%K IN %@", [k, v])
        case .notIn: return ("NOT %K IN %@", [k, v])
        case .listContains: return ("%K CONTAINS %@", [k, v])
        case .notListContains: return ("NOT %K CONTAINS %@", [k, v])
        case .listContainsAny: return ("ANY %K IN %@", [k, v])
        case .notListContainsAny: return ("NOT ANY %K IN %@", [k, v])
        case .listContainsAll: return ("ALL %@ IN %K", [v, k])
        case .notListContainsAll: return ("NOT ALL %@ IN %K", [v, k])
        case .beginsWith: return ("%K BEGINSWITH %@", [k, v])
        case .notBeginsWith: return ("NOT %K BEGINSWITH %@", [k, v])
        case .listMemberBeginsWith: return ("ANY %K BEGINSWITH %@", [k, v])
        case .notListMemberBeginsWith: return ("NOT ANY %K BEGINSWITH %@", [k, v])
        }
    }
}

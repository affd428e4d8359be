// The checked query: a conjunction of Web Services filters, plus sort descriptors.
//
// This is the output type of QueryChecker and the input of QueryPlanner. It maps one-to-one onto
// the `filterBy` list of CloudKit Web Services (CKQUERY.md §5): every accepted predicate shape
// becomes one filter (BETWEEN becomes two), and a filter list becomes a predicate again through
// `QueryPredicate.formatString`.

/// A Web Services query comparator. Raw values are the wire names — never change them.
public enum Comparator: String, Sendable, Hashable, Codable, CaseIterable {
    /// `%K == %@`
    case equals = "EQUALS"
    /// `%K != %@`
    case notEquals = "NOT_EQUALS"
    /// `%K < %@`
    case lessThan = "LESS_THAN"
    /// `%K <= %@`
    case lessThanOrEquals = "LESS_THAN_OR_EQUALS"
    /// `%K > %@`
    case greaterThan = "GREATER_THAN"
    /// `%K >= %@`
    case greaterThanOrEquals = "GREATER_THAN_OR_EQUALS"
    /// `distanceToLocation:fromLocation:(%K, %@) < km`; the filter keeps the radius in metres (`distance`).
    case near = "NEAR"
    /// `ALL tokenize(%@, 'Cdl') IN allTokens`: every word, in any SEARCHABLE field.
    case containsAllTokens = "CONTAINS_ALL_TOKENS"
    /// `self CONTAINS %@`: any of the words, in any SEARCHABLE field.
    case containsAnyTokens = "CONTAINS_ANY_TOKENS"
    /// `%K IN %@`
    case `in` = "IN"
    /// `NOT %K IN %@`
    case notIn = "NOT_IN"
    /// `%K CONTAINS %@` (a list field holds the value)
    case listContains = "LIST_CONTAINS"
    /// `NOT %K CONTAINS %@`
    case notListContains = "NOT_LIST_CONTAINS"
    /// `ANY %K IN %@`
    case listContainsAny = "LIST_CONTAINS_ANY"
    /// `NOT ANY %K IN %@`
    case notListContainsAny = "NOT_LIST_CONTAINS_ANY"
    /// `ALL %@ IN %K`
    case listContainsAll = "LIST_CONTAINS_ALL"
    /// `NOT ALL %@ IN %K`
    case notListContainsAll = "NOT_LIST_CONTAINS_ALL"
    /// `%K BEGINSWITH %@`
    case beginsWith = "BEGINS_WITH"
    /// `NOT %K BEGINSWITH %@`
    case notBeginsWith = "NOT_BEGINS_WITH"
    /// `ANY %K BEGINSWITH %@`
    case listMemberBeginsWith = "LIST_MEMBER_BEGINS_WITH"
    /// `NOT ANY %K BEGINSWITH %@`
    case notListMemberBeginsWith = "NOT_LIST_MEMBER_BEGINS_WITH"

    /// The comparator a `NOT` turns this one into, or `nil` where CloudKit has none
    /// (NEAR and the token searches cannot be negated).
    public var negated: Comparator? {
        switch self {
        case .equals: .notEquals
        case .notEquals: .equals
        case .lessThan: .greaterThanOrEquals
        case .lessThanOrEquals: .greaterThan
        case .greaterThan: .lessThanOrEquals
        case .greaterThanOrEquals: .lessThan
        case .in: .notIn
        case .notIn: .in
        case .listContains: .notListContains
        case .notListContains: .listContains
        case .listContainsAny: .notListContainsAny
        case .notListContainsAny: .listContainsAny
        case .listContainsAll: .notListContainsAll
        case .notListContainsAll: .listContainsAll
        case .beginsWith: .notBeginsWith
        case .notBeginsWith: .beginsWith
        case .listMemberBeginsWith: .notListMemberBeginsWith
        case .notListMemberBeginsWith: .listMemberBeginsWith
        case .near, .containsAllTokens, .containsAnyTokens: nil
        }
    }

    /// Whether the comparator searches the text index rather than one field.
    public var isTokenSearch: Bool { self == .containsAllTokens || self == .containsAnyTokens }

    /// Whether the comparator is an order comparison (needs SORTABLE in production).
    public var isRange: Bool {
        self == .lessThan || self == .lessThanOrEquals || self == .greaterThan || self == .greaterThanOrEquals
    }
}

/// One filter of a checked query: `fieldName comparator fieldValue`.
///
/// For `NEAR`, `fieldValue` is the centre (a location) and `distance` the radius in **metres**,
/// as in Web Services (a predicate's radius is in kilometres; the checker converts). For the token
/// comparators `fieldName` is `allTokens` and `fieldValue` the string of words.
///
/// ```swift
/// // name BEGINSWITH 'Caf' AND distanceToLocation:fromLocation:(location, here) < 2 (km)
/// let filters = [
///     QueryFilter(fieldName: "name", comparator: .beginsWith, fieldValue: "Caf"),
///     QueryFilter(fieldName: "location", comparator: .near, fieldValue: .location(here), distance: 2_000),
/// ]
/// let query = Query(recordType: "Place", predicate: .filters(filters))
/// ```
public struct QueryFilter: Sendable, Hashable {
    /// The field name used by token searches, which span every SEARCHABLE field.
    public static let allTokensFieldName = "allTokens"

    /// The field compared: a user field, a system field's query name, or ``allTokensFieldName``.
    public var fieldName: String
    /// The comparator.
    public var comparator: Comparator
    /// The value compared with; a list for `IN` and the list comparators.
    public var fieldValue: FieldValue
    /// NEAR only: the radius in metres.
    public var distance: Double?

    /// A filter; `distance` is for `NEAR` only, in metres.
    public init(fieldName: String, comparator: Comparator, fieldValue: FieldValue, distance: Double? = nil) {
        self.fieldName = fieldName
        self.comparator = comparator
        self.fieldValue = fieldValue
        self.distance = distance
    }
}

/// A checked predicate: every record, no record, or the conjunction of filters.
public enum QueryPredicate: Sendable, Hashable {
    /// `TRUEPREDICATE`: every record of the type.
    case all
    /// `FALSEPREDICATE` (accepted with a portability warning): no record.
    case none
    /// All of the filters (at least one).
    case filters([QueryFilter])

    /// The filter list (empty for `.all` and `.none`).
    public var filters: [QueryFilter] {
        if case .filters(let f) = self { return f }
        return []
    }
}

/// How query results are ordered.
public enum SortDescriptor: Sendable, Hashable {
    /// By a field's value (SORTABLE in production); `ascending` false for descending.
    case field(String, ascending: Bool)
    /// By great-circle distance of a Location field from a point, nearest first.
    case distance(field: String, from: Location)

    /// The field the descriptor sorts by.
    public var fieldName: String {
        switch self {
        case .field(let f, _): f
        case .distance(let f, _): f
        }
    }
}

/// An argument substituted for a placeholder of a predicate format string.
///
/// `%@` takes any value, `%K` a key, `%d` an integer, `%f` a number.
///
/// ```swift
/// let args: [PredicateArgument] = ["cafe", .key("kind"), .value(.location(here))]
/// ```
public enum PredicateArgument: Sendable, Hashable {
    /// A value (a list value stands for an array argument).
    case value(FieldValue)
    /// A key name, for `%K`.
    case key(String)
}

extension PredicateArgument: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral {
    /// A string value.
    public init(stringLiteral value: String) { self = .value(.string(value)) }
    /// An integer value.
    public init(integerLiteral value: Int64) { self = .value(.int64(value)) }
    /// A floating-point value.
    public init(floatLiteral value: Double) { self = .value(.double(value)) }
}

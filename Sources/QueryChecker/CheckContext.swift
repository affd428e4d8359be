// CheckContext: what the checker needs besides the tree — arguments, variables, the schema,
// the current time, and limits.

import RecordModel

/// The inputs of a check other than the predicate itself.
///
/// ```swift
/// let ctx = CheckContext(arguments: [.value(.location(here))], schema: schema, recordType: "Place")
/// ```
public struct CheckContext: Sendable {
    /// Values for `%@ %K %d …`, in order.
    public var arguments: [PredicateArgument]
    /// Values for `$NAME` variables.
    public var variables: [String: PredicateArgument]
    /// When given (with `recordType`), fields, types and — in production — index options are checked.
    public var schema: Schema?
    /// The record type being queried (needed for schema checks).
    public var recordType: String?
    /// The value of `now()`.
    public var now: Timestamp
    /// Maximum number of elements in an IN / list argument.
    public var maximumListCount: Int
    /// The text the tree was parsed from, when known: lets errors point at an `OR` keyword,
    /// which the tree does not record.
    public var source: String?

    /// A context; every input is optional. Without `schema` and `recordType` only the
    /// schema-free rules apply (system fields still keep their types); `now` defaults to the
    /// epoch, so pass the current time when the predicate may call `now()`.
    public init(
        arguments: [PredicateArgument] = [], variables: [String: PredicateArgument] = [:],
        schema: Schema? = nil, recordType: String? = nil,
        now: Timestamp = Timestamp(millisecondsSince1970: 0), maximumListCount: Int = 10_000, source: String? = nil
    ) {
        self.arguments = arguments
        self.variables = variables
        self.schema = schema
        self.recordType = recordType
        self.now = now
        self.maximumListCount = maximumListCount
        self.source = source
    }
}

/// A predicate accepted by the checker: the filters and any portability warnings.
///
/// ```swift
/// let checked = try QueryChecker.check("kind == 'museum' AND population BETWEEN {1000, 5000}")
/// checked.predicate.filters.count  // 3: BETWEEN became >= and <=
/// checked.warnings                 // []
/// ```
public struct CheckedPredicate: Sendable, Hashable {
    /// The normalized predicate: `.none` when it can match nothing (a `FALSEPREDICATE`, or
    /// `parent != nil`, which no Cirrus record has), `.all` when no comparison adds a filter
    /// (`TRUEPREDICATE`, `parent == nil`), otherwise the filters in the order the comparisons
    /// were written.
    public var predicate: QueryPredicate
    /// Accepted, but may not behave the same on CloudKit; each points at its part of the text.
    public var warnings: [CheckWarning]

    /// Wraps a predicate and its warnings (the checker builds these; tests may too).
    public init(predicate: QueryPredicate, warnings: [CheckWarning] = []) {
        self.predicate = predicate
        self.warnings = warnings
    }
}

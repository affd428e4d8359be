// RecordQuery and QueryExplanation: a query as CloudKit's CKQuery holds it, and what `explain`
// answers — the same on every engine.

import Dispatch
import PredicateSyntax
import QueryChecker
import QueryExecution
import QueryPlanner
import RecordModel

/// A query as CloudKit's `CKQuery` holds it: a record type, a predicate format string with its
/// arguments, and sort descriptors.
///
/// ```swift
/// let q = RecordQuery(recordType: "Place", predicate: "kind == %@ AND distanceToLocation:fromLocation:(location, %@) <
/// 5",
///                     arguments: ["cafe", .value(.location(here))],
///                     sortDescriptors: [.distance(field: "location", from: here)])
/// ```
public struct RecordQuery: Sendable, Hashable {
    /// The record type searched.
    public var recordType: String
    /// An NSPredicate format string; `TRUEPREDICATE` for every record.
    public var predicate: String
    /// Values for `%@ %K %d …`, in order.
    public var arguments: [PredicateArgument]
    /// Values for `$NAME` variables.
    public var variables: [String: PredicateArgument]
    /// The order of the results, most significant first; the record id breaks ties, and a
    /// query without sort descriptors is in record-id order.
    public var sortDescriptors: [SortDescriptor]

    /// A query of `recordType`; by default every record (`TRUEPREDICATE`), in record-id order.
    /// Nothing is checked here: `Database.records(matching:inZoneWith:desiredKeys:resultsLimit:)`
    /// checks the query against the schema (invalidArguments (12) for a predicate, argument or
    /// sort it rejects).
    public init(
        recordType: String, predicate: String = "TRUEPREDICATE", arguments: [PredicateArgument] = [],
        variables: [String: PredicateArgument] = [:], sortDescriptors: [SortDescriptor] = []
    ) {
        self.recordType = recordType
        self.predicate = predicate
        self.arguments = arguments
        self.variables = variables
        self.sortDescriptors = sortDescriptors
    }
}

/// `explain`: the plan with its estimates and actual rows, the plans rejected, the index options
/// the query needs, and the checker's warnings.
///
/// ```swift
/// let e = try await db.explain(RecordQuery(recordType: "Place", predicate: "kind == %@", arguments: ["cafe"]))
/// print(e.text)   // plan tree with estimated and actual rows, rejected plans, indexes (+ present, - missing)
/// ```
public struct QueryExplanation: Sendable {
    /// The plan chosen for the first page, with its estimates and the plans it beat (`rejected`),
    /// from the statistics of the snapshot the query ran on; nil when another engine planned it.
    public var plan: QueryPlan?
    /// The plan of an engine with its own planner (PostgreSQL: the statement, its parameters and
    /// `EXPLAIN`'s lines); empty for the embedded engine.
    public var enginePlan: [String] = []

    /// Those of `required` that `type`'s schema does not have (all of them without a schema).
    public static func missing(_ required: [IndexRequirement], in type: RecordTypeSchema?) -> [IndexRequirement] {
        required.filter { !has($0, type) }
    }

    package static func has(_ r: IndexRequirement, _ t: RecordTypeSchema?) -> Bool {
        guard let t else { return false }
        if let sys = SystemField.named(r.field) {
            return (t.systemFieldOptions[sys] ?? []).isSuperset(of: r.option)
        }
        if r.option == .searchable { return t.fields.values.contains { $0.options.contains(.searchable) } }
        return t.fields[r.field]?.options.isSuperset(of: r.option) ?? false
    }

    /// The embedded planner's explanation.
    package init(
        plan: QueryPlan, actual: [Int: Int], requiredIndexes: [IndexRequirement], missingIndexes: [IndexRequirement],
        warnings: [String], returned: Int?
    ) {
        self.plan = plan
        self.actual = actual
        self.requiredIndexes = requiredIndexes
        self.missingIndexes = missingIndexes
        self.warnings = warnings
        self.returned = returned
    }

    /// The explanation of an engine with its own planner: its plan's lines, the index options the
    /// query relies on, those the schema lacks, the checker's warnings, and the records the first
    /// page returned when it ran.
    public init(
        enginePlan: [String], requiredIndexes: [IndexRequirement], missingIndexes: [IndexRequirement],
        warnings: [String], returned: Int?
    ) {
        self.plan = nil
        self.actual = [:]
        self.enginePlan = enginePlan
        self.requiredIndexes = requiredIndexes
        self.missingIndexes = missingIndexes
        self.warnings = warnings
        self.returned = returned
    }
    /// Rows each plan node produced when the query was executed (empty otherwise).
    public var actual: [Int: Int]
    /// The index options the query relies on (what production requires).
    public var requiredIndexes: [IndexRequirement]
    /// Those of `requiredIndexes` the current schema does not have.
    public var missingIndexes: [IndexRequirement]
    /// The checker's warnings: what CloudKit may reject or treat differently (for example a
    /// Cirrus extension such as `BETWEEN` with dates).
    public var warnings: [String]
    /// Records the executed page returned (nil when not executed).
    public var returned: Int?

    /// The plan, the index options (`+` present, `-` missing in the current schema), warnings.
    public var text: String {
        var out = plan?.explain(actual: actual) ?? enginePlan.map { $0 + "\n" }.joined()
        if !requiredIndexes.isEmpty {
            out += "indexes:\n"
            for r in requiredIndexes {
                out += (missingIndexes.contains(r) ? "  - " : "  + ") + r.description + "\n"
            }
        }
        for w in warnings { out += "warning: \(w)\n" }
        return out
    }
}

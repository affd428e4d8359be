// QueryChecker: SyntaxTree + arguments (+ variables, schema) → checked predicate.
//
// Accepts exactly the CKQuery subset of CKQUERY.md §2 and normalizes it to the Web Services filter
// list: only AND combines predicates; each comparison becomes one filter (BETWEEN two); NOT flips
// a single comparison's comparator. Everything else is rejected with CloudKit's message where it
// has one, a hint, and the source range. Schema rules (fields, types, index options) are in
// SchemaRules.swift; comparison shapes in Comparisons.swift.

import PredicateSyntax
import RecordModel

/// The CKQuery checker.
///
/// ```swift
/// let tree = try PredicateParser.parse("kind == %@ AND population > 100000")
/// let checked = try QueryChecker.check(tree, context: CheckContext(arguments: ["city"]))
/// checked.predicate.filters  // [kind EQUALS "city", population GREATER_THAN 100000]
/// ```
public enum QueryChecker {
    /// Checks a parsed predicate and normalizes it to a filter list.
    ///
    /// Throws a ``PredicateError`` of kind `.unsupported` (outside the CKQuery subset),
    /// `.argument` (say, a placeholder without an argument, an argument of the wrong kind, a
    /// list over `maximumListCount`) or `.schema` (only with `context.schema` and
    /// `context.recordType`: say, an unknown type or field, a value of the wrong type, an index
    /// option production needs). Its range points into the text
    /// the tree was parsed from — at the operator, operand or modifier at fault; an `OR` error
    /// points at the keyword only when `context.source` holds that text, else at the whole OR.
    ///
    /// ```swift
    /// let tree = try PredicateParser.parse("kind == 'cafe' AND name BEGINSWITH %@")
    /// let checked = try QueryChecker.check(tree, context: CheckContext(arguments: ["Caf"]))
    /// ```
    public static func check(
        _ tree: Predicate, context: CheckContext = CheckContext()
    ) throws(PredicateError) -> CheckedPredicate {
        var checker = Checker(context: context)
        return try checker.run(tree)
    }

    /// Checks a parsed predicate and the query's sort descriptors: `check(_:context:)` then
    /// ``checkSort(_:context:)``, with one checker that takes the context over (not copied, nor
    /// the type's schema looked up twice).
    ///
    /// ```swift
    /// let tree = try PredicateParser.parse("kind == %@")
    /// let checked = try QueryChecker.check(
    ///     tree, sorts: [.field("population", ascending: false)],
    ///     context: CheckContext(arguments: ["cafe"], schema: schema, recordType: "Place"))
    /// ```
    public static func check(
        _ tree: Predicate, sorts: [SortDescriptor], context: consuming CheckContext
    ) throws(PredicateError) -> CheckedPredicate {
        var checker = Checker(context: consume context)
        let checked = try checker.run(tree)
        if !sorts.isEmpty { try checker.checkSort(sorts) }
        return checked
    }
}

/// One run of the checker over one tree.
struct Checker {
    let context: CheckContext
    var warnings: [CheckWarning] = []
    var filters: [QueryFilter] = []
    var matchesNothing = false
    /// The record type's schema when schema checks apply.
    let typeSchema: RecordTypeSchema?
    /// Notes what a ``CheckedShape`` needs, when one is asked for (`checkShaped`).
    let recorder: ShapeRecorder?

    init(context: consuming CheckContext, recorder: ShapeRecorder? = nil) {
        self.recorder = recorder
        if let schema = context.schema, let t = context.recordType {
            typeSchema = schema.recordTypes[t]
        } else {
            typeSchema = nil
        }
        // The context's last use: moved in, not copied (five references retained and released).
        self.context = context
    }

    mutating func run(_ tree: Predicate) throws(PredicateError) -> CheckedPredicate {
        try checkRecordType(tree.range)
        switch tree.kind {
        case .truePredicate:
            try requireListable(tree.range)
            return CheckedPredicate(predicate: .all, warnings: warnings)
        case .falsePredicate:
            warnings.append(
                CheckWarning(
                    "FALSEPREDICATE is documented by CloudKit but rejected by its validator; this query is not "
                        + "portable to CloudKit",
                    range: tree.range))
            return CheckedPredicate(predicate: .none, warnings: warnings)
        default:
            try conjunct(tree, topLevel: true)
        }
        if matchesNothing { return CheckedPredicate(predicate: .none, warnings: warnings) }
        if filters.isEmpty {
            try requireListable(tree.range)
            return CheckedPredicate(predicate: .all, warnings: warnings)
        }
        return CheckedPredicate(predicate: .filters(filters), warnings: warnings)
    }

    /// One operand of the top-level AND chain.
    private mutating func conjunct(_ p: Predicate, topLevel: Bool) throws(PredicateError) {
        switch p.kind {
        case .and(let a, let b):
            try conjunct(a, topLevel: false)
            try conjunct(b, topLevel: false)
        case .or(let a, let b):
            throw PredicateError(
                .unsupported, "OR predicates are not supported",
                hint:
                    "CloudKit combines conditions only with AND: for alternatives of one field use IN (k IN {a, b}); "
                    + "otherwise run one query per alternative",
                range: operatorRange(between: a.range, and: b.range) ?? p.range)
        case .truePredicate:
            warnings.append(
                CheckWarning("TRUEPREDICATE inside AND has no effect and may be rejected by CloudKit", range: p.range))
        case .falsePredicate:
            warnings.append(
                CheckWarning(
                    "FALSEPREDICATE is documented by CloudKit but rejected by its validator; this query is not "
                        + "portable to CloudKit",
                    range: p.range))
            matchesNothing = true
        case .not(let inner):
            try negation(inner, whole: p)
        case .comparison(let c):
            try comparison(c, whole: p.range, negated: false)
        }
    }

    /// `NOT p`: only a single comparison with a negatable comparator.
    private mutating func negation(_ inner: Predicate, whole: Predicate) throws(PredicateError) {
        guard case .comparison(let c) = inner.kind else {
            let hint: String
            switch inner.kind {
            case .and:
                hint = "NOT applies to a single comparison; NOT over AND would need OR, which CloudKit does not support"
            case .or: hint = "NOT applies to a single comparison, and CloudKit does not support OR"
            case .not: hint = "remove the double negation"
            default: hint = "NOT applies to a single comparison"
            }
            throw PredicateError(.unsupported, "Invalid NOT predicate", hint: hint, range: whole.range)
        }
        if c.op == .between {
            throw PredicateError(
                .unsupported, "Invalid NOT predicate",
                hint: "NOT BETWEEN would need OR; write the two sides as separate queries (k < lo, k > hi)",
                range: whole.range)
        }
        let before = filters.count
        try comparison(c, whole: inner.range, negated: true)
        guard filters.count == before + 1 else { return }  // parent/share nil checks add no filter
        let f = filters[before]
        guard let flipped = f.comparator.negated else {
            let hint =
                f.comparator == .near
                ? "CloudKit can only search inside a circle: distanceToLocation:fromLocation:(k, %@) < r"
                : "a text search cannot be negated"
            throw PredicateError(.unsupported, "Invalid NOT predicate", hint: hint, range: whole.range)
        }
        filters[before].comparator = flipped
    }

    /// The range of the keyword between two operands (`OR`, `||`), found in the source text.
    func operatorRange(between a: SourceRange, and b: SourceRange) -> SourceRange? {
        guard let source = context.source, a != .none, b != .none else { return nil }
        let bytes = Array(source.utf8)
        guard a.end <= b.start, b.start <= bytes.count else { return nil }
        var start = a.end
        var end = b.start
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 || bytes[start] == 0x0A || bytes[start] == 0x0D
        { start += 1 }
        while end > start,
            bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 || bytes[end - 1] == 0x0A || bytes[end - 1] == 0x0D
        { end -= 1 }
        return start < end ? SourceRange(start, end) : nil
    }

    mutating func warn(_ message: String, _ range: SourceRange) {
        warnings.append(CheckWarning(message, range: range))
    }
}

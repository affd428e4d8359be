// CheckedShape: a predicate checked once for one shape of arguments, bound again to new values.
//
// Applications send the same format strings with new arguments (`kind == %@ AND population > %@`),
// as SQLite applications bind new values to a prepared statement. Everything the checker decides
// about such a query — which comparisons CloudKit accepts, which filter each becomes, the fields'
// types and index options — depends on the tree, the schema and the arguments' types; only the
// filters' values, and a few checks of them, depend on the arguments' values. A run of the
// checker that records where each filter's value came from (a `ShapeRecorder`) yields a shape:
// the filters as they were added, and for each whether its value is fixed by the text, is
// argument i itself, or is a distance search built from arguments. Binding new arguments to the
// shape puts the new values in those filters — a scalar of the shape's type meets the schema's
// type and index rules as the first one did; a list goes through `Checker.add` again, element by
// element —, repeats every check of a value (`checkedArgumentValue`, a text search's words, a
// radius, a centre) and of the sort descriptors, and skips the walk of the tree.
//
// What is never shaped: a predicate whose arguments reach a filter any other way (inside an
// aggregate other than BETWEEN's `{lo, hi}`, negated, converted by `%f`, split by `BETWEEN %@`,
// as a key by `%K`, through `tokenize`), `$variables`, `now()`, and any check that warned.
// Binding gives up (nil) rather than report an error: the caller then checks the query in
// full, which says what and where.
// Shapes are kept by argument types, never by argument values.

import PredicateSyntax
import RecordModel

/// The types of a query's arguments, in order: what a ``CheckedShape`` was made for.
public struct ArgumentShape: Sendable, Hashable {
    let kinds: [UInt8]

    /// The shape of `arguments`: for each, a key or a value's type (a list's own, not its elements').
    public init(_ arguments: [PredicateArgument]) {
        kinds = arguments.map {
            switch $0 {
            case .key: 0
            case .value(let v): ArgumentShape.kind(v)
            }
        }
    }

    static func kind(_ v: FieldValue) -> UInt8 {
        switch v {
        case .string: 1
        case .int64: 2
        case .double: 3
        case .date: 4
        case .bytes: 5
        case .location: 6
        case .reference: 7
        case .asset: 8
        case .list: 9
        }
    }

    /// `a` and `b` are the same value of the same type: `int64(5)` is not `double(5)`, as
    /// `FieldValue`'s `==` (CloudKit's number equality) says.
    static func identical(_ a: FieldValue, _ b: FieldValue) -> Bool {
        guard kind(a) == kind(b) else { return false }
        if case .list(let x) = a, case .list(let y) = b {
            return x.count == y.count && zip(x, y).allSatisfy { identical($0, $1) }
        }
        return a == b
    }
}

/// A predicate checked for one ``ArgumentShape`` (and the schema it was checked against), whose
/// filters take their values from new arguments without checking the tree again.
///
/// ```swift
/// let tree = try PredicateParser.parse("kind == %@ AND population > %@")
/// let context = CheckContext(arguments: [.value(.string("cafe")), .value(.int64(100))], schema: schema,
///                            recordType: "Place")
/// let (checked, shape) = try QueryChecker.checkShaped(tree, sorts: [], context: context)
/// var next = context
/// next.arguments = [.value(.string("museum")), .value(.int64(5000))]
/// shape?.bind(sorts: [], context: next)  // the same as checking again with these arguments
/// ```
public struct CheckedShape: Sendable {
    /// The shape's parts, shared by its copies (a cache hands out one copy per query).
    struct Storage: Sendable {
        /// What the full check returned: its predicate's kind (all, none, filters) is kept.
        let predicate: QueryPredicate
        /// The filters in the order they were added, before a NOT flipped their comparator.
        let added: [QueryFilter]
        /// Each filter's comparator in the result (a NOT flips it after the filter was added).
        let comparators: [Comparator]
        /// Where each added filter's value comes from.
        let sources: [ValueSource]
        /// The sort descriptors checked with the predicate, without a distance's centre.
        let sorts: [SortShape]
    }

    /// A sort descriptor as its check sees it, but for a distance's centre (a value, checked at
    /// every bind): the field, and its direction or that it is by distance.
    enum SortShape: Hashable, Sendable {
        case field(String, ascending: Bool)
        case distance(String)

        init(_ s: SortDescriptor) {
            switch s {
            case .field(let name, let ascending): self = .field(name, ascending: ascending)
            case .distance(let name, _): self = .distance(name)
            }
        }
    }

    let storage: CopyOnWrite<Storage>

    /// Where a filter's value comes from.
    enum ValueSource: Sendable {
        /// The text itself (a literal): the added filter is kept as it is.
        case fixed
        /// Argument i, unchanged.
        case argument(Int)
        /// A distance search: its centre and radius each from an argument, or as added.
        case near(center: Int?, radius: Int?)
    }

    /// The checked predicate for `context.arguments` (of the ``ArgumentShape`` this shape was
    /// made for), with `sorts` checked as ``QueryChecker/checkSort(_:context:)`` does; nil when a
    /// value or a sort descriptor fails a check — check the query in full then, for its error.
    ///
    /// A scalar argument of the shape's type meets the schema's rules as the one the shape was
    /// made with did (they look at its type: `Checker.add`), so only its value is checked here;
    /// a list's elements each have their own type, so a list goes through `Checker.add` again.
    /// Sort descriptors like those the shape was checked with (fields, directions) need only
    /// their distance centres checked; others are checked in full.
    ///
    /// The arguments' types are not checked here: keep shapes by ``ArgumentShape`` and bind
    /// only arguments of the shape's own (as the container's predicate cache does). Arguments
    /// of other types may bind to filters the full check would not give them.
    public func bind(sorts: [SortDescriptor], context: consuming CheckContext) -> CheckedPredicate? {
        let s = storage
        let arguments = context.arguments
        var filters: [QueryFilter] = []
        filters.reserveCapacity(s.contents.added.count)
        var lists = false
        for k in s.contents.added.indices {
            var f = s.contents.added[k]
            switch s.contents.sources[k] {
            case .fixed: break
            case .argument(let i):
                guard i < arguments.count, case .value(let v) = arguments[i] else { return nil }
                switch v {
                case .double(let d) where !d.isFinite: return nil
                case .string(let words) where f.comparator.isTokenSearch:
                    guard words.contains(where: { $0.isLetter || $0.isNumber }) else { return nil }
                case .list: lists = true
                case .asset: return nil
                default: break
                }
                f.fieldValue = v
            case .near(let c, let r):
                if let c {
                    guard c < arguments.count, case .value(.location(let center)) = arguments[c],
                        center.hasValidCoordinates
                    else { return nil }
                    f.fieldValue = .location(center)
                }
                if let r {
                    guard r < arguments.count, case .value(let radius) = arguments[r],
                        let km = Checker.kilometres(radius)
                    else { return nil }
                    f.distance = Checker.metres(km)
                }
            }
            filters.append(f)
        }
        var sortsChecked = sorts.count == s.contents.sorts.count
        for (k, sort) in sorts.enumerated() where sortsChecked {
            sortsChecked = SortShape(sort) == s.contents.sorts[k]
            if case .distance(_, let from) = sort, !from.hasValidCoordinates { return nil }
        }
        if lists || !sortsChecked {
            var checker = Checker(context: context)
            for k in filters.indices where filters[k].fieldValue.isList {
                guard case .argument = s.contents.sources[k] else { continue }
                guard (try? checker.checkedArgumentValue(filters[k].fieldValue, .none)) != nil,
                    (try? checker.add(filters[k], fieldRange: .none, valueRange: .none)) != nil
                else { return nil }
            }
            if !checker.warnings.isEmpty { return nil }
            if !sortsChecked, (try? checker.checkSort(sorts)) == nil { return nil }
        }
        guard case .filters = s.contents.predicate else {
            return CheckedPredicate(predicate: s.contents.predicate, warnings: [])
        }
        for k in filters.indices { filters[k].comparator = s.contents.comparators[k] }
        return CheckedPredicate(predicate: .filters(filters), warnings: [])
    }
}

/// What a run of the checker notes to make a ``CheckedShape``: the placeholders it resolved,
/// which filter took each one's value, and whether anything else made the result depend on an
/// argument's value. A reference type, so that the checker's non-mutating resolution of terms
/// can note into it.
final class ShapeRecorder {
    /// Each placeholder resolved: its expression's range, its argument, whether a filter took
    /// that argument's value unchanged.
    var placeholders: [(range: SourceRange, index: Int, taken: Bool)] = []
    /// Distance calls and the range of their centre's expression.
    var centers: [(call: SourceRange, center: SourceRange)] = []
    /// Set when the result depends on something a shape cannot bind ($variables, now()).
    var unshapeable = false
    var added: [QueryFilter] = []
    var sources: [CheckedShape.ValueSource] = []

    /// The argument resolved at exactly `range` whose value `value` is, unchanged; marked taken.
    func take(_ range: SourceRange, _ value: FieldValue, _ arguments: [PredicateArgument]) -> Int? {
        guard range != .none, let k = placeholders.firstIndex(where: { $0.range == range }) else { return nil }
        let i = placeholders[k].index
        guard !placeholders[k].taken, i < arguments.count, case .value(let v) = arguments[i],
            ArgumentShape.identical(v, value)
        else { return nil }
        placeholders[k].taken = true
        return i
    }

    /// The shape of `checked`, when every argument went into a filter unchanged and nothing
    /// else depends on a value.
    func shape(of checked: CheckedPredicate, filters: [QueryFilter], sorts: [SortDescriptor]) -> CheckedShape? {
        guard !unshapeable, checked.warnings.isEmpty, placeholders.allSatisfy(\.taken),
            added.count == filters.count
        else { return nil }
        return CheckedShape(
            storage: CopyOnWrite(
                CheckedShape.Storage(
                    predicate: checked.predicate, added: added, comparators: filters.map(\.comparator),
                    sources: sources, sorts: sorts.map(CheckedShape.SortShape.init))))
    }
}

extension QueryChecker {
    /// ``check(_:sorts:context:)``, and the shape of the query when its arguments only supply
    /// filters' values (nil otherwise): ``CheckedShape/bind(sorts:context:)`` then checks the same
    /// text against the same schema with new arguments of the same ``ArgumentShape``.
    public static func checkShaped(
        _ tree: Predicate, sorts: [SortDescriptor], context: consuming CheckContext
    ) throws(PredicateError) -> (CheckedPredicate, CheckedShape?) {
        let recorder = ShapeRecorder()
        var checker = Checker(context: consume context, recorder: recorder)
        let checked = try checker.run(tree)
        if !sorts.isEmpty { try checker.checkSort(sorts) }
        return (checked, recorder.shape(of: checked, filters: checker.filters, sorts: sorts))
    }
}

extension Checker {
    /// A radius value in kilometres: a finite, non-negative number; nil otherwise.
    static func kilometres(_ radius: FieldValue) -> Double? {
        let km: Double
        switch radius {
        case .int64(let i): km = Double(i)
        case .double(let d): km = d
        default: return nil
        }
        return km.isFinite && km >= 0 ? km : nil
    }

    /// A distance filter's metres: rounded to the micrometre so that km → m → km → m is exact.
    static func metres(_ km: Double) -> Double { (km * 1_000_000_000).rounded() / 1_000_000 }
}

// IndexStatistics: all the planner knows about data — which indexes exist and how many entries
// a key range, a set of keys, a prefix, some words or a circle hold.
//
// The planner never touches index structures; it asks this protocol, so it can be tested with
// a table of made-up counts (`StaticStatistics`). The database's adapter answers range, IN and
// prefix counts exactly from the B+tree's subtree counts, words from posting lengths, circles
// by estimate.

import RecordModel

/// One end of a key range.
public struct KeyBound: Sendable, Hashable {
    /// The bound's value.
    public var value: FieldValue
    /// Whether the value itself is in the range.
    public var inclusive: Bool

    /// A bound at `value`, inclusive or not.
    public init(_ value: FieldValue, inclusive: Bool) {
        self.value = value
        self.inclusive = inclusive
    }
}

/// A range of index keys; a missing bound is unbounded.
///
/// ```swift
/// let teens = KeyRange(lower: KeyBound(.int64(13), inclusive: true), upper: KeyBound(.int64(20), inclusive: false))
/// teens.description                              // "[13, 20)"
/// teens.intersected(with: .point(.int64(15))).isPoint   // true
/// KeyRange.point(.int64(20)).intersected(with: teens).isEmpty   // true
/// ```
public struct KeyRange: Sendable, Hashable, CustomStringConvertible {
    /// The lower end; nil for unbounded.
    public var lower: KeyBound?
    /// The upper end; nil for unbounded.
    public var upper: KeyBound?

    /// A range from its ends (both unbounded by default).
    public init(lower: KeyBound? = nil, upper: KeyBound? = nil) {
        self.lower = lower
        self.upper = upper
    }

    /// Every key.
    public static let all = KeyRange()

    /// The single key `v`.
    public static func point(_ v: FieldValue) -> KeyRange {
        KeyRange(lower: KeyBound(v, inclusive: true), upper: KeyBound(v, inclusive: true))
    }

    /// Whether the range holds exactly one key.
    public var isPoint: Bool {
        guard let l = lower, let u = upper else { return false }
        return l.inclusive && u.inclusive && FieldValue.compare(l.value, u.value) == 0
    }

    /// Whether no key can lie in the range.
    public var isEmpty: Bool {
        // The bounds are read in place (no copy of either bound's value, as `if let` makes).
        guard lower != nil, upper != nil else { return false }
        let c = FieldValue.compare(lower!.value, upper!.value)
        return c > 0 || (c == 0 && !(lower!.inclusive && upper!.inclusive))
    }

    /// The range narrowed by another (the intersection).
    public func intersected(with o: KeyRange) -> KeyRange {
        func tighterLower(_ a: KeyBound?, _ b: KeyBound?) -> KeyBound? {
            guard let a else { return b }
            guard let b else { return a }
            let c = FieldValue.compare(a.value, b.value)
            return c > 0 || (c == 0 && !a.inclusive) ? a : b
        }
        func tighterUpper(_ a: KeyBound?, _ b: KeyBound?) -> KeyBound? {
            guard let a else { return b }
            guard let b else { return a }
            let c = FieldValue.compare(a.value, b.value)
            return c < 0 || (c == 0 && !a.inclusive) ? a : b
        }
        return KeyRange(lower: tighterLower(lower, o.lower), upper: tighterUpper(upper, o.upper))
    }

    /// `= "cafe"`, `> 5000`, `[1, 10)`, `all`.
    public var description: String {
        if isPoint, let l = lower { return "= \(l.value)" }
        switch (lower, upper) {
        case (nil, nil): return "all"
        case (let l?, nil): return (l.inclusive ? ">= " : "> ") + l.value.description
        case (nil, let u?): return (u.inclusive ? "<= " : "< ") + u.value.description
        case (let l?, let u?): return (l.inclusive ? "[" : "(") + "\(l.value), \(u.value)" + (u.inclusive ? "]" : ")")
        }
    }
}

/// What the planner may ask about the data of one record type.
public protocol IndexStatistics: Sendable {
    /// Live records of the type.
    var rowCount: Int { get }
    /// The declared (or automatic) type of a field, when known.
    func fieldType(_ field: String) -> FieldType?
    /// Whether an ordered index exists on the field (user field or system field query name).
    func hasOrderedIndex(_ field: String) -> Bool
    /// Whether a spatial index exists on the Location field.
    func hasSpatialIndex(_ field: String) -> Bool
    /// Whether the type has a text index.
    var hasTextIndex: Bool { get }
    /// Index entries in a key range (exact).
    func count(_ field: String, in range: KeyRange) -> Int
    /// Index entries equal to any of the values (exact).
    func count(_ field: String, equalToAnyOf values: [FieldValue]) -> Int
    /// Index entries beginning with a string or bytes prefix (exact).
    func count(_ field: String, beginningWith prefix: FieldValue) -> Int
    /// Records matching the words: an upper bound from posting lengths.
    func estimatedTextCount(_ words: String, all: Bool) -> Int
    /// Records of the Location field inside the circle (estimate).
    func estimatedRadiusCount(_ field: String, center: Location, km: Double) -> Int
    /// The share of the rows (0–1) whose values of this user field are read from columns, not
    /// from the rows' bytes (see `Cost.columnRow`); 0 when the field has no column. The planner
    /// takes the least of several fields' shares as the share of rows read all from columns.
    func columnShare(_ field: String) -> Double
    /// Of the rows whose `field` lies in `range`, the share (0–1) whose user field `other` lies
    /// in `otherRange`, read from a sample of them (all of them when few); nil when not measured
    /// (no index on `field`, more rows than a sample is taken from cheaply, or no way to read
    /// values). The planner's estimate of a conjunction of correlated fields (a region code and
    /// its country), where multiplying the filters' selectivities as if independent fails.
    func sampledShare(_ field: String, in range: KeyRange, other: String, in otherRange: KeyRange) -> Double?
}

extension IndexStatistics {
    /// No columns: every value is read from its row.
    public func columnShare(_ field: String) -> Double { 0 }

    /// Not measured: the filters are taken as independent.
    public func sampledShare(_ field: String, in range: KeyRange, other: String, in otherRange: KeyRange) -> Double? {
        nil
    }
}

extension KeyRange {
    /// Whether `v` lies in the range (by `FieldValue.compare`, the indexes' order).
    public func contains(_ v: FieldValue) -> Bool {
        if let l = lower {
            let c = FieldValue.compare(v, l.value)
            if c < 0 || (c == 0 && !l.inclusive) { return false }
        }
        if let u = upper {
            let c = FieldValue.compare(v, u.value)
            if c > 0 || (c == 0 && !u.inclusive) { return false }
        }
        return true
    }
}

/// Statistics from a table, for tests and for planning without data.
public struct StaticStatistics: IndexStatistics {
    /// Live records of the type.
    public var rowCount: Int
    /// Declared field types; system fields are known without an entry.
    public var fieldTypes: [String: FieldType]
    /// The fields with an ordered index, each with the count it gives for a key range.
    public var ordered: [String: @Sendable (KeyRange) -> Int]
    /// The fields with a spatial index, each with the count every circle query gets.
    public var spatial: [String: Int]
    /// The text index's count for some words (`true`: ALL of them); nil when the type has no text index.
    public var text: (@Sendable (String, Bool) -> Int)?

    /// Statistics from tables; every table defaults to empty (no index).
    public init(
        rowCount: Int, fieldTypes: [String: FieldType] = [:], ordered: [String: @Sendable (KeyRange) -> Int] = [:],
        spatial: [String: Int] = [:], text: (@Sendable (String, Bool) -> Int)? = nil
    ) {
        self.rowCount = rowCount
        self.fieldTypes = fieldTypes
        self.ordered = ordered
        self.spatial = spatial
        self.text = text
    }

    /// The entry in `fieldTypes`, or a system field's type.
    public func fieldType(_ field: String) -> FieldType? {
        fieldTypes[field] ?? SystemField.named(field)?.fieldType
    }
    /// Whether `ordered` has the field.
    public func hasOrderedIndex(_ field: String) -> Bool { ordered[field] != nil }
    /// Whether `spatial` has the field.
    public func hasSpatialIndex(_ field: String) -> Bool { spatial[field] != nil }
    /// Whether `text` is set.
    public var hasTextIndex: Bool { text != nil }
    /// `ordered[field]` applied to the range; 0 without an index.
    public func count(_ field: String, in range: KeyRange) -> Int { ordered[field]?(range) ?? 0 }
    /// The sum of the point counts of the distinct values.
    public func count(_ field: String, equalToAnyOf values: [FieldValue]) -> Int {
        Set(values).reduce(0) { $0 + count(field, in: .point($1)) }
    }
    /// The count of every key at or after the prefix (an upper bound: the range is not closed above).
    public func count(_ field: String, beginningWith prefix: FieldValue) -> Int {
        ordered[field]?(KeyRange(lower: KeyBound(prefix, inclusive: true))) ?? 0
    }
    /// `text` applied to the words; 0 without a text index.
    public func estimatedTextCount(_ words: String, all: Bool) -> Int { text?(words, all) ?? 0 }
    /// A fixed count per field, whatever the circle (tests set what they need).
    public func estimatedRadiusCount(_ field: String, center: Location, km: Double) -> Int { spatial[field] ?? 0 }
}

// RecordFields: a record's user fields — name/value pairs in one array, sorted by name.
//
// A record read for a query result used to fill a hashed dictionary: one more allocation, a
// hash of every name on the way in, and a dictionary's teardown on the way out — a fifth of the
// time of an all-matches query. Records hold a dozen fields or so; one array sorted by name is
// one allocation, is filled in order by the codec (which writes fields in this order), finds a
// field by binary search, and iterates deterministically. It reads like a dictionary (subscript
// by name, `keys`, `values`, `merging`, `filter`), so code written for `[String: FieldValue]`
// reads it unchanged. Names are ordered and compared as Swift strings (`<`, `==`).

/// A record's user fields: name/value pairs, unique by name, in ascending name order.
///
/// ```swift
/// var fields: RecordFields = ["title": "Groceries", "count": 3]
/// fields["done"] = false
/// for (name, value) in fields { print(name, value) }   // count, done, title
/// ```
public struct RecordFields: Sendable, Hashable, RandomAccessCollection, ExpressibleByDictionaryLiteral,
    CustomStringConvertible
{
    /// A name and its value (labelled as a dictionary's elements are).
    public typealias Element = (key: String, value: FieldValue)

    /// A name and its value as stored: a struct, whose name a lookup reads in place (a tuple
    /// element was copied whole — value and all — to read its name).
    public struct Field: Sendable {
        /// The field's name.
        public var name: String
        /// The field's value.
        public var value: FieldValue

        /// The field `name` holding `value`.
        @inlinable public init(_ name: String, _ value: FieldValue) {
            self.name = name
            self.value = value
        }
    }

    /// The fields, sorted by name, names unique.
    @usableFromInline var entries: [Field]

    /// No fields.
    @inlinable public init() { entries = [] }

    /// The fields of a dictionary.
    public init(_ dictionary: [String: FieldValue]) {
        entries = dictionary.map { Field($0.key, $0.value) }
        entries.sort { $0.name < $1.name }
    }

    /// The fields of a sequence of pairs; when a name repeats, the last value wins.
    public init<S: Sequence>(_ pairs: S) where S.Element == (String, FieldValue) {
        entries = pairs.map { Field($0.0, $0.1) }
        Self.normalize(&entries)
    }

    /// Fields from a literal; when a name repeats, the last value wins.
    public init(dictionaryLiteral elements: (String, FieldValue)...) { self.init(elements) }

    /// Fields known to be sorted by name with unique names — not checked; lookups bisect them,
    /// so a caller that cannot prove the order uses ``init(collecting:)``. (The codec proves it
    /// when every name of a row is one of its segment's names, in their order.)
    public init(sortedUnique entries: [Field]) { self.entries = entries }

    /// Fields read in order (as the codec writes them: sorted, unique) — checked, and sorted and
    /// made unique (the last value of a name wins) when they are not.
    public init(collecting entries: [Field]) {
        self.entries = entries
        // Through the buffer: the names are compared where they lie, not copied out.
        let sorted = entries.withUnsafeBufferPointer { b in
            var i = 1
            while i < b.count {
                if !(b[i - 1].name < b[i].name) { return false }
                i += 1
            }
            return true
        }
        if !sorted { Self.normalize(&self.entries) }
    }

    /// Sorts by name, keeping the last of equal names.
    private static func normalize(_ entries: inout [Field]) {
        // A stable sort keeps equal names in their order; the last of each run is kept.
        let sorted = entries.enumerated().sorted {
            $0.element.name < $1.element.name || ($0.element.name == $1.element.name && $0.offset < $1.offset)
        }
        var out: [Field] = []
        out.reserveCapacity(sorted.count)
        for (_, e) in sorted {
            if let last = out.last, last.name == e.name { out[out.count - 1] = e } else { out.append(e) }
        }
        entries = out
    }

    // MARK: collection

    /// The first position: 0.
    @inlinable public var startIndex: Int { 0 }
    /// One past the last position: the field count.
    @inlinable public var endIndex: Int { entries.count }
    /// The pair at `position`, in name order.
    @inlinable public subscript(position: Int) -> Element {
        let f = entries[position]
        return (key: f.name, value: f.value)
    }

    /// The field names, ascending.
    @inlinable public var keys: LazyMapCollection<[Field], String> { entries.lazy.map(\.name) }
    /// The values, in the order of their names.
    @inlinable public var values: LazyMapCollection<[Field], FieldValue> { entries.lazy.map(\.value) }

    /// The fields as a dictionary.
    public var dictionary: [String: FieldValue] {
        Dictionary(uniqueKeysWithValues: entries.lazy.map { ($0.name, $0.value) })
    }

    // MARK: by name

    /// The position of `name`, or where it would be inserted (and false).
    /// (Through the buffer: a name is compared where it lies, without copying its pair.)
    @inlinable
    func search(_ name: String) -> (index: Int, found: Bool) {
        entries.withUnsafeBufferPointer { b in
            var lo = 0
            var hi = b.count
            while lo < hi {
                let mid = (lo + hi) >> 1
                if b[mid].name == name { return (mid, true) }
                if b[mid].name < name { lo = mid + 1 } else { hi = mid }
            }
            return (lo, false)
        }
    }

    /// The position of the field `name`, nil when absent.
    @inlinable public func index(forKey name: String) -> Int? {
        let (i, found) = search(name)
        return found ? i : nil
    }

    /// The value of the field `name` (nil: absent); assigning nil removes the field.
    @inlinable public subscript(name: String) -> FieldValue? {
        get {
            let (i, found) = search(name)
            return found ? entries[i].value : nil
        }
        set {
            let (i, found) = search(name)
            switch (found, newValue) {
            case (true, let v?): entries[i].value = v
            case (true, nil): entries.remove(at: i)
            case (false, let v?): entries.insert(Field(name, v), at: i)
            case (false, nil): break
            }
        }
    }

    /// Sets the field `name`, returning its previous value.
    @discardableResult
    public mutating func updateValue(_ value: FieldValue, forKey name: String) -> FieldValue? {
        let old = self[name]
        self[name] = value
        return old
    }

    /// Removes the field `name`, returning its value.
    @discardableResult
    public mutating func removeValue(forKey name: String) -> FieldValue? {
        let (i, found) = search(name)
        return found ? entries.remove(at: i).value : nil
    }

    /// These fields and `other`'s; for a name in both, `combine(mine, theirs)` decides.
    public func merging(
        _ other: RecordFields, uniquingKeysWith combine: (FieldValue, FieldValue) throws -> FieldValue
    ) rethrows -> RecordFields {
        var out: [Field] = []
        out.reserveCapacity(entries.count + other.entries.count)
        var i = 0
        var j = 0
        while i < entries.count, j < other.entries.count {
            let a = entries[i]
            let b = other.entries[j]
            if a.name == b.name {
                out.append(Field(a.name, try combine(a.value, b.value)))
                i += 1
                j += 1
            } else if a.name < b.name {
                out.append(a)
                i += 1
            } else {
                out.append(b)
                j += 1
            }
        }
        out.append(contentsOf: entries[i...])
        out.append(contentsOf: other.entries[j...])
        var r = RecordFields()
        r.entries = out
        return r
    }

    /// The fields `isIncluded` keeps.
    public func filter(_ isIncluded: (Element) throws -> Bool) rethrows -> RecordFields {
        var r = RecordFields()
        r.entries = try entries.filter { try isIncluded((key: $0.name, value: $0.value)) }
        return r
    }

    /// The same names with transformed values.
    public func mapValues(_ transform: (FieldValue) throws -> FieldValue) rethrows -> RecordFields {
        var r = RecordFields()
        r.entries = try entries.map { Field($0.name, try transform($0.value)) }
        return r
    }

    // MARK: equality, description

    /// Whether both hold the same names with equal values.
    public static func == (a: RecordFields, b: RecordFields) -> Bool {
        a.entries.count == b.entries.count
            && zip(a.entries, b.entries).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    /// Hashes the names and values in order.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(entries.count)
        for e in entries {
            hasher.combine(e.name)
            hasher.combine(e.value)
        }
    }

    /// `["name": value, …]`, as a dictionary prints.
    public var description: String {
        entries.isEmpty ? "[:]" : "[" + entries.map { "\"\($0.name)\": \($0.value)" }.joined(separator: ", ") + "]"
    }
}

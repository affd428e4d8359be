// RecordFields: a record's user fields — name/value pairs in one array, sorted by name.
//
// A record read for a query result used to fill a hashed dictionary: one more allocation, a
// hash of every name on the way in, and a dictionary's teardown on the way out — a fifth of the
// time of an all-matches query. Records hold a dozen fields or so; one array sorted by name is
// one allocation, is filled in order by the codec (which writes fields in this order), finds a
// field by binary search, and iterates deterministically. It reads like a dictionary (subscript
// by name, `keys`, `values`, `merging`, `filter`), so code written for `[String: FieldValue]`
// reads it unchanged. Names are ordered and compared as Swift strings (`<`, `==`).
//
// Fields a query returns may be held encoded (EncodedFields.swift): the store's bytes, a field
// decoded when read by name, all of them once when iterated, compared or written. The cost
// model: `count`, `keeping` and the first read by name never decode the others; a second read
// by name, iteration, `keys`, `values`, equality, hashing and any write decode them all, once
// per record. Held encoded, a record read from a data segment holds no copy: it keeps the
// segment mapped while it lives.

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

    /// Where the fields are: decoded, or as the store wrote them (``EncodedFields``, decoded
    /// when read).
    @usableFromInline enum Storage: Sendable {
        case decoded([Field])
        case encoded(EncodedFields)
    }

    @usableFromInline var storage: Storage

    /// The fields, sorted by name, names unique — decoded (once) when they were encoded; a write
    /// leaves them decoded.
    @usableFromInline var entries: [Field] {
        get {
            switch storage {
            case .decoded(let e): return e
            case .encoded(let f): return f.fields
            }
        }
        set { storage = .decoded(newValue) }
        _modify {
            var e = entries
            storage = .decoded([])  // our reference released: `e` is unique when nothing else shares it
            defer { storage = .decoded(e) }
            yield &e
        }
    }

    /// No fields.
    @inlinable public init() { storage = .decoded([]) }

    /// Fields held as the store wrote them: `bytes` must be well formed, with `count` fields whose
    /// names are ASCII, strictly ascending and unique (``EncodedFields``; the codec checks this
    /// before it calls). Read by name, a field is decoded alone; iterated, all are decoded once.
    package init(encoded bytes: [UInt8], count: Int, decoder: any FieldDecoding) {
        storage = .encoded(EncodedFields(bytes: .copied(bytes), count: count, decoder: decoder))
    }

    /// Fields held in place: `bytes` lie in memory that `owner` keeps valid and unchanged while
    /// it lives (a mapped data segment), and meet the same invariants. Nothing is copied.
    package init(
        encodedIn bytes: UnsafeRawBufferPointer, owner: any AnyObject & Sendable, count: Int,
        decoder: any FieldDecoding
    ) {
        storage = .encoded(EncodedFields(bytes: .inside(owner: owner, bytes: bytes), count: count, decoder: decoder))
    }

    /// Whether the fields are still held encoded (nothing has needed them all yet, and nothing
    /// wrote them). For tests and cost accounting.
    package var isEncoded: Bool {
        if case .encoded = storage { return true }
        return false
    }

    /// The fields of a dictionary.
    public init(_ dictionary: [String: FieldValue]) {
        storage = .decoded(dictionary.map { Field($0.key, $0.value) }.sorted { $0.name < $1.name })
    }

    /// The fields of a sequence of pairs; when a name repeats, the last value wins.
    public init<S: Sequence>(_ pairs: S) where S.Element == (String, FieldValue) {
        var entries = pairs.map { Field($0.0, $0.1) }
        Self.normalize(&entries)
        storage = .decoded(entries)
    }

    /// Fields from a literal; when a name repeats, the last value wins.
    public init(dictionaryLiteral elements: (String, FieldValue)...) { self.init(elements) }

    /// Fields known to be sorted by name with unique names — not checked; lookups bisect them,
    /// so a caller that cannot prove the order uses ``init(collecting:)``. (The codec proves it
    /// when every name of a row is one of its segment's names, in their order.)
    public init(sortedUnique entries: [Field]) { storage = .decoded(entries) }

    /// Fields read in order (as the codec writes them: sorted, unique) — checked, and sorted and
    /// made unique (the last value of a name wins) when they are not.
    public init(collecting entries: [Field]) {
        var entries = entries
        // Through the buffer: the names are compared where they lie, not copied out.
        let sorted = entries.withUnsafeBufferPointer { b in
            var i = 1
            while i < b.count {
                if !(b[i - 1].name < b[i].name) { return false }
                i += 1
            }
            return true
        }
        if !sorted { Self.normalize(&entries) }
        storage = .decoded(entries)
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
    /// One past the last position: the field count (known without decoding encoded fields).
    @inlinable public var endIndex: Int {
        switch storage {
        case .decoded(let e): return e.count
        case .encoded(let f): return f.count
        }
    }

    /// Iterates the fields in name order, decoding encoded fields once for the whole loop.
    public struct Iterator: IteratorProtocol {
        @usableFromInline let entries: [Field]
        @usableFromInline var position = 0

        @inlinable init(_ entries: [Field]) { self.entries = entries }

        /// The next name and value, nil after the last.
        @inlinable public mutating func next() -> Element? {
            guard position < entries.count else { return nil }
            defer { position += 1 }
            return (key: entries[position].name, value: entries[position].value)
        }
    }

    /// An iterator over the fields in name order.
    @inlinable public func makeIterator() -> Iterator { Iterator(entries) }
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
    func search(_ name: String) -> (index: Int, found: Bool) { Self.search(entries, name) }

    /// The position of `name` in `entries` (sorted, unique), or where it would be inserted (and false).
    @inlinable
    static func search(_ entries: [Field], _ name: String) -> (index: Int, found: Bool) {
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
            switch storage {
            case .decoded(let e):
                let (i, found) = Self.search(e, name)
                return found ? e[i].value : nil
            case .encoded(let f):
                return f.value(name)
            }
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
        let entries = self.entries  // decoded once, not at each step
        let theirs = other.entries
        var out: [Field] = []
        out.reserveCapacity(entries.count + theirs.count)
        var i = 0
        var j = 0
        while i < entries.count, j < theirs.count {
            let a = entries[i]
            let b = theirs[j]
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
        out.append(contentsOf: theirs[j...])
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

    /// The fields whose names are in `names` (a record's `desiredKeys`): with encoded fields, only
    /// those are decoded.
    public func keeping(_ names: Set<String>) -> RecordFields {
        switch storage {
        case .decoded(let e):
            return RecordFields(sortedUnique: e.filter { names.contains($0.name) })
        case .encoded(let f):
            return RecordFields(
                sortedUnique: names.sorted().compactMap { n in f.value(n, counting: false).map { Field(n, $0) } })
        }
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
        guard a.count == b.count else { return false }
        return zip(a.entries, b.entries).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    /// Hashes the names and values in order.
    public func hash(into hasher: inout Hasher) {
        let entries = self.entries
        hasher.combine(entries.count)
        for e in entries {
            hasher.combine(e.name)
            hasher.combine(e.value)
        }
    }

    /// `["name": value, …]`, as a dictionary prints.
    public var description: String {
        let entries = self.entries
        return entries.isEmpty
            ? "[:]" : "[" + entries.map { "\"\($0.name)\": \($0.value)" }.joined(separator: ", ") + "]"
    }
}

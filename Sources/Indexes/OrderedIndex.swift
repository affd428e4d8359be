// OrderedIndex: the public face of the counted B+tree for one field of one record type.
//
// Owns the mapping from `FieldValue` to encoded keys (IndexKey.swift) and the query surface the
// planner and executor use: point, range, prefix, IN, ordered resumable scans and range counts.
// It is a value type: copying it is an O(1) snapshot (copy-on-write nodes). It does not know
// about records or schemas; `RecordIndexes` feeds it.
//
// Values of a family other than the index's are never indexed, and bounds of another family
// match nothing (the checker rejects such comparisons before they get here).

import RecordModel

/// One end of a value range.
public enum RangeBound: Sendable, Hashable {
    /// No bound on this side.
    case unbounded
    /// The value itself is in the range (`>=` / `<=`).
    case included(FieldValue)
    /// The value itself is not in the range (`>` / `<`).
    case excluded(FieldValue)
}

/// A range of values, e.g. `ValueRange(lower: .included(3), upper: .excluded(7))` is `3 ≤ x < 7`.
public struct ValueRange: Sendable, Hashable {
    /// The lower end.
    public var lower: RangeBound
    /// The upper end.
    public var upper: RangeBound
    /// A range from its two ends (both unbounded by default).
    public init(lower: RangeBound = .unbounded, upper: RangeBound = .unbounded) {
        self.lower = lower
        self.upper = upper
    }
    /// Every value.
    public static let all = ValueRange()
}

/// Scan direction of an ordered scan.
public enum ScanDirection: Sendable, Hashable {
    case ascending, descending
}

/// A B+tree over (value, row id) in CloudKit's value order, with subtree counts.
///
/// ```swift
/// var ages = OrderedIndex(family: .number)
/// ages.insert(.int64(42), row: 7)
/// ages.count(in: ValueRange(lower: .included(40), upper: .excluded(50)))   // 1
/// ```
public struct OrderedIndex: Sendable {
    /// The index behind one reference, copied on write: planner statistics and executors take a
    /// type's ordered index out of its dictionary for every count and scan, and copying the
    /// struct itself retained each of its trees and layer lists (11 retains and releases a copy).
    /// The first change to a shared index copies it, as copying the struct did.
    struct Parts: Sendable {
        let family: KeyFamily
        /// Numbers and dates live in `fixed`, other families in `variable`; the other tree stays empty.
        var fixed: BPlusTree<FixedKey>
        /// The delta's entries of the variable-length families (see `fixed`).
        var variable: BPlusTree<VarKey>
        /// The checkpoint's entries, one static layer per base layer of the table (rows
        /// `0..<baseCount`, each layer's rows after the previous one's; row ids are absolute),
        /// mapped; empty for an index held wholly in memory. `fixed`/`variable` then hold only delta
        /// rows, and removed base entries are in `tombFixed`/`tombVar` (exact counts) and `removed`
        /// (skipped by scans). StaticOrdered.swift.
        var bases: [StaticOrdered] = []
        /// The layers' entry tables (one family's), kept so a query does not rebuild the list.
        var fixedBases: [StaticFixedKeys] = []
        /// The layers' variable-length entry tables (see `fixedBases`).
        var varBases: [StaticVarKeys] = []
        /// Where each base layer's rows start.
        var layers: BaseLayers = BaseLayers()
        /// Removed base entries (fixed-size families), for exact counts.
        var tombFixed: BPlusTree<FixedKey>
        /// Removed base entries (variable-length families), for exact counts.
        var tombVar: BPlusTree<VarKey>
        /// The entries the base layers' dead rows had, from the layers' `dead/` sections (mapped):
        /// subtracted from counts; the rows themselves are in `removed`.
        var deadFixed: [StaticFixedKeys] = []
        /// The dead rows' variable-length entries (see `deadFixed`).
        var deadVar: [StaticVarKeys] = []
        /// Entries of the dead rows, in all families.
        var deadCount: Int = 0
        /// Base rows skipped by every scan (removed or dead).
        var removed: RowBitmap = RowBitmap()

        init(family: KeyFamily, nodeSize: Int) {
            self.family = family
            fixed = BPlusTree(maxEntries: nodeSize)
            variable = BPlusTree(maxEntries: nodeSize)
            tombFixed = BPlusTree(maxEntries: nodeSize)
            tombVar = BPlusTree(maxEntries: nodeSize)
        }
    }

    /// The parts, each read and written by name (`parts.fixed`); a write copies shared parts first.
    var parts: CopyOnWrite<Parts>

    /// The value family this index holds.
    public var family: KeyFamily { parts.contents.family }
    var baseCount: Int { parts.layers.rowCount }

    var layeredFixed: LayeredKeys<StaticFixedKeys> {
        LayeredKeys(
            delta: parts.fixed, bases: parts.fixedBases, tomb: parts.tombFixed, dead: parts.deadFixed,
            removed: parts.removed)
    }
    var layeredVar: LayeredKeys<StaticVarKeys> {
        LayeredKeys(
            delta: parts.variable, bases: parts.varBases, tomb: parts.tombVar, dead: parts.deadVar,
            removed: parts.removed)
    }

    /// Takes the base layers' dead rows out without decoding them: `rows` are skipped by every
    /// scan and `entries` (what those rows had indexed, in this index's family) are counted out.
    mutating func setDead(rows: RowBitmap, entries: [StaticOrdered]) {
        parts.removed = rows
        parts.deadFixed = entries.compactMap(\.fixed)
        parts.deadVar = entries.compactMap(\.variable)
        parts.deadCount = entries.reduce(0) { $0 + $1.count }
    }

    /// An index over a checkpoint's static layers (`layers` says which rows each covers) plus an
    /// empty delta. Every layer has the same family.
    init(bases: [StaticOrdered], layers: BaseLayers, family: KeyFamily, nodeSize: Int = 64) {
        parts = CopyOnWrite(Parts(family: family, nodeSize: nodeSize))
        parts.bases = bases
        parts.fixedBases = bases.compactMap(\.fixed)
        parts.varBases = bases.compactMap(\.variable)
        parts.layers = layers
    }

    /// An empty index. `nodeSize` is the maximum entries per node (≥ 4; tests use 4).
    public init(family: KeyFamily, nodeSize: Int = 64) {
        parts = CopyOnWrite(Parts(family: family, nodeSize: nodeSize))
    }

    /// Bulk-builds an index from (value, row) pairs in any order: list values contribute one
    /// entry per element; entries are encoded, sorted once and packed bottom-up.
    public init<S: Sequence>(family: KeyFamily, entries: S, nodeSize: Int = 64) where S.Element == (FieldValue, RowID) {
        parts = CopyOnWrite(Parts(family: family, nodeSize: nodeSize))
        if family.isFixed {
            var pairs: [(FixedKey, RowID)] = []
            for (v, r) in entries {
                for e in v.elements { if let k = Self.fixedKey(e, family) { pairs.append((k, r)) } }
            }
            parts.fixed = Self.build(&pairs, nodeSize)
        } else {
            var pairs: [(VarKey, RowID)] = []
            for (v, r) in entries {
                for e in v.elements { if let k = KeyEncoding.varKey(e, family: family) { pairs.append((k, r)) } }
            }
            parts.variable = Self.build(&pairs, nodeSize)
        }
    }

    static func build<K: TreeKey>(_ pairs: inout [(K, RowID)], _ nodeSize: Int) -> BPlusTree<K> {
        pairs.sort { entryLess($0.0, $0.1, $1.0, $1.1) }
        var keys: [K] = []
        var rows: [RowID] = []
        keys.reserveCapacity(pairs.count)
        rows.reserveCapacity(pairs.count)
        for (k, r) in pairs {
            if let lk = keys.last, let lr = rows.last, !(lk < k), lr == r { continue }  // duplicate
            keys.append(k)
            rows.append(r)
        }
        pairs = []
        return BPlusTree(sortedKeys: keys, rows: rows, maxEntries: nodeSize)
    }

    @inline(__always)
    static func fixedKey(_ v: FieldValue, _ family: KeyFamily) -> FixedKey? {
        switch (v, family) {
        case (.date(let t), .date): KeyEncoding.date(t)
        case (.int64(let i), .number): KeyEncoding.int(i)
        case (.double, .number): KeyEncoding.number(v)
        default: nil
        }
    }

    /// Number of entries (list fields count one per distinct element).
    public var count: Int {
        let delta = family.isFixed ? parts.fixed.count : parts.variable.count
        guard !parts.bases.isEmpty else { return delta }
        let tombs = family.isFixed ? parts.tombFixed.count : parts.tombVar.count
        return delta + parts.bases.reduce(0) { $0 + $1.count } - parts.deadCount - tombs
    }

    // MARK: maintenance

    /// Adds the value (each element of a list) for `row`. Returns the number of entries added.
    ///
    /// For a base row (one updated in place: its old value was removed first, which hid its
    /// mapped entries) the new entries go to the delta, like a delta row's.
    @discardableResult
    public mutating func insert(_ value: FieldValue, row: RowID) -> Int {
        if family.isFixed { return Self.countKeys(of: value, family, Self.fixedKey) { parts.fixed.insert($0, row) } }
        return Self.countKeys(of: value, family, KeyEncoding.varKey) { parts.variable.insert($0, row) }
    }

    /// Adds every (value, row) of `entries` — new rows, as `insert(_:row:)` adds each. Into an
    /// empty delta (a replayed log's tail, a large first commit) the entries are sorted once and
    /// packed bottom-up, as the bulk initializer does, instead of descending the tree per entry.
    public mutating func insertAll<S: Sequence>(_ entries: S) where S.Element == (FieldValue, RowID) {
        let fam = family
        if fam.isFixed {
            guard parts.fixed.count == 0 else {
                for (v, r) in entries { insert(v, row: r) }
                return
            }
            var pairs: [(FixedKey, RowID)] = []
            for (v, r) in entries { for e in v.elements { if let k = Self.fixedKey(e, fam) { pairs.append((k, r)) } } }
            parts.fixed = Self.build(&pairs, parts.fixed.maxEntries)
        } else {
            guard parts.variable.count == 0 else {
                for (v, r) in entries { insert(v, row: r) }
                return
            }
            var pairs: [(VarKey, RowID)] = []
            for (v, r) in entries {
                for e in v.elements { if let k = KeyEncoding.varKey(e, family: fam) { pairs.append((k, r)) } }
            }
            parts.variable = Self.build(&pairs, parts.variable.maxEntries)
        }
    }

    /// Removes the value (each element of a list) for `row`. Returns the number of entries removed.
    /// A base row's entry is removed from the delta when an in-place update put it there, else
    /// tombstoned (the mapped entry cannot change).
    @discardableResult
    public mutating func remove(_ value: FieldValue, row: RowID) -> Int {
        if Int(row) < baseCount {
            if family.isFixed {
                return Self.countKeys(of: value, family, Self.fixedKey) { k in
                    parts.fixed.remove(k, row) || tombstone(fixed: k, row: row)
                }
            }
            return Self.countKeys(of: value, family, KeyEncoding.varKey) { k in
                parts.variable.remove(k, row) || tombstone(variable: k, row: row)
            }
        }
        if family.isFixed { return Self.countKeys(of: value, family, Self.fixedKey) { parts.fixed.remove($0, row) } }
        return Self.countKeys(of: value, family, KeyEncoding.varKey) { parts.variable.remove($0, row) }
    }

    /// Records the removal of a base row's mapped entry (which cannot change): scans skip the
    /// row's mapped entries from now on, counts subtract the tombstone.
    mutating func tombstone(fixed k: FixedKey, row: RowID) -> Bool {
        parts.removed.insert(Int(row))
        guard let layer = parts.layers.layer(of: Int(row)), layer < parts.bases.count else { return false }
        return parts.bases[layer].fixed?.contains(k, row: UInt64(row)) == true && parts.tombFixed.insert(k, row)
    }

    /// `tombstone(fixed:row:)` for a variable-length key.
    mutating func tombstone(variable k: VarKey, row: RowID) -> Bool {
        parts.removed.insert(Int(row))
        guard let layer = parts.layers.layer(of: Int(row)), layer < parts.bases.count else { return false }
        return parts.bases[layer].variable?.contains(k, row: UInt64(row)) == true && parts.tombVar.insert(k, row)
    }

    /// Number of elements of `value` (the value, or each element of a list) that `apply`
    /// accepts, each passed as its key in `family`; an element with no key there is skipped.
    /// Insert, remove and tombstone differ only in `apply` and in which tree it writes.
    @inline(__always)
    static func countKeys<K>(
        of value: FieldValue, _ family: KeyFamily, _ key: (FieldValue, KeyFamily) -> K?, _ apply: (K) -> Bool
    ) -> Int {
        var n = 0
        for e in value.elements {
            if let k = key(e, family), apply(k) { n += 1 }
        }
        return n
    }

    /// Checks the B+tree invariants (see BPlusTree.swift); throws the first violation.
    public func checkInvariants() throws {
        try parts.fixed.checkInvariants()
        try parts.variable.checkInvariants()
    }
}

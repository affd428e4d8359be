// OrderedIndex queries: point, range, prefix (BEGINSWITH), IN, counts, ordered scans and a
// resumable cursor.
//
// Results of point lookups come out sorted by row id (entries of one value are ordered by row);
// range and prefix results come out in index order (value, then row id); IN returns the union
// sorted by row id without duplicates, ready for intersection. Counts are entry counts in
// O(log n) from the subtree counts; for list fields a row may hold several entries.

import RecordModel

typealias Position<K> = (K, UInt64)

/// Position after every entry with the same key.
let afterKey: UInt64 = 1 << 32

extension BPlusTree {
    @inline(__always)
    static func positionLess(_ a: Position<Key>, _ b: Position<Key>) -> Bool {
        a.0 < b.0 || (!(b.0 < a.0) && a.1 < b.1)
    }

    /// Number of entries in [lo, hi): one descent while both ends share a path, then the two
    /// ranks inside the children where they part.
    func count(_ lo: Position<Key>?, _ hi: Position<Key>?) -> Int {
        guard let lo, let hi else {
            let a = lo.map { rank($0.0, $0.1) } ?? 0
            let b = hi.map { rank($0.0, $0.1) } ?? count
            return Swift.max(0, b - a)
        }
        if Self.positionLess(hi, lo) { return 0 }
        var n = root
        while !n.isLeaf {
            let i = Self.childFor(n, lo.0, lo.1)
            let j = Self.childFor(n, hi.0, hi.1)
            if i != j {
                var total = Self.rankIn(n.children[j], hi) - Self.rankIn(n.children[i], lo)
                let counts = n.counts
                for k in i..<j { total += counts[k] }
                return total
            }
            n = n.children[i]
        }
        return Swift.max(0, Self.leafFor(n, hi.0, hi.1) - Self.leafFor(n, lo.0, lo.1))
    }

    /// Entries of the subtree before the position.
    static func rankIn(_ node: BNode<Key>, _ p: Position<Key>) -> Int {
        var n = node
        var r = 0
        while !n.isLeaf {
            let i = childFor(n, p.0, p.1)
            let counts = n.counts
            for j in 0..<i { r += counts[j] }
            n = n.children[i]
        }
        return r + leafFor(n, p.0, p.1)
    }

    /// Visits entries in [lo, hi) in the given direction.
    func visit(_ lo: Position<Key>?, _ hi: Position<Key>?, _ dir: ScanDirection, _ body: (Key, RowID) -> Bool) {
        if dir == .ascending {
            visitForward(from: lo) { k, r in
                if let hi, !Self.before(k, r, hi.0, hi.1) { return false }
                return body(k, r)
            }
        } else {
            visitBackward(before: hi) { k, r in
                if let lo, Self.before(k, r, lo.0, lo.1) { return false }
                return body(k, r)
            }
        }
    }

    /// Rows of entries whose key equals `key`: one descent, then a scan of the leaf (and, only
    /// when the run continues past it, an ordered visit).
    func rowsEqual(_ key: Key) -> [RowID] {
        var n = root
        while !n.isLeaf { n = n.children[Self.childFor(n, key, 0)] }
        var j = Self.leafFor(n, key, 0)
        var out: [RowID] = []
        let keys = n.keys
        let rows = n.rows
        let c = keys.count
        while j < c, !(key < keys[j]) {
            out.append(rows[j])
            j += 1
        }
        if j == c {  // the run may continue in the next leaves
            let start: UInt64 = out.last.map { UInt64($0) + 1 } ?? 0
            visitForward(from: (key, start)) { k, r in
                guard !(key < k) else { return false }
                out.append(r)
                return true
            }
        }
        return out
    }

    func rows(_ lo: Position<Key>?, _ hi: Position<Key>?) -> [RowID] {
        var out: [RowID] = []
        visit(lo, hi, .ascending) { _, r in
            out.append(r)
            return true
        }
        return out
    }
}

extension OrderedIndex {
    /// Encoded [lo, hi) positions of a value range, or nil when it can match nothing.
    static func positions<K>(_ range: ValueRange, _ enc: (FieldValue) -> K?) -> (Position<K>?, Position<K>?)? {
        var lo: Position<K>? = nil
        var hi: Position<K>? = nil
        switch range.lower {
        case .unbounded: break
        case .included(let v): guard let k = enc(v) else { return nil }; lo = (k, 0)
        case .excluded(let v): guard let k = enc(v) else { return nil }; lo = (k, afterKey)
        }
        switch range.upper {
        case .unbounded: break
        case .included(let v): guard let k = enc(v) else { return nil }; hi = (k, afterKey)
        case .excluded(let v): guard let k = enc(v) else { return nil }; hi = (k, 0)
        }
        return (lo, hi)
    }

    // The key encoders of this index's family. Callers pass them as closure literals over
    // `family` (`{ Self.fixedEnc($0, f) }`): a method reference would copy the whole index —
    // every tree and layer retained and released — on each call.
    static func fixedEnc(_ v: FieldValue, _ family: KeyFamily) -> FixedKey? { fixedKey(v, family) }
    static func varEnc(_ v: FieldValue, _ family: KeyFamily) -> VarKey? { KeyEncoding.varKey(v, family: family) }

    /// Row ids whose value (or a list element) equals `value`, sorted by row id.
    public func rows(equalTo value: FieldValue) -> [RowID] {
        if family.isFixed {
            guard let k = Self.fixedEnc(value, family) else { return [] }
            return layeredFixed.rowsEqual(k)
        }
        guard let k = Self.varEnc(value, family) else { return [] }
        return layeredVar.rowsEqual(k)
    }

    /// Number of entries equal to `value`. O(log n). (The key is encoded once, for both ends.)
    public func count(equalTo value: FieldValue) -> Int {
        if family.isFixed {
            guard let k = Self.fixedEnc(value, family) else { return 0 }
            return layeredFixed.count((k, 0), (k, afterKey))
        }
        guard let k = Self.varEnc(value, family) else { return 0 }
        return layeredVar.count((k, 0), (k, afterKey))
    }

    /// Row ids of entries in `range`, in index order (value, then row id).
    public func rows(in range: ValueRange) -> [RowID] {
        let f = family
        if family.isFixed {
            guard let (lo, hi) = Self.positions(range, { Self.fixedEnc($0, f) }) else { return [] }
            return layeredFixed.rows(lo, hi)
        }
        guard let (lo, hi) = Self.positions(range, { Self.varEnc($0, f) }) else { return [] }
        return layeredVar.rows(lo, hi)
    }

    /// Row ids of entries in `range`, in no particular order (a set of rows: with several
    /// layers, each layer's rows and then the delta's, not merged into index order).
    public func unorderedRows(in range: ValueRange) -> [RowID] {
        let f = family
        if family.isFixed {
            guard let (lo, hi) = Self.positions(range, { Self.fixedEnc($0, f) }) else { return [] }
            return layeredFixed.unorderedRows(lo, hi)
        }
        guard let (lo, hi) = Self.positions(range, { Self.varEnc($0, f) }) else { return [] }
        return layeredVar.unorderedRows(lo, hi)
    }

    /// Number of entries in `range`. O(log n), from the subtree counts.
    public func count(in range: ValueRange) -> Int {
        let f = family
        if family.isFixed {
            guard let (lo, hi) = Self.positions(range, { Self.fixedEnc($0, f) }) else { return 0 }
            return layeredFixed.count(lo, hi)
        }
        guard let (lo, hi) = Self.positions(range, { Self.varEnc($0, f) }) else { return 0 }
        return layeredVar.count(lo, hi)
    }

    /// Row ids whose string or bytes value begins with `prefix` (BEGINSWITH), in index order.
    public func rows(beginningWith prefix: FieldValue) -> [RowID] {
        guard let (l, u) = KeyEncoding.prefixRange(prefix, family: family) else { return [] }
        return layeredVar.rows((l, 0), u.map { ($0, 0) })
    }

    /// Row ids of entries beginning with `prefix`, in no particular order (see
    /// ``unorderedRows(in:)``).
    public func unorderedRows(beginningWith prefix: FieldValue) -> [RowID] {
        guard let (l, u) = KeyEncoding.prefixRange(prefix, family: family) else { return [] }
        return layeredVar.unorderedRows((l, 0), u.map { ($0, 0) })
    }

    /// Number of entries beginning with `prefix`. O(log n).
    public func count(beginningWith prefix: FieldValue) -> Int {
        guard let (l, u) = KeyEncoding.prefixRange(prefix, family: family) else { return 0 }
        return layeredVar.count((l, 0), u.map { ($0, 0) })
    }

    /// Row ids matching any of `values` (IN), sorted by row id, without duplicates.
    public func rows(equalToAnyOf values: [FieldValue]) -> [RowID] {
        // One value (an equality, or CONTAINS on a list): its rows, not copied into a union.
        if values.count == 1 { return Postings.sortedUnique(rows(equalTo: values[0])) }
        var out: [RowID] = []
        for v in values { out += rows(equalTo: v) }
        return Postings.sortedUnique(out)
    }

    /// Number of entries matching any of `values` (duplicates in `values` count once).
    public func count(equalToAnyOf values: [FieldValue]) -> Int {
        // A few values are told apart by comparison: hashing them into a set was a fifth of
        // the estimate of an equality.
        if values.count <= 8 {
            var n = 0
            for i in values.indices where !values[..<i].contains(values[i]) { n += count(equalTo: values[i]) }
            return n
        }
        var seen = Set<FieldValue>()
        var n = 0
        for v in values where seen.insert(v).inserted { n += count(equalTo: v) }
        return n
    }

    /// Visits the row ids of `range` in value order (ties by row id, reversed when descending),
    /// starting strictly after `after` = (value, row) when given, until `body` returns false.
    /// With `tieOrder` (a strict order of rows that agrees with row order within each static
    /// layer, such as record-id order when each layer lists its rows in id order), an ascending
    /// scan of an index that ``ordersTiesAcrossLayers`` meets the rows level on a value in that
    /// order instead; otherwise `tieOrder` is not used.
    ///
    /// ```swift
    /// index.scan(.all, direction: .descending, after: (.int64(10), 3)) { row in print(row); return true }
    /// ```
    public func scan(
        _ range: ValueRange = .all, direction: ScanDirection = .ascending,
        after: (FieldValue, RowID)? = nil, tieOrder: ((RowID, RowID) -> Bool)? = nil, _ body: (RowID) -> Bool
    ) {
        let f = family
        if family.isFixed {
            guard let (lo, hi) = Self.positions(range, { Self.fixedEnc($0, f) }) else { return }
            guard let (l, h) = Self.resume(lo, hi, direction, after, { Self.fixedEnc($0, f) }) else { return }
            layeredFixed.visit(l, h, direction, tieOrder: tieOrder) { _, r in body(r) }
        } else {
            guard let (lo, hi) = Self.positions(range, { Self.varEnc($0, f) }) else { return }
            guard let (l, h) = Self.resume(lo, hi, direction, after, { Self.varEnc($0, f) }) else { return }
            layeredVar.visit(l, h, direction, tieOrder: tieOrder) { _, r in body(r) }
        }
    }

    /// Whether an ascending ``scan(_:direction:after:tieOrder:_:)`` with a tie order meets the
    /// entries level on a value in that order: the index has several static layers and no entry
    /// written since them (its delta is empty).
    public var ordersTiesAcrossLayers: Bool {
        family.isFixed
            ? parts.fixedBases.count > 1 && parts.fixed.count == 0
            : parts.varBases.count > 1 && parts.variable.count == 0
    }

    /// Narrows [lo, hi) to the part strictly after `after` in the scan direction.
    static func resume<K: TreeKey>(
        _ lo: Position<K>?, _ hi: Position<K>?, _ dir: ScanDirection,
        _ after: (FieldValue, RowID)?, _ enc: (FieldValue) -> K?
    ) -> (Position<K>?, Position<K>?)? {
        guard let (v, id) = after else { return (lo, hi) }
        guard let k = enc(v) else { return nil }
        if dir == .ascending {
            let p: Position<K> = (k, UInt64(id) + 1)
            if let lo, BPlusTree<K>.positionLess(p, lo) { return (lo, hi) }
            return (p, hi)
        }
        let p: Position<K> = (k, UInt64(id))
        if let hi, BPlusTree<K>.positionLess(hi, p) { return (lo, hi) }
        return (lo, p)
    }

    /// Up to `limit` row ids of `range` in order, strictly after `after`: one page of a
    /// resumable sorted scan. Resume with the last row's (value, row id).
    public func page(
        _ range: ValueRange = .all, direction: ScanDirection = .ascending,
        after: (FieldValue, RowID)? = nil, limit: Int
    ) -> [RowID] {
        var out: [RowID] = []
        guard limit > 0 else { return out }
        scan(range, direction: direction, after: after) { r in
            out.append(r)
            return out.count < limit
        }
        return out
    }
}

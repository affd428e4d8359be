// StaticOrdered: an ordered index of a checkpoint's base rows in static, mapped form
// (docs/index-segment-format.md, "ordered"), and the layered view that answers an OrderedIndex's
// questions over base ∪ delta minus removed base entries.
//
//   header  = "CRORD001" u8 family u8 var(1)/fixed(0) u16 0 u32 0 u64 count u64 tail-offset
//                                                                               never change
//   fixed   : count × (u64 a, u64 b, u32 row, u32 0)                        24 bytes each
//   var     : count × (u64 a, u64 b, u64 tail-offset, u32 row, u32 tail-len)  32 bytes each
//             then the tails (bytes past the 16 inline ones) at tail-offset
//
// Entries are sorted by (key, row) exactly as the B+tree orders them, so a position (key, row)
// is found by binary search and the number of entries in [lo, hi) is a difference of two
// searches: counts stay O(log n). The delta (rows ≥ the base's count) lives in the in-memory
// B+tree; a removed base entry is recorded in `tomb` (a B+tree of (key, row), for exact
// counts) and `removed` (a bitmap of rows, to skip them while scanning).

import CPrefetch
import RecordModel

/// Sorted (key, row) entries read from a section.
protocol StaticKeys: Sendable {
    associatedtype K: TreeKey
    var count: Int { get }
    func key(_ i: Int) -> K
    func row(_ i: Int) -> RowID
    /// Whether entry `i` is before position `p` (key, then row), without building the key when
    /// the layout allows.
    func isBefore(_ i: Int, _ p: Position<K>) -> Bool
}

struct StaticFixedKeys: StaticKeys {
    let s: SectionBytes
    let count: Int
    static let entry = 24
    @inline(__always) func key(_ i: Int) -> FixedKey {
        let o = StaticOrdered.headerSize + i * Self.entry
        return FixedKey(a: s.u64(o), b: s.u64(o + 8))
    }
    @inline(__always) func row(_ i: Int) -> RowID { s.u32(StaticOrdered.headerSize + i * Self.entry + 16) }
    @inline(__always) func isBefore(_ i: Int, _ p: Position<FixedKey>) -> Bool {
        let k = key(i)
        return k < p.0 || (!(p.0 < k) && UInt64(row(i)) < p.1)
    }
}

struct StaticVarKeys: StaticKeys {
    let s: SectionBytes
    let count: Int
    let tails: Int
    static let entry = 32
    @inline(__always) func key(_ i: Int) -> VarKey {
        let o = StaticOrdered.headerSize + i * Self.entry
        let n = Int(s.u32(o + 28))
        var tail: [UInt8] = []
        if n > 0 {
            let t = tails + Int(truncatingIfNeeded: s.u64(o + 16))
            // A damaged offset yields a wrong key, never a read outside the section (verify
            // reports the damaged block).
            if t >= tails, t <= s.count - n { tail = Array(s.bytes[t..<(t + n)]) }
        }
        return VarKey(a: s.u64(o), b: s.u64(o + 8), tail: tail)
    }
    @inline(__always) func row(_ i: Int) -> RowID { s.u32(StaticOrdered.headerSize + i * Self.entry + 24) }

    /// Entry `i`'s key against `k` (VarKey's order: a, b, then the tail bytes) read in place —
    /// a binary search over a mapped layer allocates nothing.
    @inline(__always) func compare(_ i: Int, _ k: VarKey) -> Int {
        let o = StaticOrdered.headerSize + i * Self.entry
        let a = s.u64(o)
        if a != k.a { return a < k.a ? -1 : 1 }
        let b = s.u64(o + 8)
        if b != k.b { return b < k.b ? -1 : 1 }
        let n = Int(s.u32(o + 28))
        let t = tails + Int(truncatingIfNeeded: s.u64(o + 16))
        // A damaged offset reads as an empty tail (verify reports the damaged block).
        let len = n > 0 && t >= tails && t <= s.count - n ? n : 0
        let m = min(len, k.tail.count)
        for j in 0..<m {
            let x = s.bytes[t + j]
            let y = k.tail[j]
            if x != y { return x < y ? -1 : 1 }
        }
        return len == k.tail.count ? 0 : (len < k.tail.count ? -1 : 1)
    }

    @inline(__always) func isBefore(_ i: Int, _ p: Position<VarKey>) -> Bool {
        let c = compare(i, p.0)
        return c < 0 || (c == 0 && UInt64(row(i)) < p.1)
    }
}

extension StaticKeys {
    /// The first entry not before position `p` (entries before it are < p).
    func lowerBound(_ p: Position<K>) -> Int {
        var lo = 0
        var hi = count
        while lo < hi {
            let m = (lo + hi) >> 1
            if isBefore(m, p) { lo = m + 1 } else { hi = m }
        }
        return lo
    }

    /// Whether the entry (key, row) is in the layer: one binary search (the first entry not
    /// before it must be before the next position).
    func contains(_ k: K, row r: UInt64) -> Bool {
        let i = lowerBound((k, r))
        return i < count && isBefore(i, (k, r + 1))
    }

    func range(_ lo: Position<K>?, _ hi: Position<K>?) -> Range<Int> {
        let a = lo.map(lowerBound) ?? 0
        let b = hi.map(lowerBound) ?? count
        return a..<max(a, b)
    }
}

/// The static ordered index of one field of a table's base rows.
struct StaticOrdered: Sendable {
    static let magic = "CRORD001"
    static let headerSize = 32
    let family: KeyFamily
    let fixed: StaticFixedKeys?
    let variable: StaticVarKeys?

    init(_ s: SectionBytes) throws(IndexSectionError) {
        try s.header(Self.magic, size: Self.headerSize)
        guard let fam = KeyFamily(rawValue: s.bytes[8]) else {
            throw IndexSectionError(s.name, offset: 8, "unknown key family \(s.bytes[8])")
        }
        family = fam
        let isVar = s.bytes[9] == 1
        guard isVar == !fam.isFixed else {
            throw IndexSectionError(s.name, offset: 9, "key layout does not match the family")
        }
        let n = try s.boundedCount(s.u64(16), size: isVar ? StaticVarKeys.entry : StaticFixedKeys.entry, at: 16)
        if isVar {
            try s.within(Self.headerSize, n * StaticVarKeys.entry, "entries")
            let tails = Int(truncatingIfNeeded: s.u64(24))
            try s.within(tails, 0, "tails")
            guard tails >= Self.headerSize + n * StaticVarKeys.entry else {
                throw IndexSectionError(s.name, offset: 24, "tails overlap the entries")
            }
            variable = StaticVarKeys(s: s, count: n, tails: tails)
            fixed = nil
        } else {
            try s.within(Self.headerSize, n * StaticFixedKeys.entry, "entries")
            fixed = StaticFixedKeys(s: s, count: n)
            variable = nil
        }
    }

    var count: Int { fixed?.count ?? variable?.count ?? 0 }

    /// The section of a fixed-width `family` from its (key, row) entries, in any order.
    static func encode(family: KeyFamily, fixed pairs: consuming [(FixedKey, RowID)]) -> [UInt8] {
        let unique = sortedUnique(pairs)
        var w = header(family, count: unique.count, capacity: headerSize + unique.count * StaticFixedKeys.entry)
        w.u64(0)
        for (k, r) in unique {
            w.u64(k.a)
            w.u64(k.b)
            w.u32(r)
            w.u32(0)
        }
        return w.bytes
    }

    /// The section of a variable-width `family` from its (key, row) entries, in any order.
    ///
    /// Sorted through plain entries — the key's 16 inline bytes, the row, the length of the
    /// key's tail and where it is in one buffer of every tail — so the sort moves no references;
    /// the tails are read again only to break a tie of the inline bytes and to copy them into the
    /// section. The entries (a heap array per tail) are released before the sort: at 10M rows
    /// they are the largest thing the build holds.
    static func encode(family: KeyFamily, variable pairs: consuming [(VarKey, RowID)]) -> [UInt8] {
        var order = [VarEntry]()
        order.reserveCapacity(pairs.count)
        var tails: [UInt8] = []
        tails.reserveCapacity(pairs.reduce(0) { $0 + $1.0.tail.count })
        for i in pairs.indices {  // by index: the tails are freed as they are copied
            let (k, r) = pairs[i]
            order.append(
                VarEntry(a: k.a, b: k.b, at: UInt64(tails.count), row: r, tailCount: UInt32(k.tail.count)))
            if !k.tail.isEmpty {
                tails += k.tail
                pairs[i].0.tail = []
            }
            // Freed tails stay in the allocator's heaps: handed back as the copy goes, the entries
            // and the buffer of tails are not both resident (10M keys: ≈ 1 GB of tails).
            if i & 0xF_FFFF == 0xF_FFFF { cirrus_malloc_trim() }
        }
        pairs = []
        // (Only for large builds: a trim takes each heap's lock while it walks it.)
        if order.count > 0xF_FFFF { cirrus_malloc_trim() }
        tails.withUnsafeBytes { tails in
            func tailOrder(_ x: VarEntry, _ y: VarEntry) -> Int {
                if x.tailCount == 0 || y.tailCount == 0 {
                    return (x.tailCount == 0 ? 0 : 1) - (y.tailCount == 0 ? 0 : 1)
                }
                return compareBytes(
                    UnsafeRawBufferPointer(rebasing: tails[Int(x.at)..<Int(x.at) + Int(x.tailCount)]),
                    UnsafeRawBufferPointer(rebasing: tails[Int(y.at)..<Int(y.at) + Int(y.tailCount)]))
            }
            order.sort { x, y in
                if x.a != y.a { return x.a < y.a }
                if x.b != y.b { return x.b < y.b }
                let c = tailOrder(x, y)
                return c != 0 ? c < 0 : x.row < y.row
            }
            // Equal neighbours (same key and row) are one entry.
            var w = 0
            for i in order.indices {  // by index: an iterator would hold the buffer and make the writes copy it
                let e = order[i]
                if w > 0 {
                    let l = order[w - 1]
                    if l.a == e.a && l.b == e.b && l.row == e.row && tailOrder(l, e) == 0 { continue }
                }
                order[w] = e
                w += 1
            }
            order.removeLast(order.count - w)
        }
        let tailsAt = headerSize + order.count * StaticVarKeys.entry
        let tailBytes = order.reduce(0) { $0 + Int($1.tailCount) }
        var w = header(family, count: order.count, capacity: tailsAt + tailBytes)
        w.u64(UInt64(tailsAt))
        var tailOffset: UInt64 = 0
        for e in order {
            w.u64(e.a)
            w.u64(e.b)
            w.u64(tailOffset)
            w.u32(e.row)
            w.u32(e.tailCount)
            tailOffset += UInt64(e.tailCount)
        }
        tails.withUnsafeBytes { tails in
            for e in order where e.tailCount > 0 {
                w.bytes += UnsafeRawBufferPointer(rebasing: tails[Int(e.at)..<Int(e.at) + Int(e.tailCount)])
            }
        }
        return w.bytes
    }

    /// A variable-width entry while its section is sorted: the key's inline bytes, where its
    /// tail is in the build's buffer of tails and its length, and its row.
    struct VarEntry {
        var a: UInt64
        var b: UInt64
        var at: UInt64
        var row: RowID
        var tailCount: UInt32
    }

    /// The header's magic, family, layout and entry count (the next field is the writer's).
    private static func header(_ family: KeyFamily, count: Int, capacity: Int) -> SectionWriter {
        var w = SectionWriter()
        w.bytes.reserveCapacity(capacity)
        w.magic(magic)
        w.bytes += [family.rawValue, family.isFixed ? 0 : 1, 0, 0, 0, 0, 0, 0]
        w.u64(UInt64(count))
        return w
    }

    /// `pairs` sorted by (key, row), each once. Taken, not copied: the caller's array is sorted
    /// in place when it holds the only reference.
    static func sortedUnique<K: TreeKey>(_ pairs: consuming [(K, RowID)]) -> [(K, RowID)] {
        pairs.sort { entryLess($0.0, $0.1, $1.0, $1.1) }
        // Equal neighbours are one entry; kept in place (a second array would double the entries).
        var w = 0
        for i in pairs.indices {  // by index: an iterator would hold the buffer and make the writes copy it
            let p = pairs[i]
            if w > 0, !(pairs[w - 1].0 < p.0), pairs[w - 1].1 == p.1 { continue }
            pairs[w] = p
            w += 1
        }
        pairs.removeLast(pairs.count - w)
        return pairs
    }
}

/// An ordered index's entries over base ∪ delta minus removed base entries, with the B+tree's
/// query surface (positions, counts, visits).
struct LayeredKeys<S: StaticKeys> {
    typealias K = S.K
    let delta: BPlusTree<K>
    /// The static layers, oldest first (their row ranges ascend).
    let bases: [S]
    let tomb: BPlusTree<K>
    /// The entries of rows the layers made dead (each layer's `dead/` section): counted out.
    let dead: [S]
    let removed: RowBitmap

    func count(_ lo: Position<K>?, _ hi: Position<K>?) -> Int {
        var n = delta.count(lo, hi)
        guard !bases.isEmpty else { return n }
        for b in bases { n += b.range(lo, hi).count }
        for d in dead { n -= d.range(lo, hi).count }
        if tomb.count > 0 { n -= tomb.count(lo, hi) }
        return n
    }

    /// Entries in [lo, hi) in the given direction: the layers' (skipping removed rows) merged
    /// with the delta's by (key, row). With `tieOrder`, an ascending visit with no delta entry
    /// in range puts the layers' entries level on a key in that order instead of row order
    /// (`OrderedIndex.scan(_:direction:after:tieOrder:_:)`).
    func visit(
        _ lo: Position<K>?, _ hi: Position<K>?, _ dir: ScanDirection, tieOrder: ((RowID, RowID) -> Bool)? = nil,
        _ body: (K, RowID) -> Bool
    ) {
        guard !bases.isEmpty else { return delta.visit(lo, hi, dir, body) }
        var d: [(K, RowID)] = []
        delta.visit(lo, hi, dir) { k, r in
            d.append((k, r))
            return true
        }
        if bases.count == 1 {
            visitOne(bases[0], d, lo, hi, dir, body)
        } else {
            visitMany(d, lo, hi, dir, tieOrder: d.isEmpty && dir == .ascending ? tieOrder : nil, body)
        }
    }

    @inline(__always)
    static func before(_ a: (K, RowID), _ b: (K, RowID), _ dir: ScanDirection) -> Bool {
        let less = a.0 < b.0 || (!(b.0 < a.0) && a.1 < b.1)
        return dir == .ascending ? less : !less
    }

    /// One static layer merged with the delta's entries `d` (the common case: a tight loop).
    func visitOne(
        _ base: S, _ d: [(K, RowID)], _ lo: Position<K>?, _ hi: Position<K>?, _ dir: ScanDirection,
        _ body: (K, RowID) -> Bool
    ) {
        var j = 0
        let r = base.range(lo, hi)
        let skip = removed.count > 0
        let step = dir == .ascending ? 1 : -1
        let first = dir == .ascending ? r.lowerBound : r.upperBound - 1
        for i in stride(from: first, through: dir == .ascending ? r.upperBound - 1 : r.lowerBound, by: step)
        where !r.isEmpty {
            let row = base.row(i)
            if skip && removed.contains(Int(row)) { continue }
            let k = base.key(i)
            while j < d.count, Self.before(d[j], (k, row), dir) {
                if !body(d[j].0, d[j].1) { return }
                j += 1
            }
            if !body(k, row) { return }
        }
        while j < d.count {
            if !body(d[j].0, d[j].1) { return }
            j += 1
        }
    }

    /// Several static layers and the delta: a k-way merge, the next entry chosen by a linear
    /// look at each layer's head (there are few layers: a checkpoint keeps them logarithmic).
    /// Heads level on a key are taken in `tieOrder` when given (it must agree with row order
    /// within a layer, which lists a key's entries by row), else by row.
    func visitMany(
        _ d: [(K, RowID)], _ lo: Position<K>?, _ hi: Position<K>?, _ dir: ScanDirection,
        tieOrder: ((RowID, RowID) -> Bool)? = nil, _ body: (K, RowID) -> Bool
    ) {
        func precedes(_ a: (K, RowID), _ b: (K, RowID)) -> Bool {
            guard let tieOrder else { return Self.before(a, b, dir) }
            if a.0 < b.0 { return dir == .ascending }
            if b.0 < a.0 { return dir != .ascending }
            return tieOrder(a.1, b.1)
        }
        let asc = dir == .ascending
        let step = asc ? 1 : -1
        let skip = removed.count > 0
        var at: [Int] = []
        var stop: [Int] = []
        for b in bases {
            let r = b.range(lo, hi)
            at.append(asc ? r.lowerBound : r.upperBound - 1)
            stop.append(asc ? r.upperBound : r.lowerBound - 1)
        }
        var heads: [(K, RowID)?] = Array(repeating: nil, count: bases.count)
        func load(_ k: Int) {
            while at[k] != stop[k] {
                let row = bases[k].row(at[k])
                if skip && removed.contains(Int(row)) {
                    at[k] += step
                    continue
                }
                heads[k] = (bases[k].key(at[k]), row)
                return
            }
            heads[k] = nil
        }
        for k in bases.indices { load(k) }
        var j = 0
        while true {
            var best = -1
            for k in bases.indices {
                guard let h = heads[k] else { continue }
                if best < 0 || precedes(h, heads[best]!) { best = k }
            }
            guard best >= 0, let h = heads[best] else { break }
            while j < d.count, Self.before(d[j], h, dir) {
                if !body(d[j].0, d[j].1) { return }
                j += 1
            }
            if !body(h.0, h.1) { return }
            at[best] += step
            load(best)
        }
        while j < d.count {
            if !body(d[j].0, d[j].1) { return }
            j += 1
        }
    }

    /// Rows of entries equal to `key`, ascending by row (layers in row order, then the delta).
    func rowsEqual(_ key: K) -> [RowID] {
        guard !bases.isEmpty else { return delta.rowsEqual(key) }
        var out: [RowID] = []
        let skip = removed.count > 0
        for base in bases {
            for i in base.range((key, 0), (key, afterKey)) {
                let row = base.row(i)
                if !(skip && removed.contains(Int(row))) { out.append(row) }
            }
        }
        let d = delta.rowsEqual(key)
        // Delta rows follow the base's, except base rows updated in place: then merge.
        guard let first = d.first, let last = out.last, first < last else { return out + d }
        return Postings.union([out, d])
    }

    func rows(_ lo: Position<K>?, _ hi: Position<K>?) -> [RowID] {
        var out: [RowID] = []
        if bases.count == 1, delta.count(lo, hi) == 0 {
            // One layer and no delta entry in range: the layer's rows in order, no key read
            // (a string key's tail would be copied out for nothing).
            let base = bases[0]
            let r = base.range(lo, hi)
            let skip = removed.count > 0
            out.reserveCapacity(r.count)
            for i in r {
                let row = base.row(i)
                if skip && removed.contains(Int(row)) { continue }
                out.append(row)
            }
            return out
        }
        visit(lo, hi, .ascending) { _, r in
            out.append(r)
            return true
        }
        return out
    }

    /// The rows of the entries in [lo, hi) in no particular order: each layer's in its own
    /// order, then the delta's (removed rows skipped). For a set of rows: no merge across
    /// layers and no key read (the merge built every entry's key to compare layer heads, and a
    /// string key copied its bytes out).
    func unorderedRows(_ lo: Position<K>?, _ hi: Position<K>?) -> [RowID] {
        guard !bases.isEmpty else { return rows(lo, hi) }
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(bases.count)
        for b in bases { ranges.append(b.range(lo, hi)) }
        var out: [RowID] = []
        out.reserveCapacity(ranges.reduce(0) { $0 + $1.count })
        let skip = removed.count > 0
        for (base, r) in zip(bases, ranges) {
            for i in r {
                let row = base.row(i)
                if skip && removed.contains(Int(row)) { continue }
                out.append(row)
            }
        }
        if delta.count(lo, hi) > 0 {
            delta.visit(lo, hi, .ascending) { _, r in
                out.append(r)
                return true
            }
        }
        return out
    }
}

// Postings: set operations on sorted, unique row-id lists.
//
// Intersection gallops: the shortest list drives and each other list is searched by exponential
// then binary search from where the last probe stopped, so a rare word ANDed with a common one
// costs O(r · log(c / r)). Union is a k-way merge with a small binary heap. Both are used by
// TextIndex, and by the planner/executor to intersect row-id lists from different indexes.

/// Set operations on ascending, duplicate-free row-id lists.
///
/// ```swift
/// Postings.intersect([[1, 3, 5, 9], [3, 4, 9]])   // [3, 9]
/// Postings.union([[1, 5], [2, 5, 7]])             // [1, 2, 5, 7]
/// ```
public enum Postings {
    /// First index ≥ `from` whose element is ≥ x (galloping: 1, 2, 4 … then binary search).
    @inline(__always)
    static func lowerBound(_ a: [RowID], _ x: RowID, from: Int) -> Int {
        var lo = from
        var step = 1
        var hi = from
        while hi < a.count, a[hi] < x {
            lo = hi + 1
            hi += step
            step <<= 1
        }
        hi = Swift.min(hi, a.count)
        while lo < hi {
            let mid = (lo + hi) >> 1
            if a[mid] < x { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// The rows sorted ascending without duplicates (for row lists that come out of an index in
    /// value order, or with one entry per list element). A list already ascending without
    /// repeats is returned as it is; otherwise dense lists (the row-id span at most 4 bits per
    /// entry) go through a bitmap, long sparse ones through a radix sort, both O(n); short ones
    /// through a comparison sort.
    ///
    /// ```swift
    /// Postings.sortedUnique([5, 1, 5, 3])   // [1, 3, 5]
    /// ```
    public static func sortedUnique(_ rows: [RowID]) -> [RowID] {
        guard rows.count > 1 else { return rows }
        // Already ascending without repeats (one value's rows): returned as they are.
        if rows.withUnsafeBufferPointer({ b in (1..<b.count).allSatisfy { b[$0 - 1] < b[$0] } }) { return rows }
        if rows.count >= 64, let lo = rows.min(), let hi = rows.max(), Int((hi - lo) >> 6) <= rows.count * 4 {
            return bitmapUnion([rows], lo, hi, rows.count)
        }
        var a = rows
        sort(&a)
        var w = 0
        for i in a.indices where i == 0 || a[i] != a[i - 1] {
            a[w] = a[i]
            w += 1
        }
        a.removeLast(a.count - w)
        return a
    }

    /// Sorts `a` ascending (duplicates kept), in O(n) when it is long: a radix sort, 16-bit
    /// digits from 4096 rows, 8-bit digits from 256 (a pass only for each byte in which the rows
    /// differ: three at 1M rows); shorter lists by comparison. A radius query's rows come out of
    /// the R-tree in space order, so every radius query sorts them.
    ///
    /// ```swift
    /// var rows: [RowID] = [9, 2, 7]
    /// Postings.sort(&rows)   // [2, 7, 9]
    /// ```
    public static func sort(_ a: inout [RowID]) {
        if a.count >= 4096 {
            radixSort(&a, digitBits: 16)
        } else if a.count >= 256 {
            radixSort(&a, digitBits: 8)
        } else {
            a.sort()
        }
    }

    /// Sorts `a` ascending: least-significant-digit radix sort with `digitBits`-bit digits
    /// (8 or 16), skipping the digits in which no two rows differ.
    static func radixSort(_ a: inout [RowID], digitBits: RowID) {
        RadixSort.sort(&a, keyBits: 32, digitBits: Int(digitBits)) { UInt64($0) }
    }

    /// The rows of `sorted` (ascending, unique) that also occur in `rows` (any order, duplicates
    /// allowed): a bitmap over `sorted`'s span is marked from `rows` and probed by `sorted`, so
    /// `rows` — typically a large range read from an ordered index in value order — is never
    /// sorted. O(|rows| + |sorted| + span / 64).
    ///
    /// ```swift
    /// Postings.keeping([2, 5, 9], in: [9, 1, 2, 2, 7])   // [2, 9]
    /// ```
    public static func keeping(_ sorted: [RowID], in rows: [RowID]) -> [RowID] {
        guard let lo = sorted.first, let hi = sorted.last, !rows.isEmpty else { return [] }
        var bits = [UInt64](repeating: 0, count: Int((hi - lo) >> 6) + 1)
        bits.withUnsafeMutableBufferPointer { w in
            for x in rows where x >= lo && x <= hi {
                let d = x - lo
                w[Int(d >> 6)] |= 1 << UInt64(d & 63)
            }
        }
        return [RowID](unsafeUninitializedCapacity: sorted.count) { o, written in
            var n = 0
            bits.withUnsafeBufferPointer { w in
                for y in sorted {
                    let d = y - lo
                    o[n] = y
                    n &+= Int((w[Int(d >> 6)] >> UInt64(d & 63)) & 1)
                }
            }
            written = n
        }
    }

    /// Rows in every list: pairwise from the shortest list up, each step a linear merge when the
    /// sizes are within 16× of each other and a galloping search otherwise.
    public static func intersect(_ lists: [[RowID]]) -> [RowID] {
        guard !lists.isEmpty else { return [] }
        let sorted = lists.sorted { $0.count < $1.count }
        var acc = sorted[0]
        for other in sorted.dropFirst() {
            if acc.isEmpty { break }
            acc = intersect2(acc, other)
        }
        return acc
    }

    enum Strategy { case automatic, bitmap, merge, gallop }

    /// Intersection of two lists, `a` the shorter. Automatic choice: galloping when `b` is over
    /// 16× longer; otherwise a bitmap over the overlapping row-id span when that span is small
    /// against the lists (its words ≤ the entries; independent probes pipeline well), else a
    /// branch-free merge.
    static func intersect2(_ a: [RowID], _ b: [RowID], strategy: Strategy = .automatic) -> [RowID] {
        guard let af = a.first, let al = a.last, let bf = b.first, let bl = b.last else { return [] }
        var strategy = strategy
        if strategy == .automatic {
            let span = Int(Swift.min(al, bl)) - Int(Swift.max(af, bf))
            strategy = b.count / 16 > a.count ? .gallop : ((span >> 6) <= a.count + b.count ? .bitmap : .merge)
        }
        if strategy == .bitmap { return bitmapIntersect(a, b) }
        let gallop = strategy == .gallop
        return [RowID](unsafeUninitializedCapacity: a.count) { o, written in
            written = a.withUnsafeBufferPointer { pa in
                b.withUnsafeBufferPointer { pb in
                    var w = 0
                    var j = 0
                    let nb = pb.count
                    if !gallop {
                        // Branch-free merge: both cursors advance by comparisons, not jumps.
                        var i = 0
                        let na = pa.count
                        while i < na, j < nb {
                            let x = pa[i]
                            let y = pb[j]
                            o[w] = x
                            w &+= x == y ? 1 : 0
                            i &+= x <= y ? 1 : 0
                            j &+= y <= x ? 1 : 0
                        }
                    } else {
                        for x in pa {
                            // Gallop from j, then binary search.
                            var lo = j
                            var hi = j
                            var step = 1
                            while hi < nb, pb[hi] < x {
                                lo = hi + 1
                                hi += step
                                step <<= 1
                            }
                            hi = Swift.min(hi, nb)
                            while lo < hi {
                                let mid = (lo + hi) >> 1
                                if pb[mid] < x { lo = mid + 1 } else { hi = mid }
                            }
                            j = lo
                            if j == nb { break }
                            if pb[j] == x {
                                o[w] = x
                                w += 1
                            }
                        }
                    }
                    return w
                }
            }
        }
    }

    /// Intersection through a bitmap of `a` over the overlapping span, probed by `b`.
    static func bitmapIntersect(_ a: [RowID], _ b: [RowID]) -> [RowID] {
        guard let af = a.first, let al = a.last, let bf = b.first, let bl = b.last else { return [] }
        let lo = Swift.max(af, bf)
        let hi = Swift.min(al, bl)
        guard lo <= hi else { return [] }
        let words = Int((hi - lo) >> 6) + 1
        var bits = [UInt64](repeating: 0, count: words)
        bits.withUnsafeMutableBufferPointer { w in
            for x in a where x >= lo && x <= hi {
                let d = x - lo
                w[Int(d >> 6)] |= 1 << UInt64(d & 63)
            }
        }
        return [RowID](unsafeUninitializedCapacity: Swift.min(a.count, b.count)) { o, written in
            var n = 0
            bits.withUnsafeBufferPointer { w in
                b.withUnsafeBufferPointer { pb in
                    var j = lowerBound(b, lo, from: 0)
                    while j < pb.count {
                        let y = pb[j]
                        if y > hi { break }
                        let d = y - lo
                        o[n] = y
                        n &+= Int((w[Int(d >> 6)] >> UInt64(d & 63)) & 1)
                        j += 1
                    }
                }
            }
            written = n
        }
    }

    /// Rows in any list, duplicates removed: a bitmap over the lists' row-id span when that span
    /// is small against the total (its words ≤ the entries), otherwise a k-way heap merge.
    public static func union(_ lists: [[RowID]]) -> [RowID] {
        let lists = lists.filter { !$0.isEmpty }
        if lists.isEmpty { return [] }
        if lists.count == 1 { return lists[0] }
        let lo = lists.map { $0[0] }.min() ?? 0
        let hi = lists.map { $0[$0.count - 1] }.max() ?? 0
        let total = lists.reduce(0) { $0 + $1.count }
        if Int((hi - lo) >> 6) <= total { return bitmapUnion(lists, lo, hi, total) }
        return heapUnion(lists)
    }

    static func bitmapUnion(_ lists: [[RowID]], _ lo: RowID, _ hi: RowID, _ total: Int) -> [RowID] {
        var bits = [UInt64](repeating: 0, count: Int((hi - lo) >> 6) + 1)
        bits.withUnsafeMutableBufferPointer { w in
            for l in lists {
                for x in l {
                    let d = x - lo
                    w[Int(d >> 6)] |= 1 << UInt64(d & 63)
                }
            }
        }
        return [RowID](unsafeUninitializedCapacity: total) { o, written in
            var n = 0
            for (i, word) in bits.enumerated() {
                var m = word
                while m != 0 {
                    o[n] = lo + RowID(i << 6 + m.trailingZeroBitCount)
                    n += 1
                    m &= m - 1
                }
            }
            written = n
        }
    }

    /// k-way merge with a binary heap.
    static func heapUnion(_ lists: [[RowID]]) -> [RowID] {
        // Heap of (value, list index), positions per list.
        struct ByValue: HeapOrder {
            @inline(__always) func less(_ a: (RowID, Int), _ b: (RowID, Int)) -> Bool { a.0 < b.0 }
        }
        var heap = BinaryHeap(order: ByValue(), elements: lists.indices.map { (lists[$0][0], $0) })
        var pos = [Int](repeating: 0, count: lists.count)
        var out: [RowID] = []
        out.reserveCapacity(lists.map(\.count).max() ?? 0)
        while let (v, k) = heap.top {
            if out.last != v { out.append(v) }
            pos[k] += 1
            if pos[k] < lists[k].count {
                heap.replaceTop((lists[k][pos[k]], k))
            } else {
                _ = heap.pop()
            }
        }
        return out
    }
}

/// A set of rows as a bitmap over their span, for O(1) membership tests of rows arriving in
/// another order (an ordered stream tested against the rows of other predicates). Built from
/// rows in any order, duplicates allowed, without sorting them.
///
/// ```swift
/// let set = RowMembership([9, 3, 3, 70])
/// set.contains(70)   // true
/// set.contains(4)    // false
/// ```
public struct RowMembership: Sendable {
    let lo: RowID
    let words: [UInt64]

    /// The set of `rows`.
    public init(_ rows: [RowID]) {
        guard let lo = rows.min(), let hi = rows.max() else {
            self.lo = 0
            words = []
            return
        }
        self.lo = lo
        var bits = [UInt64](repeating: 0, count: Int((hi - lo) >> 6) + 1)
        bits.withUnsafeMutableBufferPointer { w in
            for x in rows {
                let d = x - lo
                w[Int(d >> 6)] |= 1 << UInt64(d & 63)
            }
        }
        words = bits
    }

    /// Whether `row` is in the set.
    @inline(__always)
    public func contains(_ row: RowID) -> Bool {
        guard row >= lo else { return false }
        let d = row - lo
        let i = Int(d >> 6)
        return i < words.count && (words[i] >> UInt64(d & 63)) & 1 == 1
    }
}

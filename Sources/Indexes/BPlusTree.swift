// BPlusTree: a counted, copy-on-write B+tree of unique (key, row id) entries.
//
// The engine under `OrderedIndex`. Entries are ordered by key, then row id. Internal nodes keep
// per-child entry counts, so the rank of any position — and so the size of any range — is found
// in O(log n). Nodes are classes shared between copies of the tree; every mutation first makes
// the path it touches unique (`isKnownUniquelyReferenced`), so a copy of the tree is an O(1)
// snapshot that later writes never disturb. Reading and iteration live in BPlusTree+Read.swift.
//
// Invariants (checked by `checkInvariants()`; M = `maxEntries`, m = M / 2):
//  1. Every leaf is at the same depth.
//  2. A leaf holds 1…M entries (0 only when it is the root), `keys.count == rows.count`, and its
//     entries are strictly increasing by (key, row id).
//  3. An internal node holds 2…M children (≥ 2 also for the root), `children.count - 1`
//     separators (keys[i], rows[i]) and `counts.count == children.count`.
//  4. Every non-root node holds ≥ m entries (leaf) or ≥ m children (internal).
//  5. For every separator i: every entry of children[i] < separator i ≤ every entry of
//     children[i + 1]. (A separator may be an entry that has since been deleted.)
//  6. counts[i] == children[i].total, and `total` is the number of entries under a node.
//  7. The tree's `count` equals the root's `total`.

/// One node; `children.isEmpty` marks a leaf. Shared nodes are never mutated (see header).
final class BNode<Key: TreeKey>: @unchecked Sendable {
    // Exclusivity is guaranteed by construction (a node is mutated only while uniquely referenced
    // by the one writer), so the per-access dynamic checks, which every lookup would pay, are
    // turned off.
    @exclusivity(unchecked) var keys: [Key]
    @exclusivity(unchecked) var rows: [RowID]
    @exclusivity(unchecked) var children: [BNode<Key>]
    @exclusivity(unchecked) var counts: [Int]
    @exclusivity(unchecked) var total: Int

    init(keys: [Key] = [], rows: [RowID] = [], children: [BNode<Key>] = [], counts: [Int] = [], total: Int = 0) {
        self.keys = keys
        self.rows = rows
        self.children = children
        self.counts = counts
        self.total = total
    }

    @inline(__always) var isLeaf: Bool { children.isEmpty }

    func copy() -> BNode<Key> {
        BNode(keys: keys, rows: rows, children: children, counts: counts, total: total)
    }
}

/// An error found by `checkInvariants()`, naming the numbered invariant.
public struct InvariantViolation: Error, CustomStringConvertible, Sendable {
    /// What is wrong, starting with the invariant's number.
    public var description: String
}

@inline(__always)
func entryLess<K: TreeKey>(_ k1: K, _ r1: RowID, _ k2: K, _ r2: RowID) -> Bool {
    k1 < k2 || (!(k2 < k1) && r1 < r2)
}

/// A copy-on-write counted B+tree of unique (key, row id) entries.
struct BPlusTree<Key: TreeKey>: @unchecked Sendable {
    var root: BNode<Key>
    let maxEntries: Int
    var minEntries: Int { maxEntries / 2 }

    init(maxEntries: Int = 64) {
        self.maxEntries = max(4, maxEntries)
        self.root = BNode()
    }

    var count: Int { root.total }

    // MARK: insert

    /// Inserts an entry; returns false when it was already present.
    @discardableResult
    mutating func insert(_ key: Key, _ row: RowID) -> Bool {
        if !isKnownUniquelyReferenced(&root) { root = root.copy() }
        let (inserted, split) = Self.insert(key, row, into: root, max: maxEntries)
        if let (sk, sr, right) = split {
            let left = root
            root = BNode(
                keys: [sk], rows: [sr], children: [left, right], counts: [left.total, right.total],
                total: left.total + right.total)
        }
        return inserted
    }

    /// Number of the node's entries (keys[i], rows[i]) before position (key, row) — in a leaf,
    /// the index of the first entry at or after it. Positions widen the row (BPlusTree+Read.swift).
    @inline(__always)
    static func leafFor(_ n: BNode<Key>, _ key: Key, _ row: UInt64) -> Int {
        // One access to each array, then no bounds or exclusivity checks in the loop.
        let keys = n.keys
        let rows = n.rows
        return keys.withUnsafeBufferPointer { ks in
            var lo = 0
            var hi = ks.count
            while lo < hi {
                let mid = (lo + hi) >> 1
                if before(ks[mid], rows[mid], key, row) { lo = mid + 1 } else { hi = mid }
            }
            return lo
        }
    }

    /// Number of separators at or before position (key, row): the child that holds the entries
    /// at or after it (invariant 5). Rows are integers, so "at or before (key, row)" is "before
    /// (key, row + 1)"; a position's row is at most 2^32, so the sum cannot overflow.
    @inline(__always)
    static func childFor(_ n: BNode<Key>, _ key: Key, _ row: UInt64) -> Int {
        leafFor(n, key, row + 1)
    }

    private static func insert(
        _ key: Key, _ row: RowID, into n: BNode<Key>, max: Int
    )
        -> (Bool, (Key, RowID, BNode<Key>)?)
    {
        if n.isLeaf {
            let i = leafFor(n, key, UInt64(row))
            if i < n.keys.count, !(key < n.keys[i]), n.rows[i] == row { return (false, nil) }
            n.keys.insert(key, at: i)
            n.rows.insert(row, at: i)
            n.total += 1
            guard n.keys.count > max else { return (true, nil) }
            let mid = n.keys.count / 2
            let right = BNode<Key>(
                keys: Array(n.keys[mid...]), rows: Array(n.rows[mid...]),
                total: n.keys.count - mid)
            n.keys.removeSubrange(mid...)
            n.rows.removeSubrange(mid...)
            n.total = mid
            return (true, (right.keys[0], right.rows[0], right))
        }
        let i = childFor(n, key, UInt64(row))
        if !isKnownUniquelyReferenced(&n.children[i]) { n.children[i] = n.children[i].copy() }
        let (inserted, split) = insert(key, row, into: n.children[i], max: max)
        guard inserted else { return (false, nil) }
        n.total += 1
        guard let (sk, sr, right) = split else {
            n.counts[i] += 1
            return (true, nil)
        }
        n.keys.insert(sk, at: i)
        n.rows.insert(sr, at: i)
        n.children.insert(right, at: i + 1)
        n.counts[i] = n.children[i].total
        n.counts.insert(right.total, at: i + 1)
        guard n.children.count > max else { return (true, nil) }
        // Split an internal node: separator mid-1 moves up.
        let mid = n.children.count / 2
        let upKey = n.keys[mid - 1]
        let upRow = n.rows[mid - 1]
        let rc = Array(n.counts[mid...])
        let r = BNode<Key>(
            keys: Array(n.keys[mid...]), rows: Array(n.rows[mid...]),
            children: Array(n.children[mid...]), counts: rc, total: rc.reduce(0, +))
        n.keys.removeSubrange((mid - 1)...)
        n.rows.removeSubrange((mid - 1)...)
        n.children.removeSubrange(mid...)
        n.counts.removeSubrange(mid...)
        n.total -= r.total
        return (true, (upKey, upRow, r))
    }

    // MARK: remove

    /// Removes an entry; returns false when it was absent.
    @discardableResult
    mutating func remove(_ key: Key, _ row: RowID) -> Bool {
        if !isKnownUniquelyReferenced(&root) { root = root.copy() }
        let removed = Self.remove(key, row, from: root, min: minEntries)
        if !root.isLeaf, root.children.count == 1 { root = root.children[0] }
        return removed
    }

    private static func remove(_ key: Key, _ row: RowID, from n: BNode<Key>, min: Int) -> Bool {
        if n.isLeaf {
            let i = leafFor(n, key, UInt64(row))
            guard i < n.keys.count, !(key < n.keys[i]), n.rows[i] == row else { return false }
            n.keys.remove(at: i)
            n.rows.remove(at: i)
            n.total -= 1
            return true
        }
        let i = childFor(n, key, UInt64(row))
        if !isKnownUniquelyReferenced(&n.children[i]) { n.children[i] = n.children[i].copy() }
        guard remove(key, row, from: n.children[i], min: min) else { return false }
        n.counts[i] -= 1
        n.total -= 1
        let c = n.children[i]
        let size = c.isLeaf ? c.keys.count : c.children.count
        if size < min { rebalance(n, child: i, min: min) }
        return true
    }

    /// Fixes an underfull child i by borrowing from a sibling or merging with it.
    private static func rebalance(_ n: BNode<Key>, child i: Int, min: Int) {
        // Pair (l, l+1) with the underfull child in it.
        let l = i > 0 ? i - 1 : i
        guard l + 1 < n.children.count else { return }
        for j in [l, l + 1] where !isKnownUniquelyReferenced(&n.children[j]) {
            n.children[j] = n.children[j].copy()
        }
        let left = n.children[l]
        let right = n.children[l + 1]
        let leftSize = left.isLeaf ? left.keys.count : left.children.count
        let rightSize = right.isLeaf ? right.keys.count : right.children.count
        if leftSize + rightSize < 2 * min {  // merged size ≤ 2m − 1 ≤ M
            merge(n, at: l)
            return
        }
        // Borrow one from the larger side.
        rotate(n, at: l, toRight: leftSize > rightSize)
        n.counts[l] = left.total
        n.counts[l + 1] = right.total
    }

    /// Merges child l + 1 into child l (an inner node takes the separator key down with it).
    private static func merge(_ n: BNode<Key>, at l: Int) {
        let left = n.children[l]
        let right = n.children[l + 1]
        if !left.isLeaf {
            left.keys.append(n.keys[l])
            left.rows.append(n.rows[l])
            left.children += right.children
            left.counts += right.counts
        }
        left.keys += right.keys
        left.rows += right.rows
        left.total += right.total
        n.keys.remove(at: l)
        n.rows.remove(at: l)
        n.children.remove(at: l + 1)
        n.counts.remove(at: l + 1)
        n.counts[l] = left.total
    }

    /// Moves one entry (leaf) or child (inner node, rotating through the separator) between
    /// children l and l + 1: the last of child l to the front of child l + 1 when `toRight`,
    /// else the first of child l + 1 to the end of child l. Afterwards separator l is again the
    /// first key of child l + 1's subtree.
    private static func rotate(_ n: BNode<Key>, at l: Int, toRight: Bool) {
        let (from, to) = toRight ? (n.children[l], n.children[l + 1]) : (n.children[l + 1], n.children[l])
        // Where the moved key leaves `from` and enters `to` (children: likewise).
        let take = toRight ? from.keys.count - 1 : 0
        let put = toRight ? 0 : to.keys.count
        if from.isLeaf {
            to.keys.insert(from.keys.remove(at: take), at: put)
            to.rows.insert(from.rows.remove(at: take), at: put)
            from.total -= 1
            to.total += 1
            let right = n.children[l + 1]
            n.keys[l] = right.keys[0]
            n.rows[l] = right.rows[0]
            return
        }
        let takeChild = toRight ? from.children.count - 1 : 0
        let putChild = toRight ? 0 : to.children.count
        let cnt = from.counts.remove(at: takeChild)
        to.children.insert(from.children.remove(at: takeChild), at: putChild)
        to.counts.insert(cnt, at: putChild)
        // The separator goes down into `to`; `from`'s key at the boundary comes up in its place.
        to.keys.insert(n.keys[l], at: put)
        to.rows.insert(n.rows[l], at: put)
        n.keys[l] = from.keys.remove(at: take)
        n.rows[l] = from.rows.remove(at: take)
        from.total -= cnt
        to.total += cnt
    }

    // MARK: bulk load

    /// Builds a tree from entries sorted strictly by (key, row), filling nodes to capacity.
    init(sortedKeys keys: [Key], rows: [RowID], maxEntries: Int = 64) {
        self.init(maxEntries: maxEntries)
        guard !keys.isEmpty else { return }
        let cap = self.maxEntries
        // Level 0: leaves.
        var level: [BNode<Key>] = []
        for range in Self.chunks(keys.count, cap: cap, min: cap / 2) {
            level.append(BNode(keys: Array(keys[range]), rows: Array(rows[range]), total: range.count))
        }
        var firsts: [(Key, RowID)] = level.map { ($0.keys[0], $0.rows[0]) }
        while level.count > 1 {
            var next: [BNode<Key>] = []
            var nextFirsts: [(Key, RowID)] = []
            for range in Self.chunks(level.count, cap: cap, min: cap / 2) {
                let ch = Array(level[range])
                let counts = ch.map(\.total)
                let seps = firsts[range].dropFirst()
                next.append(
                    BNode(
                        keys: seps.map(\.0), rows: seps.map(\.1), children: ch, counts: counts,
                        total: counts.reduce(0, +)))
                nextFirsts.append(firsts[range.lowerBound])
            }
            level = next
            firsts = nextFirsts
        }
        root = level[0]
    }

    /// Splits n items into consecutive full chunks, evening out the last two so none is < min
    /// (a single chunk may be smaller: it becomes the root).
    static func chunks(_ n: Int, cap: Int, min: Int) -> [Range<Int>] {
        var out: [Range<Int>] = []
        var start = 0
        while start < n {
            let remaining = n - start
            if remaining <= cap {
                out.append(start..<n)
                break
            }
            if remaining < cap + min {
                let half = remaining / 2
                out.append(start..<(start + half))
                out.append((start + half)..<n)
                break
            }
            out.append(start..<(start + cap))
            start += cap
        }
        return out
    }
}

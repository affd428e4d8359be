// BPlusTree reading: ranks (counts of entries before a position), ordered visits forward and
// backward from any position, and `checkInvariants()`.
//
// A *position* is (key, row) with the row widened to UInt64: (k, 0) is before every entry with
// key k, (k, 2^32) after all of them, so value bounds and "strictly after (v, id)" resumes are the
// same code. Visits recurse down one bounded path and then walk whole subtrees; nothing is
// allocated per entry.

extension BPlusTree {
    /// Whether entry (k, r) lies before position (key, row).
    @inline(__always)
    static func before(_ k: Key, _ r: RowID, _ key: Key, _ row: UInt64) -> Bool {
        k < key || (!(key < k) && UInt64(r) < row)
    }

    /// Number of entries before position (key, row). O(log n).
    func rank(_ key: Key, _ row: UInt64) -> Int {
        var n = root
        var r = 0
        while !n.isLeaf {
            let i = Self.childFor(n, key, row)
            let counts = n.counts
            for j in 0..<i { r += counts[j] }
            n = n.children[i]
        }
        return r + Self.leafFor(n, key, row)
    }

    /// Visits entries at or after the position (or all, when `from` is nil) in ascending order
    /// until `body` returns false. Returns false when stopped early.
    @discardableResult
    func visitForward(from: (Key, UInt64)?, _ body: (Key, RowID) -> Bool) -> Bool {
        Self.forward(root, from, body)
    }

    private static func forward(_ n: BNode<Key>, _ from: (Key, UInt64)?, _ body: (Key, RowID) -> Bool) -> Bool {
        if n.isLeaf {
            let start = from.map { leafFor(n, $0.0, $0.1) } ?? 0
            var j = start
            let keys = n.keys
            let rows = n.rows
            let c = keys.count
            while j < c {
                if !body(keys[j], rows[j]) { return false }
                j += 1
            }
            return true
        }
        let start = from.map { childFor(n, $0.0, $0.1) } ?? 0
        for c in start..<n.children.count {
            if !forward(n.children[c], c == start ? from : nil, body) { return false }
        }
        return true
    }

    /// Visits entries strictly before the position (or all, when `before` is nil) in descending
    /// order until `body` returns false. Returns false when stopped early.
    @discardableResult
    func visitBackward(before: (Key, UInt64)?, _ body: (Key, RowID) -> Bool) -> Bool {
        Self.backward(root, before, body)
    }

    private static func backward(_ n: BNode<Key>, _ before: (Key, UInt64)?, _ body: (Key, RowID) -> Bool) -> Bool {
        if n.isLeaf {
            var j = (before.map { leafFor(n, $0.0, $0.1) } ?? n.keys.count) - 1
            let keys = n.keys
            let rows = n.rows
            while j >= 0 {
                if !body(keys[j], rows[j]) { return false }
                j -= 1
            }
            return true
        }
        let start = before.map { childFor(n, $0.0, $0.1) } ?? (n.children.count - 1)
        var c = start
        while c >= 0 {
            if !backward(n.children[c], c == start ? before : nil, body) { return false }
            c -= 1
        }
        return true
    }

    /// Every entry in order (tests and rebuilds).
    func allEntries() -> [(Key, RowID)] {
        var out: [(Key, RowID)] = []
        out.reserveCapacity(count)
        visitForward(from: nil) { k, r in
            out.append((k, r))
            return true
        }
        return out
    }

    /// Checks invariants 1–7 of BPlusTree.swift.
    func checkInvariants() throws {
        var leafDepth: Int? = nil
        var last: (Key, RowID)? = nil
        func fail(_ s: String) -> InvariantViolation { InvariantViolation(description: "B+tree: " + s) }

        func check(_ n: BNode<Key>, depth: Int, isRoot: Bool, lo: (Key, RowID)?, hi: (Key, RowID)?) throws -> Int {
            if n.isLeaf {
                if let d = leafDepth, d != depth { throw fail("1: leaves at depths \(d) and \(depth)") }
                leafDepth = depth
                guard n.keys.count == n.rows.count, n.counts.isEmpty else { throw fail("2: array sizes") }
                if n.keys.count > maxEntries { throw fail("2: leaf overfull \(n.keys.count)") }
                if !isRoot, n.keys.count < minEntries { throw fail("4: leaf underfull \(n.keys.count)") }
                for j in 0..<n.keys.count {
                    let (k, r) = (n.keys[j], n.rows[j])
                    if let (pk, pr) = last, !entryLess(pk, pr, k, r) { throw fail("2: order at leaf entry \(j)") }
                    if let (lk, lr) = lo, entryLess(k, r, lk, lr) { throw fail("5: entry below separator") }
                    if let (hk, hr) = hi, !entryLess(k, r, hk, hr) { throw fail("5: entry not below separator") }
                    last = (k, r)
                }
                if n.total != n.keys.count { throw fail("6: leaf total \(n.total) != \(n.keys.count)") }
                return n.total
            }
            let c = n.children.count
            guard n.keys.count == c - 1, n.rows.count == c - 1, n.counts.count == c else {
                throw fail("3: array sizes")
            }
            if c < 2 || c > maxEntries { throw fail("3: \(c) children") }
            if !isRoot, c < minEntries { throw fail("4: internal underfull \(c)") }
            var sum = 0
            for j in 0..<c {
                let l = j == 0 ? lo : (n.keys[j - 1], n.rows[j - 1])
                let h = j == c - 1 ? hi : (n.keys[j], n.rows[j])
                let t = try check(n.children[j], depth: depth + 1, isRoot: false, lo: l, hi: h)
                if n.counts[j] != t { throw fail("6: counts[\(j)] = \(n.counts[j]), subtree has \(t)") }
                sum += t
            }
            if n.total != sum { throw fail("6: total \(n.total) != \(sum)") }
            return sum
        }
        let t = try check(root, depth: 0, isRoot: true, lo: nil, hi: nil)
        if t != count { throw fail("7: count") }
    }
}

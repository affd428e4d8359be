// Footprint: approximate heap bytes held by each structure, for qbench's memory-per-entry figure.
//
// Counts array capacities times element stride plus a 32-byte header per array and a 16-byte
// header plus stored properties per class instance. Shared (snapshot) nodes are counted once per
// structure, as if unshared. Dictionary cost is estimated from capacity × (key + value stride).

extension BPlusTree {
    var approximateBytes: Int {
        func node(_ n: BNode<Key>) -> Int {
            var b = 16 + 5 * 8  // object header + stored properties
            b += 32 + n.keys.capacity * MemoryLayout<Key>.stride
            b += 32 + n.rows.capacity * MemoryLayout<RowID>.stride
            if !n.isLeaf {
                b += 32 + n.children.capacity * 8
                b += 32 + n.counts.capacity * 8
                for c in n.children { b += node(c) }
            }
            if Key.self == VarKey.self {
                for k in n.keys { if let v = k as? VarKey, !v.tail.isEmpty { b += 32 + v.tail.capacity } }
            }
            return b
        }
        return node(root)
    }
}

extension OrderedIndex {
    /// Approximate heap bytes held by the index.
    public var approximateBytes: Int { parts.fixed.approximateBytes + parts.variable.approximateBytes }
}

extension TextIndex {
    /// Approximate heap bytes held by the index (postings, token strings, dictionary table).
    public var approximateBytes: Int {
        var b = terms.capacity * (MemoryLayout<String>.stride + MemoryLayout<UInt32>.stride + 1)
        for k in terms.keys where k.utf8.count > 15 { b += 32 + k.utf8.count }  // short strings are inline
        b += postings.pages.count * (32 + postings.pageSize * 8)
        for id in 0..<terms.count { b += 32 + postings[id].capacity * MemoryLayout<RowID>.stride }
        return b
    }

    /// Total postings (row ids stored).
    public var postingCount: Int { (0..<terms.count).reduce(0) { $0 + postings[$1].count } }
}

extension SpatialIndex {
    /// Approximate heap bytes: (dense per-row arrays, R-tree layers, geohash B+tree).
    public var approximateBytes: (dense: Int, rtree: Int, geohash: Int) {
        let dense =
            parts.vectors.capacity * MemoryLayout<UnitVector>.stride + parts.cells.capacity * 8 + parts.tiers.capacity
            + (parts.vectors.pages.count + parts.cells.pages.count + parts.tiers.pages.count) * 40
        var rt = 0
        for case let t? in parts.layers {
            rt += (t.xs.capacity + t.ys.capacity + t.zs.capacity) * 8 + t.rows.capacity * 4
            for l in t.levels { rt += l.capacity * MemoryLayout<Box3>.stride }
        }
        return (dense, rt, parts.geohash.approximateBytes)
    }
}

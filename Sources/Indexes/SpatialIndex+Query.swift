// SpatialIndex radius queries: by geohash covering (range scans + exact refinement) and by
// R-tree descent (3-D box pruning + exact refinement), and the planner's count estimate.
//
// Both return the rows whose great-circle distance (GeoMath.distanceKm) is ≤ the radius (or <
// when `inclusive` is false), sorted by row id. `rows(withinKm:)` uses the structure that
// measured faster in qbench (see docs/indexes.md); the other stays available for comparison.

import RecordModel

/// Which structure answers a radius query.
public enum RadiusStrategy: Sendable, Hashable {
    case geohash, rtree
}

extension SpatialIndex {
    @inline(__always)
    static func accept(_ c2: Double, _ r2: Double, _ km: Double, _ inclusive: Bool) -> Bool {
        // Cheap reject far outside, then the exact test on the reported distance.
        if c2 > r2 * (1 + 1e-9) + 1e-18 { return false }
        let d = GeoMath.distanceKm(chord2: c2)
        return inclusive ? d <= km : d < km
    }

    /// Rows within `km` of `center`, sorted by row id. `expected` (an estimate, such as the
    /// planner's) reserves room for that many rows at once, up to 4,096, instead of growing the
    /// result as rows are found.
    public func rows(
        withinKm km: Double, of center: Location, inclusive: Bool = true,
        using strategy: RadiusStrategy = .rtree, expected: Int = 0
    ) -> [RowID] {
        guard center.hasValidCoordinates, km >= 0 else { return [] }
        var out = strategy == .geohash ? geohashRadius(km, center, inclusive) : rtreeRadius(km, center, inclusive)
        if expected > out.count { out.reserveCapacity(min(expected, 4096)) }
        baseRadius(km, center, inclusive, into: &out)
        Postings.sort(&out)
        return out
    }

    func geohashRadius(_ km: Double, _ center: Location, _ inclusive: Bool) -> [RowID] {
        let q = UnitVector(latitude: center.latitude, longitude: center.longitude)
        let r2 = GeoMath.chord2(forKm: km)
        var out: [RowID] = []
        let boxes = Geohash.boundingBoxes(latitude: center.latitude, longitude: center.longitude, km: km)
        for (lo, hi) in Geohash.covering(boxes) {
            parts.geohash.visit((FixedKey(a: lo, b: 0), 0), hi.map { (FixedKey(a: $0, b: 0), 0) }, .ascending) {
                _, row in
                if Self.accept(q.chord2(parts.vectors[Int(row)]), r2, km, inclusive) { out.append(row) }
                return true
            }
        }
        return out
    }

    func rtreeRadius(_ km: Double, _ center: Location, _ inclusive: Bool) -> [RowID] {
        var budget = Int.max
        return rtreeRadius(km, center, inclusive, budget: &budget) ?? []
    }

    /// `rtreeRadius`, giving up (nil) once it has expanded `budget` nodes (the buffer's rows
    /// count one node per `fanout`); `budget` is left with what was not spent.
    func rtreeRadius(_ km: Double, _ center: Location, _ inclusive: Bool, budget: inout Int) -> [RowID]? {
        let q = UnitVector(latitude: center.latitude, longitude: center.longitude)
        let r2 = GeoMath.chord2(forKm: km)
        var out: [RowID] = []
        var stack: [(Int, Int)] = []
        for (k, layer) in parts.layers.enumerated() {
            guard let tree = layer else { continue }
            let t = UInt8(k + 1)
            stack.append((tree.levels.count - 1, 0))
            while let (l, j) = stack.popLast() {
                budget -= 1
                if budget < 0 { return nil }
                if tree.levels[l][j].minDist2(q) > r2 * (1 + 1e-9) + 1e-18 { continue }
                if l == 0 {
                    for i in tree.children(level: 0, j) {
                        let row = tree.rows[i]
                        let dx = q.x - tree.xs[i]
                        let dy = q.y - tree.ys[i]
                        let dz = q.z - tree.zs[i]
                        if parts.tiers[Int(row)] == t, Self.accept(dx * dx + dy * dy + dz * dz, r2, km, inclusive) {
                            out.append(row)
                        }
                    }
                } else {
                    for c in tree.children(level: l, j) { stack.append((l - 1, c)) }
                }
            }
        }
        budget -= parts.buffer.count / max(1, fanout)
        if budget < 0 { return nil }
        for row in parts.buffer where Self.accept(q.chord2(parts.vectors[Int(row)]), r2, km, inclusive) {
            out.append(row)
        }
        return out
    }

    /// Base rows within the radius: one descent over every mapped tree (removed rows skipped),
    /// level by level. Each round first starts loading what its nodes' expansions will read
    /// (`StaticRTree.stretches`), then expands them: the cache misses of a level's nodes,
    /// in every layer's tree, overlap instead of being waited for one node at a time.
    func baseRadius(_ km: Double, _ center: Location, _ inclusive: Bool, into out: inout [RowID]) {
        var budget = Int.max
        _ = baseRadius(km, center, inclusive, into: &out, budget: &budget)
    }

    /// `baseRadius`, giving up (false, `out` partly filled) before a round would take the
    /// nodes expanded past `budget`; `budget` is left with what was not spent.
    func baseRadius(
        _ km: Double, _ center: Location, _ inclusive: Bool, into out: inout [RowID], budget: inout Int
    ) -> Bool {
        let q = UnitVector(latitude: center.latitude, longitude: center.longitude)
        let r2 = GeoMath.chord2(forKm: km)
        let skip = parts.removed.count > 0
        let reach = r2 * (1 + 1e-9) + 1e-18
        return parts.bases.withUnsafeBufferPointer { trees in
            // Each tree is read where it lies in the array (`pointee`): `trees[t]` copied it —
            // its section and level arrays retained and released — at every point read (a
            // seventh of a 10 km radius query's execution).
            guard let first = trees.baseAddress else { return true }
            // (tree, level, node) of the nodes to expand this round, and of the next round's.
            var nodes: [(Int, Int, Int)] = []
            var next: [(Int, Int, Int)] = []
            nodes.reserveCapacity(32)  // one allocation each: a round holds a few nodes per tree
            next.reserveCapacity(32)
            for t in trees.indices where (first + t).pointee.count > 0 {
                let top = (first + t).pointee.levelCount - 1
                if (first + t).pointee.box(top, 0).minDist2Branchless(q) <= reach { nodes.append((t, top, 0)) }
            }
            while !nodes.isEmpty {
                budget -= nodes.count
                if budget < 0 { return false }
                for (t, l, j) in nodes { (first + t).pointee.stretches(level: l, j).prefetch() }
                for (t, l, j) in nodes {
                    let tree = first + t
                    if l == 0 {
                        for i in tree.pointee.children(level: 0, j) {
                            let dx = q.x - tree.pointee.x(i)
                            let dy = q.y - tree.pointee.y(i)
                            let dz = q.z - tree.pointee.z(i)
                            let row = tree.pointee.row(i)
                            if Self.accept(dx * dx + dy * dy + dz * dz, r2, km, inclusive),
                                !(skip && parts.removed.contains(Int(row)))
                            {
                                out.append(row)
                            }
                        }
                    } else {
                        for c in tree.pointee.children(level: l, j)
                        where tree.pointee.box(l - 1, c).minDist2Branchless(q) <= reach {
                            next.append((t, l - 1, c))
                        }
                    }
                }
                swap(&nodes, &next)
                next.removeAll(keepingCapacity: true)
            }
            return true
        }
    }

    /// `rows(withinKm:of:inclusive:)` (the R-tree strategy) when finding them expands at most
    /// `budget` nodes; nil otherwise, having spent at most that. For a planner that would
    /// rather count a small circle's rows exactly, and hand them to the execution, than
    /// estimate them and find them again; a large circle costs it a bounded share of a descent.
    public func probe(withinKm km: Double, of center: Location, inclusive: Bool = true, budget: Int) -> [RowID]? {
        guard center.hasValidCoordinates, km >= 0 else { return [] }
        var budget = budget
        guard var out = rtreeRadius(km, center, inclusive, budget: &budget),
            baseRadius(km, center, inclusive, into: &out, budget: &budget)
        else { return nil }
        Postings.sort(&out)
        return out
    }

    /// Planner estimate of the rows within `km`: the entries of the geohash cells covering the
    /// circle, scaled by the share of the cells' area the circle takes (π/4 of its bounding
    /// boxes): up to 12 cells may cover many times the circle, and an upper bound that large made
    /// the planner intersect a small circle with a large index set. O(cells · log n).
    public func estimatedCount(withinKm km: Double, of center: Location) -> Int {
        guard center.hasValidCoordinates else { return 0 }
        let boxes = Geohash.boundingBoxes(latitude: center.latitude, longitude: center.longitude, km: km)
        let covering = Geohash.coveringCells(boxes)
        let fraction = min(1, Double.pi / 4 * Geohash.coveredFraction(boxes, of: covering))
        return min(Int((Double(coveringCount(covering.ranges)) * fraction).rounded(.up)), count)
    }

    /// The entries of the geohash cells covering the circle: an upper bound of its rows.
    func coveringCount(withinKm km: Double, of center: Location) -> Int {
        guard center.hasValidCoordinates else { return 0 }
        return min(
            coveringCount(Geohash.boundingBoxes(latitude: center.latitude, longitude: center.longitude, km: km)),
            count)
    }

    func coveringCount(_ boxes: [GeoBox]) -> Int { coveringCount(Geohash.covering(boxes)) }

    func coveringCount(_ ranges: [(UInt64, UInt64?)]) -> Int {
        var n = 0
        if parts.geohash.count > 0 {
            for (lo, hi) in ranges {
                n += parts.geohash.count((FixedKey(a: lo, b: 0), 0), hi.map { (FixedKey(a: $0, b: 0), 0) })
            }
        }
        for base in parts.bases { n += base.cellCount(ranges) }
        return n
    }
}

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
            geohash.visit((FixedKey(a: lo, b: 0), 0), hi.map { (FixedKey(a: $0, b: 0), 0) }, .ascending) { _, row in
                if Self.accept(q.chord2(vectors[Int(row)]), r2, km, inclusive) { out.append(row) }
                return true
            }
        }
        return out
    }

    func rtreeRadius(_ km: Double, _ center: Location, _ inclusive: Bool) -> [RowID] {
        let q = UnitVector(latitude: center.latitude, longitude: center.longitude)
        let r2 = GeoMath.chord2(forKm: km)
        var out: [RowID] = []
        var stack: [(Int, Int)] = []
        for (k, layer) in layers.enumerated() {
            guard let tree = layer else { continue }
            let t = UInt8(k + 1)
            stack.append((tree.levels.count - 1, 0))
            while let (l, j) = stack.popLast() {
                if tree.levels[l][j].minDist2(q) > r2 * (1 + 1e-9) + 1e-18 { continue }
                if l == 0 {
                    for i in tree.children(level: 0, j) {
                        let row = tree.rows[i]
                        let dx = q.x - tree.xs[i]
                        let dy = q.y - tree.ys[i]
                        let dz = q.z - tree.zs[i]
                        if tiers[Int(row)] == t, Self.accept(dx * dx + dy * dy + dz * dz, r2, km, inclusive) {
                            out.append(row)
                        }
                    }
                } else {
                    for c in tree.children(level: l, j) { stack.append((l - 1, c)) }
                }
            }
        }
        for row in buffer where Self.accept(q.chord2(vectors[Int(row)]), r2, km, inclusive) { out.append(row) }
        return out
    }

    /// Base rows within the radius (R-tree descent over the mapped tree, removed rows skipped).
    func baseRadius(_ km: Double, _ center: Location, _ inclusive: Bool, into out: inout [RowID]) {
        for tree in bases where tree.count > 0 { baseRadius(tree, km, center, inclusive, into: &out) }
    }

    /// Rows of one mapped tree within the radius.
    func baseRadius(
        _ tree: StaticRTree, _ km: Double, _ center: Location, _ inclusive: Bool, into out: inout [RowID]
    ) {
        let q = UnitVector(latitude: center.latitude, longitude: center.longitude)
        let r2 = GeoMath.chord2(forKm: km)
        let skip = removed.count > 0
        let reach = r2 * (1 + 1e-9) + 1e-18
        var stack: [(Int, Int)] = []
        stack.reserveCapacity(64)  // one allocation: a descent holds a few nodes per level
        let top = tree.levelCount - 1
        if tree.box(top, 0).minDist2Branchless(q) <= reach { stack.append((top, 0)) }
        // A node's children are tested when it is expanded, in one loop over their boxes (which
        // lie together): their cache misses overlap. Tested one per pop, each waited for the
        // one before it (the descent into a child's subtree came between).
        while let (l, j) = stack.popLast() {
            if l == 0 {
                for i in tree.children(level: 0, j) {
                    let dx = q.x - tree.x(i)
                    let dy = q.y - tree.y(i)
                    let dz = q.z - tree.z(i)
                    let row = tree.row(i)
                    if Self.accept(dx * dx + dy * dy + dz * dz, r2, km, inclusive),
                        !(skip && removed.contains(Int(row)))
                    {
                        out.append(row)
                    }
                }
            } else {
                for c in tree.children(level: l, j) where tree.box(l - 1, c).minDist2Branchless(q) <= reach {
                    stack.append((l - 1, c))
                }
            }
        }
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
        if geohash.count > 0 {
            for (lo, hi) in ranges {
                n += geohash.count((FixedKey(a: lo, b: 0), 0), hi.map { (FixedKey(a: $0, b: 0), 0) })
            }
        }
        for base in bases { n += base.cellCount(ranges) }
        return n
    }
}

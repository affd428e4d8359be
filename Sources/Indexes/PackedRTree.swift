// PackedRTree: an immutable, bulk-packed R-tree of points (Hilbert order), the spatial index's
// base and delta layers.
//
// Points are sorted along a Hilbert curve over (longitude, latitude) and cut into leaves of
// `fanout` points; each upper level groups `fanout` consecutive nodes. Children are found by
// arithmetic (node j of level l covers nodes j·B ..< (j+1)·B of level l − 1; leaf j covers points
// j·B ..< (j+1)·B), so the tree is a handful of flat arrays: no pointers, no per-node objects.
// Leaves store unit vectors (x, y, z) and row ids in separate arrays. Node boxes are axis-aligned
// boxes *in 3-D* around the nodes' unit vectors, not lat/lon boxes: the Euclidean distance from
// the query's vector to such a box is a valid lower bound of the chord to every point inside
// (points lie in the box), costs six comparisons and no trigonometry, and has no special case at
// ±180° or at the poles. (GeoBox.minChord2 is the exact bound for lat/lon cells; it costs ~20
// trigonometric calls, too much per R-tree node.)
// Updates do not touch a packed tree: SpatialIndex marks entries stale and repacks (see there).

import Foundation

/// A bulk-packed point R-tree. Immutable once built; shared freely between snapshots.
final class PackedRTree: Sendable {
    let fanout: Int
    let xs: [Double]
    let ys: [Double]
    let zs: [Double]
    let rows: [RowID]
    /// levels[0] are leaf boxes; the last level holds the single root box.
    let levels: [[Box3]]

    var count: Int { rows.count }

    /// Packs (row, unit vector) points.
    init(points: [(row: RowID, v: UnitVector)], fanout: Int = 16) {
        let b = max(2, fanout)
        self.fanout = b
        let order = points.indices.map { i in
            let v = points[i].v
            return (Self.hilbert(asin(max(-1, min(1, v.z))) * 180 / .pi, atan2(v.y, v.x) * 180 / .pi), i)
        }.sorted { $0 < $1 }
        var xs: [Double] = []
        var ys: [Double] = []
        var zs: [Double] = []
        var rows: [RowID] = []
        for (_, i) in order {
            let p = points[i]
            xs.append(p.v.x)
            ys.append(p.v.y)
            zs.append(p.v.z)
            rows.append(p.row)
        }
        var levels: [[Box3]] = []
        if !rows.isEmpty {
            var leafBoxes: [Box3] = []
            var start = 0
            while start < rows.count {
                let end = min(start + b, rows.count)
                var box = Box3.empty
                for i in start..<end { box.add(xs[i], ys[i], zs[i]) }
                leafBoxes.append(box)
                start = end
            }
            levels.append(leafBoxes)
            while let last = levels.last, last.count > 1 {
                var up: [Box3] = []
                var s = 0
                while s < last.count {
                    let e = min(s + b, last.count)
                    var box = Box3.empty
                    for i in s..<e { box.add(last[i]) }
                    up.append(box)
                    s = e
                }
                levels.append(up)
            }
        }
        self.xs = xs
        self.ys = ys
        self.zs = zs
        self.rows = rows
        self.levels = levels
    }

    /// Children of node `j` at level `l` (l ≥ 1: nodes of level l − 1; l = 0: points).
    @inline(__always)
    func children(level l: Int, _ j: Int) -> Range<Int> {
        let n = l == 0 ? rows.count : levels[l - 1].count
        return (j * fanout)..<min((j + 1) * fanout, n)
    }

    /// Position of (lat, lon) along a Hilbert curve on a 2^16 × 2^16 grid.
    static func hilbert(_ lat: Double, _ lon: Double) -> UInt32 {
        let side = 65536.0
        var x = UInt32(max(0, min(side - 1, (lon + 180) / 360 * side)))
        var y = UInt32(max(0, min(side - 1, (lat + 90) / 180 * side)))
        var d: UInt32 = 0
        var s: UInt32 = 1 << 15
        while s > 0 {
            let rx: UInt32 = (x & s) > 0 ? 1 : 0
            let ry: UInt32 = (y & s) > 0 ? 1 : 0
            d &+= s &* s &* ((3 &* rx) ^ ry)
            if ry == 0 {
                if rx == 1 {
                    x = 65535 &- x
                    y = 65535 &- y
                }
                swap(&x, &y)
            }
            s >>= 1
        }
        return d
    }
}

/// An axis-aligned box in 3-D around unit vectors.
struct Box3: Sendable {
    var minX, maxX, minY, maxY, minZ, maxZ: Double

    static let empty = Box3(minX: .infinity, maxX: -.infinity, minY: .infinity, maxY: -.infinity,
                            minZ: .infinity, maxZ: -.infinity)

    @inline(__always)
    mutating func add(_ x: Double, _ y: Double, _ z: Double) {
        minX = min(minX, x); maxX = max(maxX, x)
        minY = min(minY, y); maxY = max(maxY, y)
        minZ = min(minZ, z); maxZ = max(maxZ, z)
    }

    mutating func add(_ b: Box3) {
        minX = min(minX, b.minX); maxX = max(maxX, b.maxX)
        minY = min(minY, b.minY); maxY = max(maxY, b.maxY)
        minZ = min(minZ, b.minZ); maxZ = max(maxZ, b.maxZ)
    }

    /// Squared Euclidean distance from `v` to the box: a lower bound of the squared chord from
    /// `v` to any unit vector inside. Shrunk by 1e-15 so rounding can never make it exceed an
    /// exact chord² of a point in the box.
    @inline(__always)
    func minDist2(_ v: UnitVector) -> Double {
        let dx = v.x < minX ? minX - v.x : (v.x > maxX ? v.x - maxX : 0)
        let dy = v.y < minY ? minY - v.y : (v.y > maxY ? v.y - maxY : 0)
        let dz = v.z < minZ ? minZ - v.z : (v.z > maxZ ? v.z - maxZ : 0)
        return max(0, dx * dx + dy * dy + dz * dz - 1e-15)
    }
}

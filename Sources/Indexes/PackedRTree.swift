// PackedRTree: an immutable, bulk-packed R-tree of points, the spatial index's base and delta
// layers.
//
// Packing puts the points in an order where every run of B^k points aligned on B^k is one
// subtree: `.str` is Sort-Tile-Recursive applied top-down (each subtree's points are cut into
// ⌈√c⌉ longitude slices, each slice sorted by latitude and cut into the c child subtrees, and so
// on down), `.hilbert` sorts along a Hilbert curve over (longitude, latitude). Leaves are runs of
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

/// How a packed R-tree orders its points (see PackedRTree.swift).
public enum RTreePacking: Sendable, Hashable {
    /// Sort-Tile-Recursive, top-down.
    case str
    /// Hilbert-curve order over longitude and latitude.
    case hilbert
}

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
    init(points: [(row: RowID, v: UnitVector)], fanout: Int = 16, packing: RTreePacking = .str) {
        let b = max(2, fanout)
        self.fanout = b
        let lat = points.map { asin(max(-1, min(1, $0.v.z))) * 180 / .pi }
        let lon = points.map { atan2($0.v.y, $0.v.x) * 180 / .pi }
        let order: [Int]
        switch packing {
        case .hilbert:
            order = points.indices.map { (Self.hilbert(lat[$0], lon[$0]), $0) }.sorted { $0 < $1 }.map(\.1)
        case .str:
            order = Self.strOrder(lat: lat, lon: lon, fanout: b)
        }
        var xs: [Double] = []
        var ys: [Double] = []
        var zs: [Double] = []
        var rows: [RowID] = []
        xs.reserveCapacity(points.count)
        ys.reserveCapacity(points.count)
        zs.reserveCapacity(points.count)
        rows.reserveCapacity(points.count)
        for i in order {
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

    /// Top-down Sort-Tile-Recursive order: runs of B^k aligned points form subtrees. Each slice
    /// is sorted by `sortByKey` on the coordinates' order-preserving bits, stably.
    static func strOrder(
        lat: [Double], lon: [Double], fanout b: Int,
        sortByKey: (inout [(key: UInt64, value: Int)]) -> Void = stableSortByKey
    ) -> [Int] {
        var idx = Array(lat.indices)
        guard idx.count > b else { return idx }
        var tmp: [(key: UInt64, value: Int)] = []
        tmp.reserveCapacity(idx.count)
        // Sorts idx[lo..<hi] by key, stably, through a (key, index) buffer: sequential,
        // cache-friendly. The keys are the coordinates' order-preserving bits (−0 as +0), so
        // the order is `<` on the coordinates, equal ones kept in their order.
        func sortRange(_ lo: Int, _ hi: Int, _ key: [Double]) {
            tmp.removeAll(keepingCapacity: true)
            for i in lo..<hi { tmp.append((KeyEncoding.orderBits(key[idx[i]]), idx[i])) }
            sortByKey(&tmp)
            for (o, e) in tmp.enumerated() { idx[lo + o] = e.value }
        }
        var cap = b  // points per child subtree at the top
        while cap * b < idx.count { cap *= b }
        func order(_ lo: Int, _ hi: Int, _ cap: Int) {
            guard cap >= b, hi - lo > 1 else { return }
            let m = hi - lo
            let children = (m + cap - 1) / cap
            let slices = Int(Double(children).squareRoot().rounded(.up))
            let perSlice = (children + slices - 1) / slices * cap
            sortRange(lo, hi, lon)
            var s = lo
            while s < hi {
                let e = min(s + perSlice, hi)
                sortRange(s, e, lat)
                var c = s
                while c < e {
                    let ce = min(c + cap, e)
                    order(c, ce, cap / b)
                    c = ce
                }
                s = e
            }
        }
        order(0, idx.count, cap)
        return idx
    }

    /// Sorts `a` by key, keeping equal keys in their order: from 1 024 entries a
    /// least-significant-digit radix sort with 16-bit digits (a pass only for each digit in
    /// which keys differ), below that the standard library's (stable) sort.
    static func stableSortByKey(_ a: inout [(key: UInt64, value: Int)]) {
        guard a.count >= 1024 else {
            a.sort { $0.key < $1.key }
            return
        }
        RadixSort.sort(&a, keyBits: 64, digitBits: 16) { $0.key }
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

    static let empty = Box3(
        minX: .infinity, maxX: -.infinity, minY: .infinity, maxY: -.infinity,
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

    /// Squared distance from `v` to the farthest corner: no point inside is farther.
    @inline(__always)
    func maxDist2(_ v: UnitVector) -> Double {
        let dx = max(abs(v.x - minX), abs(v.x - maxX))
        let dy = max(abs(v.y - minY), abs(v.y - maxY))
        let dz = max(abs(v.z - minZ), abs(v.z - maxZ))
        return dx * dx + dy * dy + dz * dz
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

    /// ``minDist2(_:)`` without branches, for a radius descent: per axis max(min − v, v − max,
    /// 0) — the same value as "min − v below the box, v − max above it, 0 inside" (the other
    /// difference is negative) — with vector maxima instead of two data-dependent branches an
    /// axis, which a descent mispredicts often. The squares are summed in x, y, z order, so the
    /// result is the same to the bit. The nearest-first iterator keeps the branches: for it this
    /// form is slower.
    @inline(__always)
    func minDist2Branchless(_ v: UnitVector) -> Double {
        let q = SIMD4(v.x, v.y, v.z, 0)
        let below = SIMD4(minX, minY, minZ, 0) - q
        let above = q - SIMD4(maxX, maxY, maxZ, 0)
        // Lane selects, not `pointwiseMax`: that one orders NaNs (`Double.maximum`) and was an
        // out-of-line call, twice per box (a fifth of a radius descent). The inputs are finite.
        let zero = SIMD4<Double>()
        let farther = below.replacing(with: above, where: above .> below)
        let d = farther.replacing(with: zero, where: farther .< zero)
        return max(0, d[0] * d[0] + d[1] * d[1] + d[2] * d[2] - 1e-15)
    }
}

// StaticSpatial: the spatial index of a checkpoint's base rows in static, mapped form
// (docs/index-segment-format.md, "spatial") — the packed R-tree's flat arrays as they are, and
// the points' geohash cells sorted, for the planner's estimates.
//
//   header = "CRSPA001" u32 fanout u32 level-count u64 point-count u64 boxes-offset
//            u64 cells-offset u64 0                                     (48 bytes) never change
//   sizes  = u64 nodes per level [level-count]             (level 0 = leaves, last = root)
//   points = f64 x[n] f64 y[n] f64 z[n] u32 row[n]          (unit vectors, packed order)
//   boxes  = per level, per node: f64 minX maxX minY maxY minZ maxZ   (at boxes-offset)
//   cells  = u64 level-32 geohash cell per point, ascending           (at cells-offset)
//
// Children are found by arithmetic as in PackedRTree: node j of level l covers nodes
// j·B ..< (j+1)·B of level l − 1; leaf j covers points j·B ..< (j+1)·B.

import CPrefetch
import RecordModel

/// A packed R-tree read from a section.
struct StaticRTree: Sendable {
    static let magic = "CRSPA001"
    static let headerSize = 48
    let s: SectionBytes
    let fanout: Int
    let count: Int
    let sizes: [Int]
    let levelStarts: [Int]
    let boxesAt: Int
    let cellsAt: Int
    var pointsAt: Int { Self.headerSize + 8 * sizes.count }

    init(_ s: SectionBytes) throws(IndexSectionError) {
        try s.header(Self.magic, size: Self.headerSize)
        self.s = s
        fanout = Int(s.u32(8))
        let levels = Int(s.u32(12))
        guard fanout >= 2, levels <= 64 else {
            throw IndexSectionError(s.name, offset: 8, "fanout \(fanout) or \(levels) levels out of range")
        }
        count = try s.boundedCount(s.u64(16), size: 28, at: 16)
        boxesAt = Int(truncatingIfNeeded: s.u64(24))
        cellsAt = Int(truncatingIfNeeded: s.u64(32))
        try s.within(Self.headerSize, 8 * levels, "level sizes")
        var sizes: [Int] = []
        var starts: [Int] = []
        var nodes = 0
        for l in 0..<levels {
            let n = try s.boundedCount(s.u64(Self.headerSize + 8 * l), size: 48, at: Self.headerSize + 8 * l)
            // Each level must have exactly ⌈below / B⌉ nodes, or the child arithmetic would run off.
            let below = l == 0 ? count : sizes[l - 1]
            guard n == (below + fanout - 1) / fanout else {
                throw IndexSectionError(
                    s.name, offset: Self.headerSize + 8 * l, "level \(l) has \(n) nodes for \(below) below")
            }
            sizes.append(n)
            starts.append(nodes)
            nodes += n
        }
        guard count == 0 || sizes.last == 1 else {
            throw IndexSectionError(s.name, offset: 12, "the top level is not a single root")
        }
        self.sizes = sizes
        levelStarts = starts
        try s.within(Self.headerSize + 8 * levels, 28 * count, "points")
        try s.within(boxesAt, 48 * nodes, "boxes")
        try s.within(cellsAt, 8 * count, "cells")
    }

    var levelCount: Int { sizes.count }
    @inline(__always) func x(_ i: Int) -> Double { s.f64(pointsAt + 8 * i) }
    @inline(__always) func y(_ i: Int) -> Double { s.f64(pointsAt + 8 * (count + i)) }
    @inline(__always) func z(_ i: Int) -> Double { s.f64(pointsAt + 8 * (2 * count + i)) }
    @inline(__always) func row(_ i: Int) -> RowID { s.u32(pointsAt + 24 * count + 4 * i) }

    @inline(__always) func box(_ l: Int, _ j: Int) -> Box3 {
        let o = boxesAt + 48 * (levelStarts[l] + j)
        return Box3(
            minX: s.f64(o), maxX: s.f64(o + 8), minY: s.f64(o + 16), maxY: s.f64(o + 24), minZ: s.f64(o + 32),
            maxZ: s.f64(o + 40))
    }

    /// What expanding node `j` of level `l` reads — its children's boxes (l ≥ 1), or its
    /// points' coordinates and rows (l = 0) — as byte stretches, for `Stretches.prefetch`.
    ///
    /// The hint is given by the caller, on the returned plain values: a method of the tree that
    /// made the (C) prefetch call itself was handed a copy of the tree — its section and level
    /// arrays retained and released — at every node expanded, as the compiler cannot see that the
    /// call leaves the tree alone.
    @inline(__always) func stretches(level l: Int, _ j: Int) -> Stretches {
        let r = children(level: l, j)
        guard let base = s.bytes.baseAddress, !r.isEmpty else {
            return Stretches(base: nil, from: .zero, length: .zero)
        }
        if l > 0 {
            return Stretches(
                base: base, from: SIMD4(boxesAt + 48 * (levelStarts[l - 1] + r.lowerBound), 0, 0, 0),
                length: SIMD4(48 * r.count, 0, 0, 0))
        }
        let (p, n, a, c) = (pointsAt, count, r.lowerBound, r.count)
        return Stretches(
            base: base, from: SIMD4(p + 8 * a, p + 8 * (n + a), p + 8 * (2 * n + a), p + 24 * n + 4 * a),
            length: SIMD4(8 * c, 8 * c, 8 * c, 4 * c))
    }

    /// Up to four stretches of a section's bytes (`length` 0: none).
    struct Stretches {
        let base: UnsafeRawPointer?
        let from: SIMD4<Int>
        let length: SIMD4<Int>

        /// Starts loading every 64-byte line of the stretches, aligned in memory (the section
        /// may start anywhere), without waiting for them (a hint).
        @inline(__always) func prefetch() {
            guard let base else { return }
            for k in 0..<4 where length[k] > 0 {
                let end = UInt(bitPattern: base + from[k] + length[k])
                var line = UInt(bitPattern: base + from[k]) & ~63
                while line < end {
                    cirrus_prefetch(UnsafeRawPointer(bitPattern: line))
                    line += 64
                }
            }
        }
    }

    /// Children of node `j` at level `l` (l ≥ 1: nodes of level l − 1; l = 0: points).
    @inline(__always) func children(level l: Int, _ j: Int) -> Range<Int> {
        let n = l == 0 ? count : sizes[l - 1]
        return min(j * fanout, n)..<min((j + 1) * fanout, n)
    }

    /// Points whose cell lies in [lo, hi) (an upper bound of the rows in the cells).
    func cellCount(_ lo: UInt64, _ hi: UInt64?) -> Int { cellCount([(lo, hi)]) }

    /// Points whose cell lies in any of `ranges` (half-open; nil: to the end). A covering's
    /// ranges are ascending and each holds few points, so every bound is searched for from the
    /// previous one, galloping (1, 2, 4, … entries ahead) before bisecting: a handful of probes
    /// per range instead of two searches of the whole array.
    func cellCount(_ ranges: [(UInt64, UInt64?)]) -> Int {
        var from = 0
        /// The first position ≥ `start` whose cell is ≥ v.
        func bound(_ v: UInt64, from start: Int) -> Int {
            var a = start
            var step = 1
            var b = start
            while b < count, s.u64(cellsAt + 8 * b) < v {
                a = b + 1
                b = start + step
                step <<= 1
            }
            b = min(b, count)
            while a < b {
                let m = (a + b) >> 1
                if s.u64(cellsAt + 8 * m) < v { a = m + 1 } else { b = m }
            }
            return a
        }
        var n = 0
        for (lo, hi) in ranges {
            // A range below the last one found (not expected of a covering) starts over.
            if from > 0, s.u64(cellsAt + 8 * (from - 1)) >= lo { from = 0 }
            let a = bound(lo, from: from)
            let b = hi.map { bound($0, from: a) } ?? count
            n += max(0, b - a)
            from = b
        }
        return n
    }

    /// The section from (row, location) pairs (a row's first pair counts): the same packing as
    /// the in-memory layers. The pairs are taken, and each intermediate array released once the
    /// next is made, so that the build holds about two copies of the points at a time (at 10M
    /// points each is hundreds of MB).
    static func encode(points: consuming [(RowID, Location)], fanout: Int = 16) -> [UInt8] {
        var cells: [UInt64] = []
        let tree: PackedRTree
        do {
            var pts: [(row: RowID, v: UnitVector)] = []
            pts.reserveCapacity(points.count)
            cells.reserveCapacity(points.count)
            // Rows come ascending from a pass over a layer: a repeat is then the previous row. A
            // set of rows is made only if they do not.
            var seen: Set<RowID>?
            for (row, loc) in points where loc.hasValidCoordinates {
                if seen == nil, let last = pts.last?.row, row <= last { seen = Set(pts.map(\.row)) }
                if seen != nil, !seen!.insert(row).inserted { continue }
                pts.append((row, UnitVector(latitude: loc.latitude, longitude: loc.longitude)))
                cells.append(Geohash.cell(latitude: loc.latitude, longitude: loc.longitude))
            }
            points = []
            seen = nil
            tree = PackedRTree(points: pts, fanout: fanout)
        }
        cells.sort()
        let boxesAt = headerSize + 8 * tree.levels.count + 28 * tree.count
        let alignedBoxes = (boxesAt + 7) & ~7
        let nodes = tree.levels.reduce(0) { $0 + $1.count }
        var w = SectionWriter()
        w.bytes.reserveCapacity(alignedBoxes + 48 * nodes + 8 * cells.count)
        w.magic(magic)
        w.u32(UInt32(tree.fanout))
        w.u32(UInt32(tree.levels.count))
        w.u64(UInt64(tree.count))
        w.u64(UInt64(alignedBoxes))
        w.u64(UInt64(alignedBoxes + 48 * nodes))
        w.u64(0)
        for l in tree.levels { w.u64(UInt64(l.count)) }
        for v in tree.xs { w.f64(v) }
        for v in tree.ys { w.f64(v) }
        for v in tree.zs { w.f64(v) }
        for r in tree.rows { w.u32(r) }
        w.pad8()
        for level in tree.levels {
            for b in level {
                for v in [b.minX, b.maxX, b.minY, b.maxY, b.minZ, b.maxZ] { w.f64(v) }
            }
        }
        for c in cells { w.u64(c) }
        return w.bytes
    }
}

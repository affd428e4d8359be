// Geohash: interleaved-bit cell ids and the cell covering of a query circle.
//
// A point's cell id is the 64-bit interleaving of its longitude and latitude quantized to 32
// bits each (longitude bit first, as in geohash): the top 2L bits name its cell at level L
// (2^L × 2^L cells of 360/2^L by 180/2^L degrees), and the ids of one cell form one contiguous
// range, so a cell is a range scan in an ordered index. The covering of a circle is built from
// its latitude/longitude bounding box (split in two across ±180°, widened to all longitudes when
// the circle holds a pole), at the finest level that needs at most `maxCells` cells; cells
// adjacent in id order are merged into one range.

import Foundation

enum Geohash {
    /// Spreads the 32 bits of `v` to the even bits of a 64-bit word.
    @inline(__always)
    static func spread(_ v: UInt32) -> UInt64 {
        var x = UInt64(v)
        x = (x | (x << 16)) & 0x0000_FFFF_0000_FFFF
        x = (x | (x << 8)) & 0x00FF_00FF_00FF_00FF
        x = (x | (x << 4)) & 0x0F0F_0F0F_0F0F_0F0F
        x = (x | (x << 2)) & 0x3333_3333_3333_3333
        x = (x | (x << 1)) & 0x5555_5555_5555_5555
        return x
    }

    @inline(__always)
    static func quantize(_ v: Double, _ lo: Double, _ span: Double) -> UInt32 {
        let q = (v - lo) / span * 4_294_967_296.0
        if !(q > 0) { return 0 }
        if q >= 4_294_967_295.0 { return .max }
        return UInt32(q)
    }

    /// The level-32 cell id of a point.
    static func cell(latitude: Double, longitude: Double) -> UInt64 {
        spread(quantize(longitude, -180, 360)) << 1 | spread(quantize(latitude, -90, 180))
    }

    /// Latitude/longitude boxes (degrees, no wrap) bounding the circle of `km` around a point.
    static func boundingBoxes(latitude φ: Double, longitude λ: Double, km: Double) -> [GeoBox] {
        let θ = km / GeoMath.earthRadiusKm * 180 / .pi  // angular radius, degrees
        let pad = 1e-9
        let latMin = φ - θ - pad
        let latMax = φ + θ + pad
        if latMax >= 90 || latMin <= -90 || θ >= 90 {
            return [GeoBox(latMin: max(-90, latMin), latMax: min(90, latMax), lonMin: -180, lonMax: 180)]
        }
        let s = sin(θ * .pi / 180) / cos(φ * .pi / 180)
        if s >= 1 { return [GeoBox(latMin: latMin, latMax: latMax, lonMin: -180, lonMax: 180)] }
        let dλ = asin(s) * 180 / .pi + pad
        let lo = λ - dλ
        let hi = λ + dλ
        if lo < -180 {
            return [
                GeoBox(latMin: latMin, latMax: latMax, lonMin: lo + 360, lonMax: 180),
                GeoBox(latMin: latMin, latMax: latMax, lonMin: -180, lonMax: hi),
            ]
        }
        if hi > 180 {
            return [
                GeoBox(latMin: latMin, latMax: latMax, lonMin: lo, lonMax: 180),
                GeoBox(latMin: latMin, latMax: latMax, lonMin: -180, lonMax: hi - 360),
            ]
        }
        return [GeoBox(latMin: latMin, latMax: latMax, lonMin: lo, lonMax: hi)]
    }

    /// Half-open ranges of level-32 ids covering the boxes with at most `maxCells` cells.
    static func covering(_ boxes: [GeoBox], maxCells: Int = 12, skipFineLevels: Bool = true) -> [(UInt64, UInt64?)] {
        coveringCells(boxes, maxCells: maxCells, skipFineLevels: skipFineLevels).ranges
    }

    /// The fraction of covering `c`'s cells' area (in degrees², as the cells are laid out) that
    /// the boxes take: the share of the cells' entries a uniform density would put in them.
    static func coveredFraction(
        _ boxes: [GeoBox], of c: (ranges: [(UInt64, UInt64?)], level: Int, cells: Int)
    ) -> Double {
        let side = Double(UInt64(1) << UInt64(max(0, c.level)))
        let cellArea = (180 / side) * (360 / side)
        var area = 0.0
        for b in boxes { area += max(0, b.latMax - b.latMin) * max(0, b.lonMax - b.lonMin) }
        guard c.cells > 0, cellArea > 0 else { return 1 }
        return min(1, area / (Double(c.cells) * cellArea))
    }

    /// The covering: its id ranges, its level and how many cells it has.
    static func coveringCells(
        _ boxes: [GeoBox], maxCells: Int = 12, skipFineLevels: Bool = true
    ) -> (ranges: [(UInt64, UInt64?)], level: Int, cells: Int) {
        // Skip the levels that cannot fit: at level L a box spans at least (its latitude extent /
        // 180 · 2^L) × (its longitude extent / 360 · 2^L) cells, so while the boxes' summed area
        // in cells exceeds maxCells the level is too fine. Starting one level above that bound
        // gives the same covering as starting at 31.
        var area = 0.0
        for b in boxes { area += max(0, b.latMax - b.latMin) / 180 * max(0, b.lonMax - b.lonMin) / 360 }
        var level = 31
        if skipFineLevels, area > 0 {
            let bound = 0.5 * log2(Double(maxCells) / area)
            if bound.isFinite, bound < 30 { level = max(0, Int(bound.rounded(.down)) + 1) }
        }
        var cells: [UInt64] = []
        cells.reserveCapacity(maxCells + 4)  // one allocation, not one per doubling
        while level >= 0 {
            cells.removeAll(keepingCapacity: true)
            let n = Double(UInt64(1) << UInt64(level))
            var total = 0
            for b in boxes {
                let i0 = Int(max(0, min(n - 1, ((b.latMin + 90) / 180 * n).rounded(.down))))
                let i1 = Int(max(0, min(n - 1, ((b.latMax + 90) / 180 * n).rounded(.down))))
                let j0 = Int(max(0, min(n - 1, ((b.lonMin + 180) / 360 * n).rounded(.down))))
                let j1 = Int(max(0, min(n - 1, ((b.lonMax + 180) / 360 * n).rounded(.down))))
                total += (i1 - i0 + 1) * (j1 - j0 + 1)
                if total > maxCells { break }
                for i in i0...i1 {
                    for j in j0...j1 { cells.append(spread(UInt32(j)) << 1 | spread(UInt32(i))) }
                }
            }
            if total <= maxCells { break }
            level -= 1
        }
        if level < 0 { return ([(0, nil)], 0, 1) }
        cells.sort()
        let shift = UInt64(64 - 2 * level)
        var out: [(UInt64, UInt64?)] = []
        out.reserveCapacity(cells.count)
        var k = 0
        while k < cells.count {
            var e = k
            while e + 1 < cells.count, cells[e + 1] <= cells[e] + 1 { e += 1 }
            let lo = level == 0 ? 0 : cells[k] << shift
            let next = cells[e] + 1
            let hi: UInt64? = (level == 0 || next >> (2 * UInt64(level)) != 0) ? nil : next << shift
            out.append((lo, hi))
            k = e + 1
        }
        return (out, level, cells.count)
    }
}

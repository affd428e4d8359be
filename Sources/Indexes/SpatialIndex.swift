// SpatialIndex: the points of one Location field — a geohash-cell B+tree and a layered
// bulk-packed R-tree over the same rows — with radius queries and nearest-first browsing
// (SpatialIndex+Query.swift, NearestIterator.swift).
//
// Layout. Dense per-row arrays (indexed by row id) hold each row's unit vector, level-32 cell id
// and *tier*: 0 = no location, 1 = in the base R-tree, 2 = in the delta R-tree, 3 = in the
// unpacked buffer. R-trees are immutable (PackedRTree); an entry of a tree counts only while its
// row's tier still names that tree, so deletes and updates never touch a tree. Writes go to the
// buffer (≤ 64 rows); a full buffer is packed with the live delta rows into a new delta; a delta
// larger than max(4096, n/8) is packed with everything into a new base. Amortized cost per write
// is O(log n) plus a repack share; queries visit at most three layers. The geohash tree is a
// BPlusTree<FixedKey> of (cell id, row id), updated in place.
//
// One location per row: list-of-location fields are not spatially indexed (CloudKit has no
// distance operator for them). Invalid coordinates (NaN, out of range) are not indexed.
// Value semantics: a copy is a snapshot (arrays and B+tree are copy-on-write; the first write
// after a snapshot copies only the touched 4 096-row pages of the dense tables, see PagedArray).

import Foundation
import RecordModel

/// A spatial index over one Location field.
///
/// ```swift
/// var places = SpatialIndex(points: [(1, Location(latitude: 48.85, longitude: 2.35))])
/// places.rows(withinKm: 5, of: Location(latitude: 48.86, longitude: 2.34))   // [1]
/// var it = places.nearest(to: Location(latitude: 0, longitude: 0))
/// it.next()   // (row 1, ≈ 5 431 km)
/// ```
public struct SpatialIndex: Sendable {
    var vectors = PagedArray(fill: UnitVector(x: .nan, y: .nan, z: .nan))
    var cells = PagedArray<UInt64>(fill: 0)
    var tiers = PagedArray<UInt8>(fill: 0)
    var base: PackedRTree
    var delta: PackedRTree
    var buffer: [RowID] = []
    var geohash: BPlusTree<FixedKey>
    let fanout: Int
    let packing: RTreePacking
    /// Number of rows with an indexed location.
    public private(set) var count = 0

    /// Bulk build from (row, location) pairs; invalid locations are skipped. `nodeSize` is the
    /// B+tree node size (tests use 4), `fanout` the R-tree's, `packing` its bulk-load order.
    public init<S: Sequence>(points: S, nodeSize: Int = 64, fanout: Int = 16, packing: RTreePacking = .str)
    where S.Element == (RowID, Location) {
        self.fanout = fanout
        self.packing = packing
        var pts: [(row: RowID, v: UnitVector)] = []
        var cellPairs: [(FixedKey, RowID)] = []
        var vectors = PagedArray(fill: UnitVector(x: .nan, y: .nan, z: .nan))
        var cells = PagedArray<UInt64>(fill: 0)
        var tiers = PagedArray<UInt8>(fill: 0)
        for (row, loc) in points where loc.hasValidCoordinates {
            let r = Int(row)
            if !tiers.contains(r) {
                vectors.ensure(r)
                cells.ensure(r)
                tiers.ensure(r)
            }
            if tiers[r] != 0 { continue }  // first location of a row wins
            let v = UnitVector(latitude: loc.latitude, longitude: loc.longitude)
            let c = Geohash.cell(latitude: loc.latitude, longitude: loc.longitude)
            vectors[r] = v
            cells[r] = c
            tiers[r] = 1
            pts.append((row, v))
            cellPairs.append((FixedKey(a: c, b: 0), row))
        }
        self.vectors = vectors
        self.cells = cells
        self.tiers = tiers
        count = pts.count
        base = PackedRTree(points: pts, fanout: fanout, packing: packing)
        delta = PackedRTree(points: [], fanout: fanout)
        geohash = OrderedIndex.build(&cellPairs, nodeSize)
    }

    /// An empty index.
    public init(nodeSize: Int = 64, fanout: Int = 16, packing: RTreePacking = .str) {
        self.init(points: [(RowID, Location)](), nodeSize: nodeSize, fanout: fanout, packing: packing)
    }

    /// The location vector of `row`, if it has one.
    func vector(_ row: RowID) -> UnitVector? {
        let r = Int(row)
        return tiers.contains(r) && tiers[r] != 0 ? vectors[r] : nil
    }

    /// Sets `row`'s location (replacing any previous one). Returns false for invalid coordinates
    /// (the row then has no location in the index).
    @discardableResult
    public mutating func insert(row: RowID, location: Location) -> Bool {
        remove(row: row)
        guard location.hasValidCoordinates else { return false }
        let r = Int(row)
        if !tiers.contains(r) {
            vectors.ensure(r)
            cells.ensure(r)
            tiers.ensure(r)
        }
        let c = Geohash.cell(latitude: location.latitude, longitude: location.longitude)
        vectors[r] = UnitVector(latitude: location.latitude, longitude: location.longitude)
        cells[r] = c
        tiers[r] = 3
        buffer.append(row)
        geohash.insert(FixedKey(a: c, b: 0), row)
        count += 1
        if buffer.count > 64 { repack() }
        return true
    }

    /// Removes `row`'s location. Returns false when it had none.
    @discardableResult
    public mutating func remove(row: RowID) -> Bool {
        let r = Int(row)
        guard tiers.contains(r), tiers[r] != 0 else { return false }
        geohash.remove(FixedKey(a: cells[r], b: 0), row)
        if tiers[r] == 3, let i = buffer.firstIndex(of: row) { buffer.remove(at: i) }
        tiers[r] = 0
        count -= 1
        return true
    }

    /// Packs the buffer into the delta layer, or everything into a new base when the delta is big.
    mutating func repack() {
        var pts: [(row: RowID, v: UnitVector)] = []
        for r in delta.rows where tiers[Int(r)] == 2 { pts.append((r, vectors[Int(r)])) }
        for r in buffer { pts.append((r, vectors[Int(r)])) }
        buffer.removeAll()
        if pts.count > max(4096, count / 8) {
            pts.removeAll()
            for r in 0..<tiers.capacity where tiers[r] != 0 {
                tiers[r] = 1
                pts.append((RowID(r), vectors[r]))
            }
            base = PackedRTree(points: pts, fanout: fanout, packing: packing)
            delta = PackedRTree(points: [], fanout: fanout)
        } else {
            for p in pts { tiers[Int(p.row)] = 2 }
            delta = PackedRTree(points: pts, fanout: fanout, packing: packing)
        }
    }

    /// Checks the geohash tree's invariants and that every layer agrees with the dense arrays.
    public func checkInvariants() throws {
        try geohash.checkInvariants()
        func fail(_ s: String) -> InvariantViolation { InvariantViolation(description: "spatial: " + s) }
        let live = (0..<tiers.capacity).filter { tiers[$0] != 0 }.count
        if live != count || geohash.count != count { throw fail("count \(count), live \(live), cells \(geohash.count)") }
        var seen = 0
        for (t, tree) in [(UInt8(1), base), (2, delta)] {
            for r in tree.rows where tiers[Int(r)] == t { seen += 1 }
        }
        for r in buffer where tiers[Int(r)] == 3 { seen += 1 }
        if seen != count { throw fail("layers hold \(seen) live rows, expected \(count)") }
        if buffer.count > 64 { throw fail("buffer overfull") }
    }
}

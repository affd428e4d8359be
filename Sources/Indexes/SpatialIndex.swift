// SpatialIndex: the points of one Location field — a geohash-cell B+tree and a layered
// bulk-packed R-tree over the same rows — with radius queries and nearest-first browsing
// (SpatialIndex+Query.swift, NearestIterator.swift).
//
// Layout. Dense per-row tables (indexed by row id, paged copy-on-write) hold each row's unit
// vector, level-32 cell id and *tier*: 0 = no location, 255 = in the unpacked buffer, k + 1 = in
// R-tree layer k. R-trees are immutable (PackedRTree); an entry of a layer counts only while its
// row's tier still names that layer, so deletes and updates never touch a tree. The layers follow
// the logarithmic method (Bentley & Saxe): writes go to a buffer of ≤ 64 rows; a full buffer is
// merged with layers 0, 1, … up to the first empty slot k and packed into layer k (a binary
// counter: each point is repacked O(log n) times, amortized O(log² n) per write), and a layer that
// has lost more than half of its entries to deletes or moves is repacked alone. Queries visit the
// non-empty layers (≤ log2(n / 64) + 1) and the buffer. The geohash tree is a
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
    /// The index behind one reference, copied on write: planner statistics and executors take a
    /// type's spatial index out of its dictionary for every query, and copying the struct itself
    /// retained each of its page tables, trees and lists (20 retains and releases a query). The
    /// first change to a shared index copies it, as copying the struct did.
    struct Parts: Sendable {
        /// Unit vectors by row (delta rows).
        var vectors: PagedArray<UnitVector>
        /// Level-32 geohash cells by row (delta rows).
        var cells: PagedArray<UInt64>
        /// Where each delta row's point is: 0 none, k + 1 layer k, `bufferTier` the buffer.
        var tiers: PagedArray<UInt8>
        /// Layer k holds up to about 64·2^k points (tier k + 1); nil when empty.
        var layers: [PackedRTree?] = []
        /// Live entries per layer.
        var layerLive: [Int] = []
        /// Rows inserted since the last carry, searched one by one.
        var buffer: [RowID] = []
        /// The delta rows by geohash cell.
        var geohash: BPlusTree<FixedKey>
        let fanout: Int
        let packing: RTreePacking
        /// Rows with an indexed location among the delta's (all rows when there is no base).
        var deltaCount: Int
        /// The checkpoint's points in mapped packed R-trees, one per base layer (rows
        /// `0..<baseCount`, row ids absolute); the dense tables and layers then hold delta rows only.
        /// Removed base rows are in `removed` and are skipped by every query; `baseLive` counts the
        /// base points still live. StaticSpatial.swift.
        var bases: [StaticRTree] = []
        /// Where each base layer's rows start.
        var baseLayers = BaseLayers()
        /// Base points not removed.
        var baseLive = 0
        /// Removed base rows.
        var removed = RowBitmap()
    }

    /// The parts, each read and written by name (`parts.fixed`); a write copies shared parts first.
    var parts: CopyOnWrite<Parts>

    static let bufferTier: UInt8 = 255
    static let bufferLimit = 64
    /// The R-trees' fanout.
    var fanout: Int { parts.contents.fanout }
    /// The R-trees' bulk-load order.
    var packing: RTreePacking { parts.contents.packing }
    var baseCount: Int { parts.baseLayers.rowCount }
    /// Number of rows with an indexed location.
    public var count: Int { parts.deltaCount + parts.baseLive }

    /// An index over a checkpoint's static R-trees (`layers` says which rows each covers) plus
    /// an empty delta.
    init(bases: [StaticRTree], layers: BaseLayers, nodeSize: Int = 64, fanout: Int = 16) {
        self.init(nodeSize: nodeSize, fanout: fanout)
        parts.bases = bases
        parts.baseLayers = layers
        parts.baseLive = bases.reduce(0) { $0 + $1.count }
    }

    /// Bulk build from (row, location) pairs; invalid locations are skipped. `nodeSize` is the
    /// B+tree node size (tests use 4), `fanout` the R-tree's, `packing` its bulk-load order.
    public init<S: Sequence>(points: S, nodeSize: Int = 64, fanout: Int = 16, packing: RTreePacking = .str)
    where S.Element == (RowID, Location) {
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
            pts.append((row, v))
            cellPairs.append((FixedKey(a: c, b: 0), row))
        }
        parts = CopyOnWrite(
            Parts(
                vectors: vectors, cells: cells, tiers: tiers, geohash: OrderedIndex.build(&cellPairs, nodeSize),
                fanout: fanout, packing: packing, deltaCount: pts.count))
        if !pts.isEmpty {
            var k = 0
            while Self.bufferLimit << k < pts.count { k += 1 }
            place(pts, layer: k)
        }
    }

    /// An empty index.
    public init(nodeSize: Int = 64, fanout: Int = 16, packing: RTreePacking = .str) {
        self.init(points: [(RowID, Location)](), nodeSize: nodeSize, fanout: fanout, packing: packing)
    }

    /// The location vector of `row`, if it has one.
    func vector(_ row: RowID) -> UnitVector? {
        let r = Int(row)
        return parts.tiers.contains(r) && parts.tiers[r] != 0 ? parts.vectors[r] : nil
    }

    /// Sets `row`'s location (replacing any previous one). Returns false for invalid coordinates
    /// (the row then has no location in the index).
    @discardableResult
    public mutating func insert(row: RowID, location: Location) -> Bool {
        if Int(row) < baseCount { return false }  // base rows come back as delta rows, never in place
        remove(row: row)
        guard location.hasValidCoordinates else { return false }
        let r = Int(row)
        if !parts.tiers.contains(r) {
            parts.vectors.ensure(r)
            parts.cells.ensure(r)
            parts.tiers.ensure(r)
        }
        let c = Geohash.cell(latitude: location.latitude, longitude: location.longitude)
        parts.vectors[r] = UnitVector(latitude: location.latitude, longitude: location.longitude)
        parts.cells[r] = c
        parts.tiers[r] = Self.bufferTier
        parts.buffer.append(row)
        parts.geohash.insert(FixedKey(a: c, b: 0), row)
        parts.deltaCount += 1
        if parts.buffer.count >= Self.bufferLimit { carry() }
        return true
    }

    /// Removes `row`'s location. Returns false when it had none.
    @discardableResult
    public mutating func remove(row: RowID) -> Bool {
        let r = Int(row)
        guard parts.tiers.contains(r), parts.tiers[r] != 0 else { return false }
        parts.geohash.remove(FixedKey(a: parts.cells[r], b: 0), row)
        let t = parts.tiers[r]
        parts.tiers[r] = 0
        parts.deltaCount -= 1
        if t == Self.bufferTier {
            if let i = parts.buffer.firstIndex(of: row) { parts.buffer.remove(at: i) }
        } else {
            let k = Int(t) - 1
            parts.layerLive[k] -= 1
            if let tree = parts.layers[k], parts.layerLive[k] * 2 < tree.count { place(livePoints(of: k), layer: k) }
        }
        return true
    }

    /// Takes the base layers' dead rows out without decoding them: skipped by every query;
    /// `points` of them had a location in the layers' trees (their `dead/` sections' counts).
    mutating func setDead(rows: RowBitmap, points: Int) {
        parts.removed = rows
        parts.baseLive -= points
    }

    /// Removes a row whose record had `indexed` true when its location was in the index: for a
    /// base row the mapped tree cannot change, so the row is marked removed.
    @discardableResult
    public mutating func remove(row: RowID, indexed: Bool) -> Bool {
        guard Int(row) < baseCount else { return remove(row: row) }
        guard indexed, !parts.removed.contains(Int(row)) else { return false }
        parts.removed.insert(Int(row))
        parts.baseLive -= 1
        return true
    }

    /// Live (row, vector) points of layer k.
    func livePoints(of k: Int) -> [(row: RowID, v: UnitVector)] {
        guard let tree = parts.layers[k] else { return [] }
        let t = UInt8(k + 1)
        var pts: [(row: RowID, v: UnitVector)] = []
        pts.reserveCapacity(parts.layerLive[k])
        for i in 0..<tree.count where parts.tiers[Int(tree.rows[i])] == t {
            pts.append((tree.rows[i], UnitVector(x: tree.xs[i], y: tree.ys[i], z: tree.zs[i])))
        }
        return pts
    }

    /// Packs `pts` into layer k (replacing it), updating tiers and live counts.
    mutating func place(_ pts: [(row: RowID, v: UnitVector)], layer k: Int) {
        while parts.layers.count <= k {
            parts.layers.append(nil)
            parts.layerLive.append(0)
        }
        let t = UInt8(k + 1)
        for p in pts { parts.tiers[Int(p.row)] = t }
        parts.layers[k] = pts.isEmpty ? nil : PackedRTree(points: pts, fanout: fanout, packing: packing)
        parts.layerLive[k] = pts.count
    }

    /// Merges the full buffer with layers 0…k−1 into the first empty layer k.
    mutating func carry() {
        var pts: [(row: RowID, v: UnitVector)] = parts.buffer.map { ($0, parts.vectors[Int($0)]) }
        parts.buffer.removeAll(keepingCapacity: true)
        var k = 0
        while k < parts.layers.count, parts.layers[k] != nil {
            pts += livePoints(of: k)
            parts.layers[k] = nil
            parts.layerLive[k] = 0
            k += 1
        }
        place(pts, layer: k)
    }

    /// Checks the geohash tree's invariants and that every layer agrees with the dense arrays.
    public func checkInvariants() throws {
        try parts.geohash.checkInvariants()
        func fail(_ s: String) -> InvariantViolation { InvariantViolation(description: "spatial: " + s) }
        let live = (0..<parts.tiers.capacity).filter { parts.tiers[$0] != 0 }.count
        if live != parts.deltaCount || parts.geohash.count != parts.deltaCount {
            throw fail("count \(parts.deltaCount), live \(live), cells \(parts.geohash.count)")
        }
        var seen = 0
        for (k, layer) in parts.layers.enumerated() {
            var live = 0
            for r in layer?.rows ?? [] where parts.tiers[Int(r)] == UInt8(k + 1) { live += 1 }
            if live != parts.layerLive[k] {
                throw fail("layer \(k) holds \(live) live rows, counted \(parts.layerLive[k])")
            }
            seen += live
        }
        for r in parts.buffer where parts.tiers[Int(r)] == Self.bufferTier { seen += 1 }
        if seen != parts.deltaCount { throw fail("layers hold \(seen) live rows, expected \(parts.deltaCount)") }
        if parts.buffer.count >= Self.bufferLimit { throw fail("buffer overfull") }
    }
}

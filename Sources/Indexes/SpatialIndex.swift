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
        var vectors: PagedArray<UnitVector>
        var cells: PagedArray<UInt64>
        var tiers: PagedArray<UInt8>
        var layers: [PackedRTree?] = []
        var layerLive: [Int] = []
        var buffer: [RowID] = []
        var geohash: BPlusTree<FixedKey>
        let fanout: Int
        let packing: RTreePacking
        var deltaCount: Int
        var bases: [StaticRTree] = []
        var baseLayers = BaseLayers()
        var baseLive = 0
        var removed = RowBitmap()
    }

    /// Written through `parts.contents`, which copies shared parts first.
    private var parts: CopyOnWrite<Parts>

    /// Unit vectors by row (delta rows).
    var vectors: PagedArray<UnitVector> {
        _read { yield parts.contents.vectors }
        _modify { yield &parts.contents.vectors }
    }
    /// Level-32 geohash cells by row (delta rows).
    var cells: PagedArray<UInt64> {
        _read { yield parts.contents.cells }
        _modify { yield &parts.contents.cells }
    }
    /// Where each delta row's point is: 0 none, k + 1 layer k, `bufferTier` the buffer.
    var tiers: PagedArray<UInt8> {
        _read { yield parts.contents.tiers }
        _modify { yield &parts.contents.tiers }
    }
    /// Layer k holds up to about 64·2^k points (tier k + 1); nil when empty.
    var layers: [PackedRTree?] {
        _read { yield parts.contents.layers }
        _modify { yield &parts.contents.layers }
    }
    /// Live entries per layer.
    var layerLive: [Int] {
        _read { yield parts.contents.layerLive }
        _modify { yield &parts.contents.layerLive }
    }
    /// Rows inserted since the last carry, searched one by one.
    var buffer: [RowID] {
        _read { yield parts.contents.buffer }
        _modify { yield &parts.contents.buffer }
    }
    static let bufferTier: UInt8 = 255
    static let bufferLimit = 64
    /// The delta rows by geohash cell.
    var geohash: BPlusTree<FixedKey> {
        _read { yield parts.contents.geohash }
        _modify { yield &parts.contents.geohash }
    }
    /// The R-trees' fanout.
    var fanout: Int { parts.contents.fanout }
    /// The R-trees' bulk-load order.
    var packing: RTreePacking { parts.contents.packing }
    /// Rows with an indexed location among the delta's (all rows when there is no base).
    var deltaCount: Int {
        _read { yield parts.contents.deltaCount }
        _modify { yield &parts.contents.deltaCount }
    }
    /// The checkpoint's points in mapped packed R-trees, one per base layer (rows
    /// `0..<baseCount`, row ids absolute); the dense tables and layers then hold delta rows only.
    /// Removed base rows are in `removed` and are skipped by every query; `baseLive` counts the
    /// base points still live. StaticSpatial.swift.
    var bases: [StaticRTree] {
        _read { yield parts.contents.bases }
        _modify { yield &parts.contents.bases }
    }
    /// Where each base layer's rows start.
    var baseLayers: BaseLayers {
        _read { yield parts.contents.baseLayers }
        _modify { yield &parts.contents.baseLayers }
    }
    var baseCount: Int { baseLayers.rowCount }
    /// Base points not removed.
    var baseLive: Int {
        _read { yield parts.contents.baseLive }
        _modify { yield &parts.contents.baseLive }
    }
    /// Removed base rows.
    var removed: RowBitmap {
        _read { yield parts.contents.removed }
        _modify { yield &parts.contents.removed }
    }
    /// Number of rows with an indexed location.
    public var count: Int { deltaCount + baseLive }

    /// An index over a checkpoint's static R-trees (`layers` says which rows each covers) plus
    /// an empty delta.
    init(bases: [StaticRTree], layers: BaseLayers, nodeSize: Int = 64, fanout: Int = 16) {
        self.init(nodeSize: nodeSize, fanout: fanout)
        self.bases = bases
        baseLayers = layers
        baseLive = bases.reduce(0) { $0 + $1.count }
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
        return tiers.contains(r) && tiers[r] != 0 ? vectors[r] : nil
    }

    /// Sets `row`'s location (replacing any previous one). Returns false for invalid coordinates
    /// (the row then has no location in the index).
    @discardableResult
    public mutating func insert(row: RowID, location: Location) -> Bool {
        if Int(row) < baseCount { return false }  // base rows come back as delta rows, never in place
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
        tiers[r] = Self.bufferTier
        buffer.append(row)
        geohash.insert(FixedKey(a: c, b: 0), row)
        deltaCount += 1
        if buffer.count >= Self.bufferLimit { carry() }
        return true
    }

    /// Removes `row`'s location. Returns false when it had none.
    @discardableResult
    public mutating func remove(row: RowID) -> Bool {
        let r = Int(row)
        guard tiers.contains(r), tiers[r] != 0 else { return false }
        geohash.remove(FixedKey(a: cells[r], b: 0), row)
        let t = tiers[r]
        tiers[r] = 0
        deltaCount -= 1
        if t == Self.bufferTier {
            if let i = buffer.firstIndex(of: row) { buffer.remove(at: i) }
        } else {
            let k = Int(t) - 1
            layerLive[k] -= 1
            if let tree = layers[k], layerLive[k] * 2 < tree.count { place(livePoints(of: k), layer: k) }
        }
        return true
    }

    /// Takes the base layers' dead rows out without decoding them: skipped by every query;
    /// `points` of them had a location in the layers' trees (their `dead/` sections' counts).
    mutating func setDead(rows: RowBitmap, points: Int) {
        removed = rows
        baseLive -= points
    }

    /// Removes a row whose record had `indexed` true when its location was in the index: for a
    /// base row the mapped tree cannot change, so the row is marked removed.
    @discardableResult
    public mutating func remove(row: RowID, indexed: Bool) -> Bool {
        guard Int(row) < baseCount else { return remove(row: row) }
        guard indexed, !removed.contains(Int(row)) else { return false }
        removed.insert(Int(row))
        baseLive -= 1
        return true
    }

    /// Live (row, vector) points of layer k.
    func livePoints(of k: Int) -> [(row: RowID, v: UnitVector)] {
        guard let tree = layers[k] else { return [] }
        let t = UInt8(k + 1)
        var pts: [(row: RowID, v: UnitVector)] = []
        pts.reserveCapacity(layerLive[k])
        for i in 0..<tree.count where tiers[Int(tree.rows[i])] == t {
            pts.append((tree.rows[i], UnitVector(x: tree.xs[i], y: tree.ys[i], z: tree.zs[i])))
        }
        return pts
    }

    /// Packs `pts` into layer k (replacing it), updating tiers and live counts.
    mutating func place(_ pts: [(row: RowID, v: UnitVector)], layer k: Int) {
        while layers.count <= k {
            layers.append(nil)
            layerLive.append(0)
        }
        let t = UInt8(k + 1)
        for p in pts { tiers[Int(p.row)] = t }
        layers[k] = pts.isEmpty ? nil : PackedRTree(points: pts, fanout: fanout, packing: packing)
        layerLive[k] = pts.count
    }

    /// Merges the full buffer with layers 0…k−1 into the first empty layer k.
    mutating func carry() {
        var pts: [(row: RowID, v: UnitVector)] = buffer.map { ($0, vectors[Int($0)]) }
        buffer.removeAll(keepingCapacity: true)
        var k = 0
        while k < layers.count, layers[k] != nil {
            pts += livePoints(of: k)
            layers[k] = nil
            layerLive[k] = 0
            k += 1
        }
        place(pts, layer: k)
    }

    /// Checks the geohash tree's invariants and that every layer agrees with the dense arrays.
    public func checkInvariants() throws {
        try geohash.checkInvariants()
        func fail(_ s: String) -> InvariantViolation { InvariantViolation(description: "spatial: " + s) }
        let live = (0..<tiers.capacity).filter { tiers[$0] != 0 }.count
        if live != deltaCount || geohash.count != deltaCount {
            throw fail("count \(deltaCount), live \(live), cells \(geohash.count)")
        }
        var seen = 0
        for (k, layer) in layers.enumerated() {
            var live = 0
            for r in layer?.rows ?? [] where tiers[Int(r)] == UInt8(k + 1) { live += 1 }
            if live != layerLive[k] { throw fail("layer \(k) holds \(live) live rows, counted \(layerLive[k])") }
            seen += live
        }
        for r in buffer where tiers[Int(r)] == Self.bufferTier { seen += 1 }
        if seen != deltaCount { throw fail("layers hold \(seen) live rows, expected \(deltaCount)") }
        if buffer.count >= Self.bufferLimit { throw fail("buffer overfull") }
    }
}

// NearestIterator: distance browsing (Hjaltason & Samet, "Distance browsing in spatial
// databases", TODS 1999) over the spatial index's R-tree layers.
//
// One min-heap holds R-tree nodes keyed by a lower bound of the squared chord from the query to
// anything inside (Box3.minDist2) and points keyed by their exact squared chord. Popping a node
// pushes its children; popping a point yields it. Because every node's key is ≤ the key of every
// point below it, points come out in exact order of (squared chord, row id): at equal keys nodes
// pop before points (a node could still hold an equal-distance point with a smaller row id) and
// points pop by row id. The distance reported is GeoMath.distanceKm(chord2:).
//
// Resuming: `NearestPosition` is (squared chord, row id) of the last row returned; a new iterator
// started after it skips every point at or before it. It re-traverses the nodes nearer than that
// point (the cost grows with the number of rows already returned); a live iterator continues in
// O(k log n) per k rows.

import RecordModel

/// Where a nearest-first scan stands: the last row returned and its order key.
public struct NearestPosition: Sendable, Hashable, Codable {
    /// Squared chord on the unit sphere (the exact order key; encode it bit-exactly in cursors).
    public var chord2: Double
    /// The last row returned.
    public var row: RowID
    /// The reported distance of that row, km.
    public var distanceKm: Double { GeoMath.distanceKm(chord2: chord2) }

    /// A position from a stored (squared chord, row id) pair.
    public init(chord2: Double, row: RowID) {
        self.chord2 = chord2
        self.row = row
    }
}

/// One row of a nearest-first scan.
public struct NearestHit: Sendable, Hashable {
    /// The row.
    public var row: RowID
    /// Its great-circle distance from the query point, km.
    public var distanceKm: Double
    /// The position to resume after this row.
    public var position: NearestPosition
}

struct HeapItem: Sendable {
    var key: Double
    /// Point: row id. Node: index within its level.
    var id: UInt32
    /// 0 for a point; otherwise 1 + layer * 64 + level.
    var node: UInt16

    /// Nearest first; at equal keys nodes before points (so a point is returned only once
    /// nothing nearer can hide in a node), then by id.
    struct Order: HeapOrder, Sendable {
        @inline(__always)
        func less(_ a: HeapItem, _ b: HeapItem) -> Bool {
            if a.key != b.key { return a.key < b.key }
            if (a.node != 0) != (b.node != 0) { return a.node != 0 }
            return a.id < b.id
        }
    }
}

/// Yields rows nearest-first from a point; see the file header.
///
/// ```swift
/// var it = index.nearest(to: here, maxKm: 50)
/// while let hit = it.next() { print(hit.row, hit.distanceKm) }
/// ```
public struct NearestIterator: IteratorProtocol, Sendable {
    let index: SpatialIndex
    let q: UnitVector
    let maxChord2: Double
    let maxKm: Double
    let after: NearestPosition?
    var heap = BinaryHeap(order: HeapItem.Order(), capacity: 64)

    init(index: SpatialIndex, center: Location, maxKm: Double?, after: NearestPosition?) {
        self.index = index
        q = UnitVector(latitude: center.latitude, longitude: center.longitude)
        self.maxKm = maxKm ?? .infinity
        maxChord2 = maxKm.map { GeoMath.chord2(forKm: $0) * (1 + 1e-9) + 1e-18 } ?? 4
        self.after = after
        guard center.hasValidCoordinates else { return }
        for (layer, tree) in index.parts.layers.enumerated() {
            guard let tree, tree.count > 0 else { continue }
            let l = tree.levels.count - 1
            pushNode(tree.levels[l][0], 0, UInt16(1 + layer * 64 + l))
        }
        for row in index.parts.buffer { pushPoint(q.chord2(index.parts.vectors[Int(row)]), row) }
        for (k, base) in index.parts.bases.enumerated() where base.count > 0 && k < Self.maxBaseLayers {
            let l = base.levelCount - 1
            pushNode(base.box(l, 0), 0, UInt16(1 + (Self.baseLayer + k) * 64 + l))
        }
    }

    /// Layer numbers from this one on stand for the checkpoint's mapped trees in node ids (the
    /// in-memory layers number fewer than 40: 64·2^40 rows); node ids are 16 bits, 64 levels per
    /// layer, which leaves room for 983 mapped trees (a checkpoint keeps a handful).
    static let baseLayer = 40
    static let maxBaseLayers = (Int(UInt16.max) - 1) / 64 - baseLayer

    @inline(__always)
    mutating func pushPoint(_ key: Double, _ row: RowID) {
        guard key <= maxChord2 else { return }
        if let a = after, key < a.chord2 || (key == a.chord2 && row <= a.row) { return }
        push(HeapItem(key: key, id: row, node: 0))
    }

    /// Queues a node, unless a resume position lies beyond all of it: then every point inside
    /// was returned before, and the whole subtree is skipped without being read. This is what
    /// makes page N of a nearest-first query cost about as much as page 1.
    @inline(__always)
    mutating func pushNode(_ box: Box3, _ id: UInt32, _ node: UInt16) {
        if let a = after, box.maxDist2(q) * (1 + 1e-12) + 1e-15 < a.chord2 { return }
        push(HeapItem(key: box.minDist2(q), id: id, node: node))
    }

    @inline(__always)
    mutating func push(_ item: HeapItem) {
        guard item.key <= maxChord2 else { return }
        heap.push(item)
    }

    /// The next nearest row, or nil when none is left (within the maximum radius).
    public mutating func next() -> NearestHit? {
        while let item = heap.pop() {
            if item.node == 0 {
                let pos = NearestPosition(chord2: item.key, row: item.id)
                if pos.distanceKm > maxKm {  // keys are monotone: nothing further qualifies
                    heap.removeAll()
                    return nil
                }
                return NearestHit(row: item.id, distanceKm: pos.distanceKm, position: pos)
            }
            let layer = Int(item.node - 1) / 64
            let level = Int(item.node - 1) % 64
            if layer >= Self.baseLayer {
                expandBase(layer - Self.baseLayer, layer, Int(item.id), level)
                continue
            }
            guard let tree = index.parts.layers[layer] else { continue }
            let j = Int(item.id)
            if level == 0 {
                let tier = UInt8(truncatingIfNeeded: layer + 1)
                for i in tree.children(level: 0, j) {
                    let row = tree.rows[i]
                    guard index.parts.tiers[Int(row)] == tier else { continue }
                    let dx = q.x - tree.xs[i]
                    let dy = q.y - tree.ys[i]
                    let dz = q.z - tree.zs[i]
                    pushPoint(dx * dx + dy * dy + dz * dz, row)
                }
            } else {
                let boxes = tree.levels[level - 1]
                for c in tree.children(level: level, j) {
                    pushNode(boxes[c], UInt32(c), UInt16(1 + layer * 64 + level - 1))
                }
            }
        }
        return nil
    }

    /// Pushes the children of node `j` of mapped base tree `k` (node-id layer `layer`) at
    /// `level`. The tree is read where it lies in the index's array: passing it by value would
    /// copy it — its section and both level arrays retained and released — at every node popped.
    mutating func expandBase(_ k: Int, _ layer: Int, _ j: Int, _ level: Int) {
        let bases = index.parts.bases
        bases.withUnsafeBufferPointer { b in
            let tree = b.baseAddress! + k
            if level == 0 {
                let skip = index.parts.removed.count > 0
                for i in tree.pointee.children(level: 0, j) {
                    let row = tree.pointee.row(i)
                    if skip && index.parts.removed.contains(Int(row)) { continue }
                    let dx = q.x - tree.pointee.x(i)
                    let dy = q.y - tree.pointee.y(i)
                    let dz = q.z - tree.pointee.z(i)
                    pushPoint(dx * dx + dy * dy + dz * dz, row)
                }
            } else {
                for c in tree.pointee.children(level: level, j) {
                    pushNode(tree.pointee.box(level - 1, c), UInt32(c), UInt16(1 + layer * 64 + level - 1))
                }
            }
        }
    }

    /// Up to `limit` further rows.
    public mutating func next(_ limit: Int) -> [NearestHit] {
        var out: [NearestHit] = []
        while out.count < limit, let h = next() { out.append(h) }
        return out
    }
}

extension SpatialIndex {
    /// Nearest-first iteration from `center`, optionally within `maxKm` (inclusive, with the
    /// same distance function as radius queries: use `hit.distanceKm` to apply `<`), resuming
    /// strictly after `after` when given.
    public func nearest(to center: Location, maxKm: Double? = nil, after: NearestPosition? = nil) -> NearestIterator {
        NearestIterator(index: self, center: center, maxKm: maxKm, after: after)
    }
}

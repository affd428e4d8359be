// GEOS: small owning wrappers over the reentrant GEOS C API (`_r` functions, one context handle
// per object, freed in deinit; no global state).
//
// GEOS is planar: x = longitude, y = latitude in degrees. It is used where planar geometry is
// what we need — splitting a query box at the antimeridian by intersecting it with the world
// rectangle (`GEOSPlanar.clipToWorld`, the cross-check of Geohash.boundingBoxes) — and its
// STR-packed tree (`GEOSPointTree`) is kept as the measured alternative to PackedRTree
// (qbench `indexes` prints both; see docs/indexes.md for the numbers). Spherical distance stays in
// GeoMath. A GEOS object is not safe for concurrent use (one context per object), so these
// types are classes that are not Sendable.

import CGEOS
import RecordModel

/// A GEOS context handle, finished on deinit.
final class GEOSContext {
    let handle: GEOSContextHandle_t

    init?() {
        guard let h = GEOS_init_r() else { return nil }
        handle = h
    }

    deinit { GEOS_finish_r(handle) }
}

/// Planar helpers built on GEOS.
public final class GEOSPlanar {
    let ctx: GEOSContext

    /// Nil when GEOS cannot create a context.
    public init?() {
        guard let c = GEOSContext() else { return nil }
        ctx = c
    }

    /// The parts of an unwrapped lat/lon rectangle (longitudes may run past ±180) inside the
    /// world, shifted back into −180…180: intersections with the world rectangle and with its
    /// copies shifted by ±360°. Returns the parts' envelopes.
    public func clipToWorld(latMin: Double, latMax: Double, lonMin: Double, lonMax: Double) -> [GeoBox] {
        let h = ctx.handle
        guard let rect = GEOSGeom_createRectangle_r(h, lonMin, max(-90, latMin), lonMax, min(90, latMax)) else {
            return []
        }
        defer { GEOSGeom_destroy_r(h, rect) }
        var out: [GeoBox] = []
        for shift in [-360.0, 0, 360] {
            guard let world = GEOSGeom_createRectangle_r(h, -180 + shift, -90, 180 + shift, 90) else { continue }
            defer { GEOSGeom_destroy_r(h, world) }
            guard let part = GEOSIntersection_r(h, rect, world) else { continue }
            defer { GEOSGeom_destroy_r(h, part) }
            if GEOSisEmpty_r(h, part) != 0 { continue }
            var x0 = 0.0, y0 = 0.0, x1 = 0.0, y1 = 0.0
            guard GEOSGeom_getXMin_r(h, part, &x0) == 1, GEOSGeom_getYMin_r(h, part, &y0) == 1,
                GEOSGeom_getXMax_r(h, part, &x1) == 1, GEOSGeom_getYMax_r(h, part, &y1) == 1
            else { continue }
            out.append(GeoBox(latMin: y0, latMax: y1, lonMin: x0 - shift, lonMax: x1 - shift))
        }
        return out
    }
}

/// GEOS's STRtree over points (x = longitude, y = latitude), items are row ids.
///
/// The alternative to PackedRTree measured by qbench. Radius queries query the circle's
/// bounding boxes and refine with GeoMath; `nearestRow` uses `GEOSSTRtree_nearest_generic` with
/// a great-circle item distance — GEOS bounds nodes by *planar* envelope distance in degrees,
/// which is not a lower bound of km distance near the poles or across ±180°, so that answer is
/// only approximate there and cannot drive distance browsing.
public final class GEOSPointTree {
    let ctx: GEOSContext
    let tree: OpaquePointer
    var geometries: [OpaquePointer] = []
    let vectors: [RowID: UnitVector]

    /// Builds the tree; nil when GEOS fails to create it.
    public init?(points: [(RowID, Location)], nodeCapacity: Int = 16) {
        guard let c = GEOSContext(), let t = GEOSSTRtree_create_r(c.handle, nodeCapacity) else { return nil }
        ctx = c
        tree = t
        var vs: [RowID: UnitVector] = [:]
        for (row, loc) in points where loc.hasValidCoordinates {
            guard let g = GEOSGeom_createPointFromXY_r(c.handle, loc.longitude, loc.latitude) else { continue }
            geometries.append(g)
            GEOSSTRtree_insert_r(c.handle, t, g, UnsafeMutableRawPointer(bitPattern: UInt(row) + 1))
            vs[row] = UnitVector(latitude: loc.latitude, longitude: loc.longitude)
        }
        vectors = vs
    }

    deinit {
        GEOSSTRtree_destroy_r(ctx.handle, tree)
        for g in geometries { GEOSGeom_destroy_r(ctx.handle, g) }
    }

    final class Collector {
        var rows: [RowID] = []
    }

    /// Row ids whose point lies in the box.
    public func rows(in box: GeoBox) -> [RowID] {
        let h = ctx.handle
        guard let rect = GEOSGeom_createRectangle_r(h, box.lonMin, box.latMin, box.lonMax, box.latMax) else {
            return []
        }
        defer { GEOSGeom_destroy_r(h, rect) }
        let collector = Collector()
        withExtendedLifetime(collector) {
            GEOSSTRtree_query_r(
                h, tree, rect,
                { item, user in
                    guard let item, let user else { return }
                    let c = Unmanaged<Collector>.fromOpaque(user).takeUnretainedValue()
                    c.rows.append(RowID(UInt(bitPattern: item) - 1))
                }, Unmanaged.passUnretained(collector).toOpaque())
        }
        return collector.rows
    }

    /// Rows within `km` of `center` (inclusive), sorted by row id.
    public func rows(withinKm km: Double, of center: Location) -> [RowID] {
        guard center.hasValidCoordinates else { return [] }
        let q = UnitVector(latitude: center.latitude, longitude: center.longitude)
        var out: [RowID] = []
        for b in Geohash.boundingBoxes(latitude: center.latitude, longitude: center.longitude, km: km) {
            for r in rows(in: b) {
                if let v = vectors[r], GeoMath.distanceKm(chord2: q.chord2(v)) <= km { out.append(r) }
            }
        }
        out.sort()
        return out
    }

    final class NearestContext {
        let vectors: [RowID: UnitVector]
        let query: UnitVector
        init(_ v: [RowID: UnitVector], _ q: UnitVector) {
            vectors = v
            query = q
        }
    }

    /// The (approximately, see the type's note) nearest row to `center`.
    public func nearestRow(to center: Location) -> RowID? {
        let h = ctx.handle
        guard let pt = GEOSGeom_createPointFromXY_r(h, center.longitude, center.latitude) else { return nil }
        defer { GEOSGeom_destroy_r(h, pt) }
        let nc = NearestContext(vectors, UnitVector(latitude: center.latitude, longitude: center.longitude))
        // The query item is UInt.max, an address no row id maps to (rows map to row + 1).
        let queryItem = UnsafeRawPointer(bitPattern: UInt.max)
        let found = withExtendedLifetime(nc) {
            GEOSSTRtree_nearest_generic_r(
                h, tree, queryItem, pt,
                { a, b, dist, user in
                    guard let user, let dist else { return 0 }
                    let c = Unmanaged<NearestContext>.fromOpaque(user).takeUnretainedValue()
                    func vec(_ p: UnsafeRawPointer?) -> UnitVector? {
                        guard let p else { return nil }
                        let bits = UInt(bitPattern: p)
                        return bits == UInt.max ? c.query : c.vectors[RowID(truncatingIfNeeded: bits - 1)]
                    }
                    guard let va = vec(a), let vb = vec(b) else { return 0 }
                    dist.pointee = GeoMath.distanceKm(chord2: va.chord2(vb))
                    return 1
                }, Unmanaged.passUnretained(nc).toOpaque())
        }
        guard let found else { return nil }
        return RowID(truncatingIfNeeded: UInt(bitPattern: found) - 1)
    }
}

// zones/list, zones/lookup, zones/modify, users/caller.

import Cirrus
import RecordModel

extension WebServicesAPI {
    func listZones(db: Database) async throws(WebServicesError) -> JSONValue {
        do throws(CirrusError) {
            let zones = try await db.allZones()
            return .object([("zones", .array(zones.map { .object([("zoneID", $0.webServicesJSON)]) }))])
        } catch {
            throw WebServicesError(error)
        }
    }

    func lookupZones(_ body: JSONBody, db: Database) async throws(WebServicesError) -> JSONValue {
        var wanted: [ZoneID] = []
        for z in try body["zones"].array(limit: limits.maximumOperations) {
            wanted.append(ZoneID(zoneName: try z["zoneName"].string()))
        }
        if wanted.isEmpty { throw body["zones"].fail("no zones to look up") }
        let existing: Set<String>
        do throws(CirrusError) {
            existing = Set(try await db.allZones().map(\.zoneName))
        } catch {
            throw WebServicesError(error)
        }
        return .object([
            (
                "zones",
                .array(
                    wanted.map { z in
                        existing.contains(z.zoneName)
                            ? .object([("zoneID", z.webServicesJSON)])
                            : WebServicesError(.zoneNotFound, "zone \"\(z.zoneName)\" does not exist", zoneID: z).json
                    })
            )
        ])
    }

    func modifyZones(_ body: JSONBody, db: Database) async throws(WebServicesError) -> JSONValue {
        var ops: [(create: Bool, zone: ZoneID)] = []
        for op in try body["operations"].array(limit: limits.maximumOperations) {
            let type = try op["operationType"].string()
            guard type == "create" || type == "delete" else {
                throw op["operationType"].fail("unknown operation type \"\(type)\" (create, delete)")
            }
            let zone = op["zone"]
            let name: String
            if let id = try zone["zoneID"].zoneID() { name = id.zoneName } else { name = try zone["zoneName"].string() }
            ops.append((type == "create", ZoneID(zoneName: name)))
        }
        if ops.isEmpty { throw body["operations"].fail("no operations") }
        var out: [JSONValue] = []
        for (create, zone) in ops {
            do throws(CirrusError) {
                if create {
                    let z = try await db.save(zone: zone)
                    out.append(.object([("zoneID", z.webServicesJSON)]))
                } else {
                    try await db.deleteZone(zone)
                    out.append(.object([("zoneID", zone.webServicesJSON), ("deleted", .bool(true))]))
                }
            } catch {
                var e = WebServicesError(error)
                e.zoneID = zone
                out.append(e.json)
            }
        }
        return .object([("zones", .array(out))])
    }
}

// records/changes (one zone), changes/zone (several zones, each with its own sync token) and
// changes/database (which custom zones changed). Sync tokens are the façade's change tokens in
// base64; a token that does not decode is BAD_REQUEST naming it, an expired one is
// BAD_REQUEST saying to fetch from the beginning (CloudKit Web Services has no code of its own).
//
//   records/changes   {"zoneID", "syncToken"?, "resultsLimit"?, "desiredKeys"?, "desiredRecordTypes"?}
//                  →  {"zoneID", "records": [record | {"recordName", "recordType", "deleted": true}],
//                      "syncToken", "moreComing"}
//   changes/zone      {"zones": [{"zoneID", "syncToken"?, "desiredKeys"?, "desiredRecordTypes"?}], "resultsLimit"?}
//                  →  {"zones": [records/changes answer | error object with zoneID]}
//   changes/database  {"syncToken"?, "resultsLimit"?}
//                  →  {"zones": [{"zoneID"} | {"zoneID", "deleted": true}], "syncToken", "moreComing"}

import Cirrus
import Foundation
import RecordModel

extension WebServicesAPI {
    /// What one zone's change fetch asks for.
    struct ZoneChangeRequest {
        var zone: ZoneID
        var token: ChangeToken?
        var desiredKeys: [String]?
        var recordTypes: Set<String>?

        init(_ node: BodyNode, defaultZone: ZoneID? = nil) throws(WebServicesError) {
            guard let z = try node["zoneID"].zoneID() ?? defaultZone else {
                throw node["zoneID"].fail("missing; expected a zoneID")
            }
            zone = z
            if let t = try node["syncToken"].optionalString() {
                guard let data = Data(base64Encoded: t) else { throw node["syncToken"].fail("not a sync token") }
                token = ChangeToken(data: Array(data))
            }
            desiredKeys = try node["desiredKeys"].strings(limit: 1_000)
            recordTypes = try node["desiredRecordTypes"].strings(limit: 1_000).map(Set.init)
        }
    }

    func recordChanges(_ body: JSONBody, db: Database) async throws(WebServicesError) -> JSONValue {
        let limit = Int(try body["resultsLimit"].optionalInt(in: 1...Int64(limits.maximumResults)) ?? 200)
        let request = try ZoneChangeRequest(body.root)
        do throws(CirrusError) {
            return try await zoneChanges(request, limit: limit, db: db)
        } catch {
            throw Self.changesError(error, path: "syncToken")
        }
    }

    func zoneChanges(_ body: JSONBody, db: Database) async throws(WebServicesError) -> JSONValue {
        let limit = Int(try body["resultsLimit"].optionalInt(in: 1...Int64(limits.maximumResults)) ?? 200)
        var requests: [ZoneChangeRequest] = []
        for z in try body["zones"].array(limit: limits.maximumOperations) { requests.append(try ZoneChangeRequest(z)) }
        if requests.isEmpty { throw body["zones"].fail("no zones") }
        var out: [JSONValue] = []
        var left = limits.maximumResults
        for (i, r) in requests.enumerated() {
            do throws(CirrusError) {
                // At most `maximumResults` records in the whole response: later zones get what is
                // left (at least one, so that every zone makes progress) and say moreComing.
                out.append(try await zoneChanges(r, limit: max(1, min(limit, left)), db: db))
                left -= out.last?["records"]?.arrayCount ?? 0
            } catch {
                var e = Self.changesError(error, path: "zones[\(i)].syncToken")
                e.zoneID = r.zone
                out.append(e.json)
            }
        }
        return .object([("zones", .array(out))])
    }

    func zoneChanges(_ r: ZoneChangeRequest, limit: Int, db: Database) async throws(CirrusError) -> JSONValue {
        let page = try await db.changes(in: r.zone, since: r.token, limit: limit)
        let changed = page.changed.filter { r.recordTypes?.contains($0.recordType) ?? true }.map {
            $0.projected(to: r.desiredKeys).webServicesJSON
        }
        let deleted = page.deleted.filter { r.recordTypes?.contains($0.recordType) ?? true }.map {
            (id, type) -> JSONValue in
            .object([("recordName", .string(id.recordName)), ("recordType", .string(type)), ("deleted", .bool(true))])
        }
        return .object([
            ("zoneID", r.zone.webServicesJSON), ("records", .array(changed + deleted)),
            ("syncToken", .string(Data(page.token.data).base64EncodedString())), ("moreComing", .bool(page.moreComing)),
        ])
    }

    func databaseChanges(_ body: JSONBody, db: Database) async throws(WebServicesError) -> JSONValue {
        let limit = Int(try body["resultsLimit"].optionalInt(in: 1...Int64(limits.maximumResults)) ?? 200)
        var token: DatabaseChangeToken? = nil
        if let t = try body["syncToken"].optionalString() {
            guard let data = Data(base64Encoded: t) else { throw body["syncToken"].fail("not a sync token") }
            token = DatabaseChangeToken(data: Array(data))
        }
        do throws(CirrusError) {
            let page = try await db.databaseChanges(since: token, limit: limit)
            let zones =
                page.changed.map { JSONValue.object([("zoneID", $0.webServicesJSON)]) }
                + page.deleted.map { .object([("zoneID", $0.webServicesJSON), ("deleted", .bool(true))]) }
            return .object([
                ("zones", .array(zones)), ("syncToken", .string(Data(page.token.data).base64EncodedString())),
                ("moreComing", .bool(page.moreComing)),
            ])
        } catch {
            throw Self.changesError(error, path: "syncToken")
        }
    }

    /// A façade error of a change fetch; an expired token names where it was.
    static func changesError(_ e: CirrusError, path: String) -> WebServicesError {
        var w = WebServicesError(e)
        if e.code == .changeTokenExpired { w.reason = "\(path): \(w.reason)" }
        return w
    }
}

extension JSONValue {
    /// The number of elements of an array (0 for anything else).
    var arrayCount: Int {
        if case .array(let a) = self { return a.count }
        return 0
    }
}

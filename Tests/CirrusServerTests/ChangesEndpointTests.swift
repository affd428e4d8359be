// changes/database and changes/zone through WebServicesAPI.

import Cirrus
import CirrusServer
import Foundation
import RecordModel
import Testing

@Suite struct ChangesEndpointTests {
    let f: ServerFixture
    init() throws { f = try ServerFixture() }

    func createZones(_ names: [String], as user: String = "alice") async {
        let ops = names.map { #"{"operationType": "create", "zone": {"zoneID": {"zoneName": "\#($0)"}}}"# }
        let r = await f.call(
            "zones/modify", #"{"operations": [\#(ops.joined(separator: ", "))]}"#, db: "private", as: user)
        #expect(r.status == 200, "\(r.json.jsonText)")
    }

    func zoneNames(_ json: JSONValue, deleted: Bool = false) -> [String] {
        (json["zones"]?.array ?? []).filter { ($0["deleted"] == .bool(true)) == deleted }.compactMap {
            $0["zoneID"]?["zoneName"]?.stringValue
        }
    }

    @Test func databaseChangesReportChangedAndDeletedZonesSinceTheToken() async throws {
        await createZones(["A", "B", "C"])
        let first = await f.call("changes/database", "{}", db: "private", as: "alice")
        #expect(first.status == 200, "\(first.json.jsonText)")
        #expect(zoneNames(first.json) == ["A", "B", "C"])
        #expect(first.json["moreComing"] == .bool(false))
        let token = try #require(first.json["syncToken"]?.stringValue)

        let nothing = await f.call("changes/database", #"{"syncToken": "\#(token)"}"#, db: "private", as: "alice")
        #expect(zoneNames(nothing.json).isEmpty)

        _ = await f.call(
            "records/modify",
            modifyBody([("create", recordJSON("b1", type: "Note", zone: "B", #""v": {"value": 1}"#))]),
            db: "private", as: "alice")
        _ = await f.call(
            "zones/modify", #"{"operations": [{"operationType": "delete", "zone": {"zoneID": {"zoneName": "A"}}}]}"#,
            db: "private", as: "alice")
        let next = await f.call("changes/database", #"{"syncToken": "\#(token)"}"#, db: "private", as: "alice")
        #expect(zoneNames(next.json) == ["B"])
        #expect(zoneNames(next.json, deleted: true) == ["A"])
    }

    @Test func databaseChangesPageWithResultsLimit() async throws {
        await createZones(["Z1", "Z2", "Z3"])
        var seen: [String] = []
        var token: String? = nil
        var pages = 0
        repeat {
            let body = #"{"resultsLimit": 1"# + (token.map { #", "syncToken": "\#($0)""# } ?? "") + "}"
            let r = await f.call("changes/database", body, db: "private", as: "alice")
            seen += zoneNames(r.json)
            token = r.json["syncToken"]?.stringValue
            pages += 1
            if r.json["moreComing"] != .bool(true) { break }
        } while pages < 10
        #expect(seen == ["Z1", "Z2", "Z3"])
        #expect(pages == 3)
    }

    @Test func databaseChangesRefuseBadTokensAndThePublicDatabase() async throws {
        let bad = await f.call("changes/database", #"{"syncToken": "%%"}"#, db: "private", as: "alice")
        #expect(bad.status == 400)
        #expect(bad.json["reason"]?.stringValue == "syncToken: not a sync token")
        let expired = await f.call("changes/database", #"{"syncToken": "AAAA"}"#, db: "private", as: "alice")
        #expect(expired.status == 400)
        #expect(expired.json["reason"]?.stringValue?.hasPrefix("syncToken: change token expired") == true)
        let publicDB = await f.call("changes/database", "{}", as: "alice")
        #expect(publicDB.status == 400)
        #expect(publicDB.json["reason"]?.stringValue?.contains("no custom zones") == true)
        let limit = await f.call("changes/database", #"{"resultsLimit": 0}"#, db: "private", as: "alice")
        #expect(limit.json["reason"]?.stringValue == "resultsLimit: 0 is outside 1…200")
    }

    @Test func anotherUsersTokenIsRefused() async throws {
        await createZones(["Mine"])
        let alice = await f.call("changes/database", "{}", db: "private", as: "alice")
        let token = try #require(alice.json["syncToken"]?.stringValue)
        let bob = await f.call("changes/database", #"{"syncToken": "\#(token)"}"#, db: "private", as: "bob")
        #expect(bob.status == 400)
        #expect(zoneNames(bob.json).isEmpty)
    }

    @Test func zoneChangesFetchSeveralZonesEachWithItsToken() async throws {
        await createZones(["A", "B"])
        _ = await f.call(
            "records/modify",
            modifyBody([
                ("create", recordJSON("a1", type: "Note", zone: "A", #""v": {"value": 1}"#)),
                ("create", recordJSON("a2", type: "Task", zone: "A", #""v": {"value": 2}"#)),
                ("create", recordJSON("b1", type: "Note", zone: "B", #""v": {"value": 3}"#)),
            ]), db: "private", as: "alice")
        let r = await f.call(
            "changes/zone",
            #"{"zones": [{"zoneID": {"zoneName": "A"}, "desiredRecordTypes": ["Note"]}, {"zoneID": {"zoneName": "B"}, "desiredKeys": []}, {"zoneID": {"zoneName": "Nope"}}]}"#,
            db: "private", as: "alice")
        #expect(r.status == 200, "\(r.json.jsonText)")
        let zones = r.json["zones"]?.array ?? []
        #expect(zones.count == 3)
        #expect(zones[0].recordNames == ["a1"])
        #expect(zones[1].recordNames == ["b1"])
        #expect(zones[1]["records"]?.array.first?["fields"] == .object([]))
        #expect(zones[2].errorCode == "ZONE_NOT_FOUND")
        #expect(zones[2]["zoneID"]?["zoneName"]?.stringValue == "Nope")
        let tokenB = try #require(zones[1]["syncToken"]?.stringValue)
        _ = await f.call(
            "records/modify",
            #"{"operations": [{"operationType": "forceDelete", "record": {"recordName": "b1", "zoneID": {"zoneName": "B"}}}]}"#,
            db: "private", as: "alice")
        let again = await f.call(
            "changes/zone", #"{"zones": [{"zoneID": {"zoneName": "B"}, "syncToken": "\#(tokenB)"}]}"#, db: "private",
            as: "alice")
        let b = again.json["zones"]?.array.first
        #expect(b?.recordNames == ["b1"])
        #expect(b?["records"]?.array.first?["deleted"] == .bool(true))
        let empty = await f.call("changes/zone", #"{"zones": []}"#, db: "private", as: "alice")
        #expect(empty.json["reason"]?.stringValue == "zones: no zones")
        let noZone = await f.call("changes/zone", #"{"zones": [{"syncToken": "x"}]}"#, db: "private", as: "alice")
        #expect(noZone.json["reason"]?.stringValue == "zones[0].zoneID: missing; expected a zoneID")
    }
}

// subscriptions/list|lookup|modify, assets/upload, asset put and download.

import Cirrus
import CirrusServer
import Foundation
import RecordModel
import Testing

@Suite struct SubscriptionsAndAssetsTests {
    let f: ServerFixture
    init() throws { f = try ServerFixture() }

    static let cafes =
        #"{"subscriptionID": "cafes", "subscriptionType": "query", "query": {"recordType": "Place", "filterBy": [{"fieldName": "kind", "comparator": "EQUALS", "fieldValue": {"value": "cafe", "type": "STRING"}}]}, "firesOn": ["create", "delete"]}"#

    func seedSchema() async {
        let r = await f.call(
            "records/modify", modifyBody([("create", recordJSON("p0", #""kind": {"value": "cafe"}"#))]), as: "alice")
        #expect(r.status == 200)
    }

    func subscriptionsModify(
        _ ops: [(String, String)], db: String = "public", as user: String = "alice"
    ) async -> (
        status: Int, json: JSONValue
    ) {
        let list = ops.map { #"{"operationType": "\#($0.0)", "subscription": \#($0.1)}"# }.joined(separator: ", ")
        return await f.call("subscriptions/modify", #"{"operations": [\#(list)]}"#, db: db, as: user)
    }

    @Test func querySubscriptionsAreCreatedListedLookedUpAndDeleted() async throws {
        await seedSchema()
        let created = await subscriptionsModify([("create", Self.cafes)])
        #expect(created.status == 200, "\(created.json.jsonText)")
        let s = try #require(created.json["subscriptions"]?.array.first)
        #expect(s["subscriptionID"]?.stringValue == "cafes")
        #expect(s["firesOn"] == .array([.string("create"), .string("delete")]))
        #expect(s["firesOnce"] == .bool(false))
        let filter = try #require(s["query"]?["filterBy"]?.array.first)
        #expect(filter["comparator"]?.stringValue == "EQUALS")
        #expect(filter["fieldValue"]?["value"]?.stringValue == "cafe")

        let again = await subscriptionsModify([("create", Self.cafes)])
        #expect(again.json["subscriptions"]?.array.first?.errorCode == "EXISTS")
        let missing = await subscriptionsModify([
            ("update", #"{"subscriptionID": "nope", "subscriptionType": "query", "query": {"recordType": "Place"}}"#)
        ])
        #expect(missing.json["subscriptions"]?.array.first?.errorCode == "NOT_FOUND")

        let listed = await f.call("subscriptions/list", as: "alice")
        #expect(
            (listed.json["subscriptions"]?.array ?? []).compactMap { $0["subscriptionID"]?.stringValue } == ["cafes"])
        let looked = await f.call(
            "subscriptions/lookup", #"{"subscriptions": [{"subscriptionID": "cafes"}, {"subscriptionID": "x"}]}"#,
            as: "alice")
        let items = looked.json["subscriptions"]?.array ?? []
        #expect(items.first?["subscriptionType"]?.stringValue == "query")
        #expect(items.last?.errorCode == "NOT_FOUND")
        #expect(items.last?["subscriptionID"]?.stringValue == "x")

        let deleted = await subscriptionsModify([("delete", #"{"subscriptionID": "cafes"}"#)])
        #expect(deleted.json["subscriptions"]?.array.first?["deleted"] == .bool(true))
        let gone = await f.call("subscriptions/list", as: "alice")
        #expect(gone.json["subscriptions"]?.array.isEmpty == true)
    }

    @Test func refusedSubscriptionsSayWhy() async throws {
        await seedSchema()
        let badFilter = await subscriptionsModify([
            (
                "create",
                #"{"subscriptionID": "s", "subscriptionType": "query", "query": {"recordType": "Place", "filterBy": [{"fieldName": "kind", "comparator": "LESS_THAN", "fieldValue": {"value": 3}}]}}"#
            )
        ])
        let e = try #require(badFilter.json["subscriptions"]?.array.first)
        #expect(e.errorCode == "BAD_REQUEST")
        #expect(e["subscriptionID"]?.stringValue == "s")
        let badEvent = await subscriptionsModify([
            (
                "create",
                #"{"subscriptionID": "s", "subscriptionType": "query", "query": {"recordType": "Place"}, "firesOn": ["explode"]}"#
            )
        ])
        #expect(badEvent.status == 400)
        #expect(
            badEvent.json["reason"]?.stringValue
                == #"operations[0].subscription.firesOn: [0]: unknown event "explode" (create, update, delete)"#)
        let badType = await subscriptionsModify([("create", #"{"subscriptionID": "s", "subscriptionType": "push"}"#)])
        #expect(badType.json["reason"]?.stringValue?.hasPrefix("operations[0].subscription.subscriptionType") == true)
        let anonymous = await f.call(
            "subscriptions/modify", #"{"operations": [{"operationType": "create", "subscription": \#(Self.cafes)}]}"#)
        #expect(anonymous.json["subscriptions"]?.array.first?.errorCode == "AUTHENTICATION_REQUIRED")
    }

    @Test func zoneSubscriptionsNeedAnExistingZone() async throws {
        _ = await f.call(
            "zones/modify", #"{"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": "W"}}}]}"#,
            db: "private", as: "alice")
        let ok = await subscriptionsModify(
            [("create", #"{"subscriptionID": "w", "subscriptionType": "zone", "zoneID": {"zoneName": "W"}}"#)],
            db: "private")
        #expect(ok.json["subscriptions"]?.array.first?["zoneID"]?["zoneName"]?.stringValue == "W")
        let missing = await subscriptionsModify(
            [("create", #"{"subscriptionID": "v", "subscriptionType": "zone", "zoneID": {"zoneName": "V"}}"#)],
            db: "private")
        #expect(missing.json["subscriptions"]?.array.first?.errorCode == "ZONE_NOT_FOUND")
    }

    @Test func usersNeitherSeeNorTouchEachOthersSubscriptions() async throws {
        await seedSchema()
        _ = await subscriptionsModify([("create", Self.cafes)])
        // Public database: shared, but subscriptions belong to who saved them.
        let bobList = await f.call("subscriptions/list", as: "bob")
        #expect(bobList.json["subscriptions"]?.array.isEmpty == true)
        let bobLookup = await f.call(
            "subscriptions/lookup", #"{"subscriptions": [{"subscriptionID": "cafes"}]}"#, as: "bob")
        #expect(bobLookup.json["subscriptions"]?.array.first?.errorCode == "NOT_FOUND")
        let bobDelete = await subscriptionsModify([("delete", #"{"subscriptionID": "cafes"}"#)], as: "bob")
        #expect(bobDelete.json["subscriptions"]?.array.first?.errorCode == "NOT_FOUND")
        let bobTakeover = await subscriptionsModify([("create", Self.cafes)], as: "bob")
        #expect(bobTakeover.json["subscriptions"]?.array.first?.errorCode == "EXISTS")
        let bobUpdate = await subscriptionsModify([("update", Self.cafes)], as: "bob")
        #expect(bobUpdate.json["subscriptions"]?.array.first?.errorCode == "NOT_FOUND")
        let aliceList = await f.call("subscriptions/list", as: "alice")
        let mine = try #require(aliceList.json["subscriptions"]?.array.first)
        #expect(mine["firesOn"] == .array([.string("create"), .string("delete")]))
        // Private databases: each user's own.
        let privateBob = await f.call("subscriptions/list", db: "private", as: "bob")
        #expect(privateBob.json["subscriptions"]?.array.isEmpty == true)
    }

    @Test func assetsAreUploadedSavedAndDownloaded() async throws {
        let tokens = await f.call(
            "assets/upload", #"{"tokens": [{"recordType": "Photo", "fieldName": "image", "recordName": "ph1"}]}"#,
            db: "private", as: "alice")
        #expect(tokens.status == 200, "\(tokens.json.jsonText)")
        let token = try #require(tokens.json["tokens"]?.array.first)
        #expect(token["recordName"]?.stringValue == "ph1")
        let url = try #require(token["url"]?.stringValue)
        let bytes: [UInt8] = Array("not really a JPEG \u{1F4F7}".utf8)
        let put = await f.raw("POST", url, body: bytes, as: "alice")
        #expect(put.status == 200, "\(put.body.jsonText)")
        let file = try #require(put.body["singleFile"])
        #expect(file["size"]?.int64Value == Int64(bytes.count))

        let save = await f.call(
            "records/modify",
            modifyBody([
                (
                    "create",
                    recordJSON("ph1", type: "Photo", #""image": {"value": \#(file.jsonText), "type": "ASSETID"}"#)
                )
            ]),
            db: "private", as: "alice")
        #expect(save.status == 200, "\(save.json.jsonText)")
        let saved = try #require(save.json["records"]?.array.first)
        let download = try #require(saved["fields"]?["image"]?["value"]?["downloadURL"]?.stringValue)
        #expect(download.contains("/assets/download?recordName=ph1&"))

        let got = await f.raw("GET", download, db: "private", as: "alice")
        #expect(got.status == 200)
        #expect(got.bytes?.content == bytes)
        #expect(got.bytes?.contentType == "application/octet-stream")

        let looked = await f.call(
            "records/lookup", #"{"records": [{"recordName": "ph1"}]}"#, db: "private", as: "alice")
        #expect(
            looked.json["records"]?.array.first?["fields"]?["image"]?["value"]?["downloadURL"]?.stringValue == download)

        // Bob's "private database" has no such record; anonymous callers have no private database.
        let bob = await f.raw("GET", download, db: "private", as: "bob")
        #expect(bob.status == 404)
        #expect(bob.bytes == nil)
        let anonymous = await f.raw("GET", download, db: "private")
        #expect(anonymous.status == 421)
        let wrongHash = await f.raw(
            "GET", download.replacingOccurrences(of: "fileChecksum=", with: "fileChecksum=0"), as: "alice")
        #expect(wrongHash.status == 404)
        let noName = await f.raw("GET", "assets/download?fileChecksum=x&size=1", db: "private", as: "alice")
        #expect(noName.body["reason"]?.stringValue == "recordName: missing query parameter")
    }

    @Test func assetUploadsAreBoundedAndNeedAUser() async throws {
        var limits = ServerLimits()
        limits.maximumAssetBytes = 10
        let small = try ServerFixture(limits: limits)
        let big = await small.raw(
            "POST", "assets/put", body: Array(repeating: 1, count: 11), db: "private", as: "alice")
        #expect(big.status == 413)
        let anonymous = await f.raw("POST", "assets/put", body: [1, 2, 3])
        #expect(anonymous.status == 421)
        // With a Host header the URLs are absolute, as CloudKit's; a malformed one is ignored.
        for (host, prefix) in [
            ("example.test:8080", "http://example.test:8080/database/1/"), ("a b/c", "/database/1/"),
        ] {
            var query = f.credentials(as: "alice")
            query["x"] = "1"
            let r = await f.api.handle(
                WebRequest(
                    method: "POST", path: ServerFixture.path("assets/upload"), query: query, headers: ["Host": host],
                    body: Array(#"{"tokens": [{"recordType": "Photo", "fieldName": "image"}]}"#.utf8)))
            let url = r.body["tokens"]?.array.first?["url"]?.stringValue ?? ""
            #expect(url.hasPrefix(prefix), "\(host): \(url)")
            #expect(url.hasSuffix("/development/public/assets/put"))
        }
        let noTokens = await f.call("assets/upload", #"{"tokens": []}"#, as: "alice")
        #expect(noTokens.json["reason"]?.stringValue == "tokens: no tokens requested")
        let unsaved = await f.call(
            "records/modify",
            modifyBody([
                (
                    "create",
                    recordJSON(
                        "x", type: "Photo",
                        #""image": {"value": {"fileChecksum": "abc", "size": 3}, "type": "ASSETID"}"#)
                )
            ]), as: "alice")
        #expect(unsaved.json["records"]?.array.first?.errorCode == "BAD_REQUEST")
    }
}

// Tokens, server-to-server signatures, and isolation between users' private databases.

import Cirrus
import CirrusServer
import Crypto
import Foundation
import RecordModel
import Testing

@Suite struct AuthenticationTests {
    let f: ServerFixture
    init() throws { f = try ServerFixture() }

    @Test func requestsNeedAKnownAPIToken() async throws {
        let none = await f.api.handle(WebRequest(method: "POST", path: ServerFixture.path("zones/list")))
        #expect(none.status == 401)
        #expect(none.body.errorCode == "AUTHENTICATION_FAILED")
        let wrong = await f.call("zones/list", token: "0123")
        #expect(wrong.status == 401)
        let unknownUser = await f.call("users/caller", as: "not-a-token")
        #expect(unknownUser.status == 401)
        #expect(unknownUser.json["reason"]?.stringValue == "unknown or revoked ckWebAuthToken")
        let anonymous = await f.call("users/caller")
        #expect(anonymous.status == 421)
        let alice = await f.call("users/caller", as: "alice")
        #expect(alice.json["userRecordName"]?.stringValue == "_alice")
    }

    @Test func revokedTokensStopWorkingAndNewOnesWorkWithoutARestart() async throws {
        try CredentialCommands.revokeToken(directory: "/c", token: f.bob, fileSystem: f.fs)
        // The server re-reads the file on a miss at most once a second.
        try await Task.sleep(for: .milliseconds(1100))
        let carol = try CredentialCommands.createToken(directory: "/c", user: "_carol", fileSystem: f.fs)
        let r = await f.call("users/caller", as: carol)
        #expect(r.json["userRecordName"]?.stringValue == "_carol")
        // bob's token is still cached as valid until the file is re-read for another miss; what
        // must hold is that the file no longer has it.
        let listed = try CredentialCommands.list(directory: "/c", fileSystem: f.fs)
        #expect(listed.components(separatedBy: "user _bob").count == 1)
    }

    @Test func noRequestReachesAnotherUsersPrivateDatabase() async throws {
        _ = await f.call(
            "zones/modify",
            #"{"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": "Secret"}}}]}"#,
            db: "private", as: "alice")
        let saved = await f.call(
            "records/modify",
            modifyBody([
                ("create", recordJSON("diary", type: "Note", zone: "Secret", #""text": {"value": "alice only"}"#)),
                ("create", recordJSON("todo", type: "Note", #""text": {"value": "alice default zone"}"#)),
            ]), db: "private", as: "alice")
        #expect(saved.json.recordNames == ["diary", "todo"])
        // Bob, in "his" private database, sees none of it through any endpoint.
        let query = await f.call("records/query", #"{"query": {"recordType": "Note"}}"#, db: "private", as: "bob")
        #expect(query.json.recordNames.isEmpty || query.json.errorCode != nil)
        let lookup = await f.call(
            "records/lookup",
            #"{"records": [{"recordName": "todo"}, {"recordName": "diary", "zoneID": {"zoneName": "Secret"}}]}"#,
            db: "private", as: "bob")
        #expect((lookup.json["records"]?.array ?? []).allSatisfy { $0["fields"] == nil })
        let zones = await f.call("zones/list", db: "private", as: "bob")
        #expect(!(zones.json["zones"]?.array ?? []).contains { $0["zoneID"]?["zoneName"]?.stringValue == "Secret" })
        let zoneLookup = await f.call("zones/lookup", #"{"zones": [{"zoneName": "Secret"}]}"#, db: "private", as: "bob")
        #expect(zoneLookup.json["zones"]?.array.first?.errorCode == "ZONE_NOT_FOUND")
        let changes = await f.call("records/changes", #"{"zoneID": {"zoneName": "Secret"}}"#, db: "private", as: "bob")
        #expect(changes.json.errorCode == "ZONE_NOT_FOUND")
        let zoneChanges = await f.call(
            "changes/zone", #"{"zones": [{"zoneID": {"zoneName": "Secret"}}]}"#, db: "private", as: "bob")
        #expect(zoneChanges.json["zones"]?.array.first?.errorCode == "ZONE_NOT_FOUND")
        let databaseChanges = await f.call("changes/database", "{}", db: "private", as: "bob")
        #expect(databaseChanges.status == 200)
        #expect(databaseChanges.json["zones"]?.array.isEmpty == true)
        let caller = await f.call("users/caller", db: "private", as: "bob")
        #expect(caller.json["userRecordName"]?.stringValue == "_bob")
        let delete = await f.call(
            "records/modify", #"{"operations": [{"operationType": "forceDelete", "record": {"recordName": "todo"}}]}"#,
            db: "private", as: "bob")
        #expect(delete.json["records"]?.array.first?.errorCode == "NOT_FOUND")
        // A save under the same name makes a record in bob's own database, not in alice's.
        let overwrite = await f.call(
            "records/modify",
            modifyBody([("forceReplace", recordJSON("todo", type: "Note", #""text": {"value": "bob"}"#))]),
            db: "private", as: "bob")
        #expect(overwrite.status == 200)
        let deleteZone = await f.call(
            "zones/modify",
            #"{"operations": [{"operationType": "delete", "zone": {"zoneID": {"zoneName": "Secret"}}}]}"#,
            db: "private", as: "bob")
        #expect(deleteZone.json["zones"]?.array.first?.errorCode == "ZONE_NOT_FOUND")
        // Without a user there is no private database at all.
        for op in WebServicesAPI.operations {
            let anonymous = await f.call(op, "{}", db: "private")
            #expect(anonymous.status == 421, "\(op)")
        }
        // Alice still has everything.
        let mine = await f.call("records/query", #"{"query": {"recordType": "Note"}}"#, db: "private", as: "alice")
        #expect(mine.json.recordNames == ["todo"])
        #expect(mine.json["records"]?.array.first?["fields"]?["text"]?["value"]?.stringValue == "alice default zone")
        let aliceZones = await f.call("changes/database", "{}", db: "private", as: "alice")
        #expect(aliceZones.json["zones"]?.array.count == 1)
        let mineInZone = await f.call(
            "records/query", #"{"query": {"recordType": "Note"}, "zoneID": {"zoneName": "Secret"}}"#, db: "private",
            as: "alice")
        #expect(mineInZone.json.recordNames == ["diary"])
    }

    @Test func anonymousCallersReadThePublicDatabaseButCannotWrite() async throws {
        let saved = await f.call(
            "records/modify", modifyBody([("create", recordJSON("x", type: "Note", #""v": {"value": 1}"#))]),
            as: "alice")
        #expect(saved.json.recordNames == ["x"])
        let write = await f.call("records/modify", modifyBody([("create", recordJSON("y", type: "Note", ""))]))
        #expect(write.status == 421)
        #expect(write.json.errorCode == "AUTHENTICATION_REQUIRED")
        let read = await f.call("records/query", #"{"query": {"recordType": "Note"}}"#)
        #expect(read.status == 200)
        #expect(read.json.recordNames == ["x"])
    }

    @Test func signedRequestsActAsTheKeysUser() async throws {
        let body = modifyBody([("create", recordJSON("s1", type: "Note", #""v": {"value": 1}"#))])
        let ok = try await f.signed("records/modify", body)
        #expect(ok.status == 200, "\(ok.json.jsonText)")
        #expect(ok.json["records"]?.array.first?["created"]?["userRecordName"]?.stringValue == "_server")

        // The same signature again: a replay.
        let path = ServerFixture.path("records/modify")
        let headers = try RequestSigning.headers(
            keyID: f.keyID, key: f.key, date: f.clock, body: Array("{}".utf8), subpath: path)
        let request = WebRequest(
            method: "POST", path: path, headers: Dictionary(uniqueKeysWithValues: headers), body: Array("{}".utf8))
        _ = await f.api.handle(request)
        let replay = await f.api.handle(request)
        #expect(replay.status == 401)
        #expect(replay.body["reason"]?.stringValue == "this signature was already used (a replay)")

        let stale = try await f.signed("zones/list", "", date: f.clock.addingTimeInterval(-601))
        #expect(stale.status == 401)
        #expect(stale.json["reason"]?.stringValue?.contains("more than 10 minutes") == true)
        let future = try await f.signed("zones/list", "", date: f.clock.addingTimeInterval(601))
        #expect(future.status == 401)

        let otherKey = try await f.signed("zones/list", "", key: P256.Signing.PrivateKey())
        #expect(otherKey.status == 401)
        #expect(otherKey.json["reason"]?.stringValue?.hasPrefix("the signature does not verify") == true)

        let unknownKey = try await f.signed("zones/list", "", keyID: "nobody")
        #expect(unknownKey.json["reason"]?.stringValue == "unknown key id \"nobody\"")

        let altered = try await f.signed(
            "records/query", #"{"query": {"recordType": "Note"}}"#, alterBody: #"{"query": {"recordType": "Users"}}"#)
        #expect(altered.status == 401)

        let otherPath = try await f.signed(
            "zones/list", "", alterPath: ServerFixture.path("zones/list", env: "production"))
        #expect(otherPath.status == 401)

        let privateDB = try await f.signed("zones/list", "", db: "private")
        #expect(privateDB.status == 403)
        #expect(privateDB.json.errorCode == "ACCESS_DENIED")
    }

    @Test func pathsAreChecked() async throws {
        for (path, reason) in [
            (
                "/database/2/\(ServerFixture.container)/development/public/zones/list",
                "unknown API version \"2\"; use 1"
            ),
            ("/database/1/iCloud.other/development/public/zones/list", "this server holds container"),
            ("/database/1/\(ServerFixture.container)/staging/public/zones/list", "unknown environment \"staging\""),
            (
                "/database/1/\(ServerFixture.container)/development/shared/zones/list",
                "the shared database is not supported"
            ),
            ("/database/1/\(ServerFixture.container)/development/public/records/frobnicate", "unknown operation"),
            ("/elsewhere", "paths are /database/1/"),
            (
                "/database/1/iCloud.é🇫🇷/development/public/zones/list",
                #"this server holds container "iCloud.test.cirrus", not "iCloud.é🇫🇷""#
            ),
            (
                "/database/1/\(ServerFixture.container)/development/public/records/qu€ry/",
                #"unknown operation "records/qu€ry""#
            ),
        ] {
            let r = await f.api.handle(WebRequest(method: "POST", path: path, query: ["ckAPIToken": f.apiToken]))
            #expect(r.status == 404, "\(path)")
            #expect(r.body["reason"]?.stringValue?.hasPrefix(reason) == true, "\(path): \(r.body.jsonText)")
        }
        // Empty parts count for nothing, as before: the operation is still zones/list.
        for path in [
            "//database/1/\(ServerFixture.container)/development/public//zones//list/",
            "/database/1/\(ServerFixture.container)//development/public/zones/list",
        ] {
            let r = await f.api.handle(WebRequest(method: "POST", path: path, query: ["ckAPIToken": f.apiToken]))
            #expect(r.status == 200, "\(path): \(r.body.jsonText)")
            #expect(r.body["zones"] != nil, "\(path)")
        }
        let bare = "/database/1/\(ServerFixture.container)/development/public//"
        let r = await f.api.handle(WebRequest(method: "POST", path: bare, query: ["ckAPIToken": f.apiToken]))
        #expect(r.status == 404)
    }

    @Test func aCorruptCredentialsFileStopsTheServerNamingIt() throws {
        let fs = f.fs
        try fs.writeAtomically("/c/web-services.json", Array("{not json".utf8))
        #expect {
            _ = try WebServicesAPI(
                directory: "/c", containerIdentifier: "x", options: ContainerOptions(fileSystem: fs, durability: .none))
        } throws: { "\($0)".contains("/c/web-services.json is unreadable") }
        #expect(throws: CredentialsError.self) {
            _ = try CredentialCommands.createToken(directory: "/c", user: nil, fileSystem: fs)
        }
    }
}

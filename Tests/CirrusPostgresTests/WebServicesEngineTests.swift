// `cirrus serve` over either engine: the same Web Services requests (records/modify,
// records/query paged by continuationMarker, records/lookup) give the same records on a
// container directory and on PostgreSQL; zones are created and their changes fetched on both;
// the schema is promoted and development reset through the Deployment pane's endpoints on both.
// Requests go straight to WebServicesAPI.handle (no socket).

import Cirrus
import CirrusIO
import CirrusPostgres
import CirrusServer
import Foundation
import RecordLog
import RecordModel
import Testing

private let containerID = "iCloud.test.ws"

/// A WebServicesAPI over one engine, with an API token and a web auth token for `_alice`.
private struct Served {
    let api: WebServicesAPI
    let token: String
    let alice: String
    let management: String

    init(_ engine: Engine) async throws {
        let fs = InMemoryFileSystem()
        try fs.createDirectory("/c")
        token = try CredentialCommands.createToken(directory: "/c", user: nil, fileSystem: fs)
        alice = try CredentialCommands.createToken(directory: "/c", user: "_alice", fileSystem: fs)
        management = try CredentialCommands.createToken(directory: "/c", user: nil, management: true, fileSystem: fs)
        let options = ContainerOptions(fileSystem: fs, durability: .none)
        switch engine {
        case .embedded:
            api = try WebServicesAPI(directory: "/c", containerIdentifier: containerID, options: options)
        case .postgres:
            let id = PG.freshContainer("ws")
            let dev = try await Container.open(postgres: PG.url!, containerID: id, environment: .development)
            let prod = try await Container.open(postgres: PG.url!, containerID: id, environment: .production)
            let url = PG.url!
            let reset = DevelopmentReset(
                reset: { try await Container.resetDevelopment(postgres: url, containerID: id) },
                reopen: { try await Container.open(postgres: url, containerID: id, environment: .development) })
            api = try WebServicesAPI(
                credentialsIn: "/c", containerIdentifier: containerID, development: dev, production: prod,
                developmentReset: reset, options: options)
        }
    }

    func call(
        _ op: String, _ body: String, db: String = "public", env: String = "development",
        headers: [String: String] = [:]
    ) async -> (status: Int, json: JSONValue) {
        let r = await api.handle(
            WebRequest(
                method: "POST", path: "/database/1/\(containerID)/\(env)/\(db)/\(op)",
                query: ["ckAPIToken": token, "ckWebAuthToken": alice], headers: headers, body: Array(body.utf8)))
        return (r.status, r.body)
    }
}

private func names(_ json: JSONValue) -> [String] {
    guard case .array(let records)? = json["records"] else { return [] }
    return records.compactMap { $0["recordName"]?.stringValue }
}

@Suite(.serialized) struct WebServicesEngineTests {
    /// users/caller and users/discover answer from each engine's identities (on PostgreSQL the
    /// container's `cirrus_users`): only users who opted in are found.
    @Test(arguments: Engine.available)
    func usersAreAnsweredOnEitherEngine(_ engine: Engine) async throws {
        let s = try await Served(engine)
        let container = s.api.container(.development)
        _ = try await container.storeUserAccount(
            UserAccount(
                userRecordName: "_alice", emailAddress: "alice@example.com",
                name: UserNameComponents(givenName: "Alice"), discoverability: .granted))
        _ = try await container.storeUserAccount(UserAccount(userRecordName: "_bob", emailAddress: "bob@example.com"))
        let caller = await s.call("users/caller", "{}")
        #expect(caller.status == 200, "\(caller.json.jsonText)")
        #expect(caller.json["lookupInfo"]?["emailAddress"]?.stringValue == "alice@example.com")
        let found = await s.call(
            "users/discover",
            #"{"lookupInfos": [{"emailAddress": "BOB@example.com"}, {"emailAddress": "alice@example.com"}]}"#)
        #expect(found.status == 200, "\(found.json.jsonText)")
        guard case .array(let users)? = found.json["users"] else {
            Issue.record("no users in \(found.json.jsonText)")
            return
        }
        #expect(users.compactMap { $0["userRecordName"]?.stringValue } == ["_alice"])
    }

    /// The dashboard's Deployment pane on each engine: the schema promoted to production, then
    /// development reset (its records gone, production's kept).
    @Test(arguments: Engine.available)
    func promotionAndResetWorkOnEitherEngine(_ engine: Engine) async throws {
        let s = try await Served(engine)
        let manage = ["x-cirrus-management-token": s.management]
        let create =
            #"{"operations": [{"operationType": "create", "record": {"recordName": "n1", "recordType": "Note", "#
            + #""fields": {"title": {"value": "hello"}}}}]}"#
        #expect(await s.call("records/modify", create).status == 200)
        let promote = await s.call(
            "cirrus/schema/promote", #"{"confirm": "\#(containerID)"}"#, headers: manage)
        #expect(promote.status == 200, "\(promote.json.jsonText)")
        #expect(await s.call("records/modify", create, env: "production").status == 200, "production has Note now")
        let reset = await s.call("cirrus/reset", #"{"confirm": "\#(containerID)"}"#, headers: manage)
        #expect(reset.status == 200, "\(reset.json.jsonText)")
        let lookup = await s.call("records/lookup", #"{"records": [{"recordName": "n1"}]}"#)
        guard case .array(let found)? = lookup.json["records"], found.count == 1 else {
            Issue.record("lookup: \(lookup.json.jsonText)")
            return
        }
        #expect(found[0]["serverErrorCode"]?.stringValue == "NOT_FOUND", "development was reset")
        let kept = await s.call("records/lookup", #"{"records": [{"recordName": "n1"}]}"#, env: "production")
        #expect(kept.json.jsonText.contains("hello"), "production kept its record: \(kept.json.jsonText)")
        try s.api.close()
    }

    /// What one engine answers to the same requests: the pages' names, a lookup's fields.
    private func session(_ engine: Engine) async throws -> (pages: [[String]], lookup: String) {
        let s = try await Served(engine)
        let ops = (0..<23).map { i in
            #"{"operationType": "create", "record": {"recordName": "p\#(i)", "recordType": "Place", "fields": {"#
                + #""kind": {"value": "\#(i % 3 == 0 ? "park" : "cafe")"}, "rank": {"value": \#(i * 7 % 11)}}}}"#
        }
        let created = await s.call("records/modify", #"{"operations": [\#(ops.joined(separator: ", "))]}"#)
        #expect(created.status == 200, "\(created.json.jsonText)")
        #expect(names(created.json).count == 23)
        let query =
            #""query": {"recordType": "Place", "filterBy": [{"fieldName": "kind", "comparator": "EQUALS", "fieldValue": {"value": "cafe"}}], "sortBy": [{"fieldName": "rank", "ascending": false}]}"#
        var pages: [[String]] = []
        var marker: String? = nil
        repeat {
            let body =
                "{\(query), \"resultsLimit\": 4" + (marker.map { #", "continuationMarker": "\#($0)""# } ?? "") + "}"
            let r = await s.call("records/query", body)
            #expect(r.status == 200, "\(r.json.jsonText)")
            pages.append(names(r.json))
            marker = r.json["continuationMarker"]?.stringValue
        } while marker != nil && pages.count < 10
        let lookup = await s.call("records/lookup", #"{"records": [{"recordName": "p4"}, {"recordName": "nope"}]}"#)
        #expect(lookup.status == 200)
        guard case .array(let found)? = lookup.json["records"], found.count == 2 else {
            Issue.record("lookup: \(lookup.json.jsonText)")
            return (pages, "")
        }
        #expect(found[1]["serverErrorCode"]?.stringValue == "NOT_FOUND")
        let zone = await s.call(
            "zones/modify",
            #"{"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": "Trips"}}}]}"#,
            db: "private")
        #expect(zone.status == 200, "\(zone.json.jsonText)")
        let changes = await s.call("changes/zone", #"{"zones": [{"zoneID": {"zoneName": "Trips"}}]}"#, db: "private")
        #expect(changes.status == 200, "\(changes.json.jsonText)")
        guard case .array(let zones)? = changes.json["zones"], zones.count == 1 else {
            Issue.record("changes/zone: \(changes.json.jsonText)")
            return (pages, "")
        }
        #expect(zones[0]["syncToken"]?.stringValue?.isEmpty == false, "\(changes.json.jsonText)")
        return (pages, found[0]["fields"]?.jsonText ?? "")
    }

    @Test(.enabled(if: PG.available, PG.disabledReason))
    func theSameRequestsGiveTheSameRecordsOnBothEngines() async throws {
        let embedded = try await session(.embedded)
        let postgres = try await session(.postgres)
        // Every cafe once, by rank descending then name — computed, not read from either engine.
        let cafes = (0..<23).filter { $0 % 3 != 0 }.map { ("p\($0)", $0 * 7 % 11) }
        let expected = cafes.sorted { ($0.1, $1.0) > ($1.1, $0.0) }.map(\.0)
        #expect(embedded.pages.flatMap { $0 } == expected)
        #expect(postgres.pages.flatMap { $0 } == expected)
        #expect(embedded.pages.map(\.count) == postgres.pages.map(\.count))
        #expect(embedded.lookup == postgres.lookup && embedded.lookup.contains("rank"))
    }
}

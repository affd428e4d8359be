// users/caller, users/discover, users/lookup/email, users/lookup/id: what a caller sees of
// themself; only users who opted in are found, and a user who did not is answered exactly as an
// unknown address; bad requests name where they are wrong; per-caller rate limits on lookups.

import Cirrus
import CirrusServer
import Foundation
import RecordModel
import Testing

@Suite struct UsersEndpointTests {
    let f: ServerFixture

    init() throws {
        var limits = ServerLimits()
        limits.userLookupsPerMinute = 12
        f = try ServerFixture(limits: limits)
        let c = f.api.container(.development)
        try c.saveUserAccount(
            UserAccount(
                userRecordName: "_alice", emailAddress: "alice@example.com",
                name: UserNameComponents(givenName: "Alice", familyName: "Martin")))
        try c.saveUserAccount(
            UserAccount(
                userRecordName: "_carol", emailAddress: "carol@example.com", phoneNumber: "+33 6 12 34 56 78",
                name: UserNameComponents(givenName: "Carol"), discoverability: .granted))
        try c.saveUserAccount(
            UserAccount(userRecordName: "_dave", emailAddress: "dave@example.com", discoverability: .denied))
    }

    @Test func callerShowsTheCallersOwnAccount() async throws {
        defer { try? f.close() }
        let alice = await f.call("users/caller", as: "alice")
        #expect(alice.status == 200)
        #expect(alice.json["userRecordName"]?.stringValue == "_alice")
        #expect(alice.json["nameComponents"]?["familyName"]?.stringValue == "Martin")
        #expect(alice.json["lookupInfo"]?["emailAddress"]?.stringValue == "alice@example.com")
        let bob = await f.call("users/caller", as: "bob")
        #expect(bob.json == .object([("userRecordName", .string("_bob"))]))
        #expect(await f.call("users/caller").json.errorCode == "AUTHENTICATION_REQUIRED")
    }

    @Test func onlyUsersWhoOptedInAreFound() async throws {
        defer { try? f.close() }
        let r = await f.call(
            "users/discover",
            #"""
            {"lookupInfos": [{"emailAddress": "dave@example.com"}, {"emailAddress": "CAROL@example.com"},
              {"phoneNumber": "+33612345678"}, {"userRecordName": "_alice"}, {"emailAddress": "nobody@example.com"}]}
            """#, as: "bob")
        #expect(r.status == 200)
        let users = r.json["users"]?.array ?? []
        #expect(users.compactMap { $0["userRecordName"]?.stringValue } == ["_carol"])
        #expect(users.first?["lookupInfo"]?["emailAddress"]?.stringValue == "CAROL@example.com")
        #expect(users.first?["nameComponents"]?["givenName"]?.stringValue == "Carol")
        #expect(users.first?["lookupInfo"]?["phoneNumber"] == nil)
        // Opted out (denied, never asked) and unknown: the same bytes, for every endpoint.
        for (op, hidden, unknown) in [
            (
                "users/lookup/email", #"{"users": [{"emailAddress": "dave@example.com"}]}"#,
                #"{"users": [{"emailAddress": "dan@example.com"}]}"#
            ),
            (
                "users/lookup/id", #"{"users": [{"userRecordName": "_alice"}]}"#,
                #"{"users": [{"userRecordName": "_zed"}]}"#
            ),
            (
                "users/discover", #"{"lookupInfos": [{"userRecordName": "_dave"}]}"#,
                #"{"lookupInfos": [{"userRecordName": "_nobody"}]}"#
            ),
        ] {
            let a = await f.call(op, hidden, as: "bob")
            let b = await f.call(op, unknown, as: "bob")
            #expect(a.status == 200 && b.status == 200)
            #expect(a.json == b.json && a.json == .object([("users", .array([]))]), "\(op)")
        }
        let byID = await f.call("users/lookup/id", #"{"users": [{"userRecordName": "_carol"}]}"#, as: "alice")
        #expect(byID.json["users"]?.array.first?["userRecordName"]?.stringValue == "_carol")
        // Identities belong to the container: production answers the same.
        let prod = await f.call(
            "users/lookup/email", #"{"users": [{"emailAddress": "carol@example.com"}]}"#, env: "production", as: "alice"
        )
        #expect(prod.json["users"]?.array.count == 1)
    }

    @Test func badRequestsNameWhereTheyAreWrong() async throws {
        defer { try? f.close() }
        let cases: [(String, String, String?, String, String)] = [
            (
                "users/discover", #"{"lookupInfos": [{"emailAddress": "carol@example.com"}]}"#, nil,
                "AUTHENTICATION_REQUIRED", "signed-in user"
            ),
            (
                "users/lookup/email", #"{"users": [{"emailAddress": "a@b.co"}, {"emailAddress": "not an address"}]}"#,
                "bob", "BAD_REQUEST", "users[1]: \"not an address\" is not an email address"
            ),
            (
                "users/discover", #"{"lookupInfos": [{"emailAddress": "a@b.co", "phoneNumber": "+3361234"}]}"#, "bob",
                "BAD_REQUEST", "lookupInfos[0]: expected exactly one of"
            ),
            (
                "users/discover", #"{"lookupInfos": [{"phoneNumber": "call me"}]}"#, "bob", "BAD_REQUEST",
                "is not a phone number"
            ),
            (
                "users/lookup/id", #"{"users": [{"userRecordName": 7}]}"#, "bob", "BAD_REQUEST",
                "users[0].userRecordName: expected a string"
            ),
            (
                "users/lookup/email",
                #"{"users": ["# + Array(repeating: #"{"emailAddress": "a@b.co"}"#, count: 201).joined(separator: ",")
                    + "]}",
                "bob", "BAD_REQUEST", "201 elements; the limit is 200"
            ),
        ]
        for (op, body, who, code, says) in cases {
            let r = await f.call(op, body, as: who)
            #expect(r.json.errorCode == code, "\(op) \(body.prefix(80)): \(r.json)")
            #expect(r.json["reason"]?.stringValue?.contains(says) == true, "\(r.json)")
        }
    }

    @Test func lookupsAreRateLimitedPerCaller() async throws {
        defer { try? f.close() }
        let five =
            #"{"users": ["#
            + Array(repeating: #"{"emailAddress": "carol@example.com"}"#, count: 5)
            .joined(separator: ",") + "]}"
        // 12 lookups a minute (the fixture's clock stands still: nothing refills).
        #expect(await f.call("users/lookup/email", five, as: "bob").status == 200)
        #expect(await f.call("users/lookup/email", five, as: "bob").status == 200)
        let third = await f.call("users/lookup/email", five, as: "bob")
        #expect(third.status == 429 && third.json.errorCode == "THROTTLED", "\(third.json)")
        #expect(third.json["reason"]?.stringValue?.contains("retry in") == true)
        // Refused requests cost nothing: two more lookups still fit.
        let two = #"{"users": [{"userRecordName": "_carol"}, {"userRecordName": "_dave"}]}"#
        #expect(await f.call("users/lookup/id", two, as: "bob").status == 200)
        #expect(await f.call("users/lookup/id", #"{"users": [{"userRecordName": "_carol"}]}"#, as: "bob").status == 429)
        // Another caller has an allowance of their own; a request over the whole allowance never fits.
        #expect(await f.call("users/lookup/email", five, as: "alice").status == 200)
        let huge =
            #"{"users": ["#
            + Array(repeating: #"{"userRecordName": "_carol"}"#, count: 13)
            .joined(separator: ",") + "]}"
        let r = await f.call("users/lookup/id", huge, as: "alice")
        #expect(r.status == 429 && r.json["reason"]?.stringValue?.contains("at most that many") == true)
    }
}

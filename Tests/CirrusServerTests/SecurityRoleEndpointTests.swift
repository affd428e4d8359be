// Custom security roles over Web Services: the same grants as the façade on query, lookup and
// modify, for a role's member, a signed-in user without it and an anonymous caller.

import Cirrus
import CirrusServer
import RecordModel
import Testing

@Suite struct SecurityRoleEndpointTests {
    @Test func aRolesGrantsApplyToEveryEndpoint() async throws {
        let f = try ServerFixture()
        defer { try? f.close() }
        let created = await f.call(
            "records/modify", modifyBody([("create", recordJSON("m1", type: "Memo", #""n": {"value": 1}"#))]),
            as: "alice")
        #expect(created.json.recordNames == ["m1"])
        let c = f.api.container(.development)
        try c.createRole("Auditor")
        for role in [Grant.world, Grant.authenticated, Grant.creator] {
            try c.revoke([.create, .read, .write], on: "Memo", from: role)
        }
        try c.grant([.read], on: "Memo", to: "Auditor")
        try c.grant([.create], on: "Memo", to: "Auditor")
        try c.assign(user: "_bob", to: "Auditor")
        let query = #"{"query": {"recordType": "Memo"}}"#
        let lookup = #"{"records": [{"recordName": "m1"}]}"#

        // _bob holds Auditor: reads and creates, but may not change alice's record (no WRITE).
        #expect(await f.call("records/query", query, as: "bob").json.recordNames == ["m1"])
        #expect(await f.call("records/lookup", lookup, as: "bob").json.recordNames == ["m1"])
        let bobCreates = await f.call(
            "records/modify", modifyBody([("create", recordJSON("m2", type: "Memo", #""n": {"value": 2}"#))]),
            as: "bob")
        #expect(bobCreates.json.recordNames == ["m2"] && bobCreates.json["records"]?.array.first?.errorCode == nil)
        let bobWrites = await f.call(
            "records/modify", modifyBody([("forceUpdate", recordJSON("m1", type: "Memo", #""n": {"value": 9}"#))]),
            as: "bob")
        #expect(bobWrites.json["records"]?.array.first?.errorCode == "ACCESS_DENIED")

        // _alice (the creator, but _creator lost every grant) and an anonymous caller read nothing.
        let aliceQuery = await f.call("records/query", query, as: "alice")
        #expect(aliceQuery.status == 403 && aliceQuery.json.errorCode == "ACCESS_DENIED")
        #expect(
            await f.call("records/lookup", lookup, as: "alice").json["records"]?.array.first?.errorCode
                == "ACCESS_DENIED")
        let anonymous = await f.call("records/query", query)
        #expect(anonymous.json.errorCode == "AUTHENTICATION_REQUIRED")

        // Unassigned, _bob is refused at once; production knows none of this (not promoted).
        try c.unassign(user: "_bob", from: "Auditor")
        #expect(await f.call("records/query", query, as: "bob").json.errorCode == "ACCESS_DENIED")
        #expect(f.api.container(.production).securityRoles().isEmpty)
    }
}

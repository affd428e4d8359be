// cirrus/reset (the dashboard's Deployment pane): the reset of development over HTTP — what it
// deletes, that production's files stay byte for byte, that the server goes on serving the fresh
// environment — and each refusal, which changes nothing.

import Cirrus
import CirrusServer
import Foundation
import RecordLog
import RecordModel
import Testing

@Suite struct ResetEndpointTests {
    let f: ServerFixture
    init() throws { f = try ServerFixture() }

    func reset(_ body: String, env: String = "development", management: String?) async -> (status: Int, json: JSONValue)
    {
        var headers: [String: String] = [:]
        if let management { headers["X-Cirrus-Management-Token"] = management }
        let r = await f.api.handle(
            WebRequest(
                method: "POST", path: ServerFixture.path("cirrus/reset", env: env), query: ["ckAPIToken": f.apiToken],
                headers: headers, body: Array(body.utf8)))
        return (r.status, r.body)
    }

    var confirm: String { #"{"confirm": "\#(ServerFixture.container)"}"# }

    func files(_ dir: String) throws -> [String: [UInt8]] {
        var out: [String: [UInt8]] = [:]
        for name in try f.fs.list(dir) {
            let p = dir + "/" + name
            if let b = f.fs.contents(p) { out[p] = b } else { out.merge(try files(p)) { a, _ in a } }
        }
        return out
    }

    /// A Place in development and, after a promotion, one in production.
    func seed() async {
        let dev = await f.call(
            "records/modify", modifyBody([("create", recordJSON("p1", #""name": {"value": "Louvre"}"#))]), as: "alice")
        #expect(dev.json.recordNames == ["p1"])
        #expect(await f.promote(confirm, management: f.management).status == 200)
        let prod = await f.call(
            "records/modify", modifyBody([("create", recordJSON("p2", #""name": {"value": "Orsay"}"#))]),
            env: "production", as: "alice")
        #expect(prod.json.recordNames == ["p2"])
    }

    func developmentHasP1() async -> Bool {
        await f.call("records/lookup", #"{"records": [{"recordName": "p1"}]}"#).json["records"]?.array.first?[
            "recordChangeTag"] != nil
    }

    @Test func resetEmptiesDevelopmentAndLeavesProductionAlone() async throws {
        defer { try? f.close() }
        await seed()
        let production = try files("/c/production")
        let r = await reset(confirm, management: f.management)
        #expect(r.status == 200, "\(r.json)")
        #expect(r.json["reset"] == .bool(true) && r.json["container"]?.stringValue == ServerFixture.container)
        #expect(try files("/c/production") == production)
        #expect(await developmentHasP1() == false)
        let schema = await f.call("cirrus/schema", "{}")
        #expect(schema.json["recordTypes"]?.array.compactMap { $0["name"]?.stringValue } == ["Users"])
        // The server serves the fresh environment: the schema grows again; production still answers.
        let again = await f.call(
            "records/modify", modifyBody([("create", recordJSON("p3", #""n": {"value": 3}"#))]), as: "bob")
        #expect(again.json.recordNames == ["p3"] && again.json["records"]?.array.first?.errorCode == nil)
        let prod = await f.call("records/lookup", #"{"records": [{"recordName": "p2"}]}"#, env: "production")
        #expect(prod.json["records"]?.array.first?["recordChangeTag"] != nil)
    }

    @Test func refusalsChangeNothing() async throws {
        defer { try? f.close() }
        await seed()
        let cases: [(String, String, String?, Int, String, String)] = [
            (confirm, "development", nil, 403, "ACCESS_DENIED", "management token"),
            (confirm, "development", "not-a-token", 401, "AUTHENTICATION_FAILED", "management token"),
            (confirm, "development", f.apiToken, 401, "AUTHENTICATION_FAILED", "management token"),
            (confirm, "production", f.management, 400, "BAD_REQUEST", "production is never reset"),
            (#"{"confirm": "iCloud.other"}"#, "development", f.management, 400, "BAD_REQUEST", "confirm"),
            ("{}", "development", f.management, 400, "BAD_REQUEST", "confirm"),
        ]
        for (body, env, token, status, code, says) in cases {
            let r = await reset(body, env: env, management: token)
            #expect(r.status == status && r.json.errorCode == code, "\(body) \(env): \(r.json)")
            #expect(r.json["reason"]?.stringValue?.contains(says) == true, "\(r.json)")
            #expect(await developmentHasP1(), "\(body) \(env) changed development")
        }
    }
}

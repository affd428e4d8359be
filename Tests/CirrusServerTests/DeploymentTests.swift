// cirrus/schema/promote (the dashboard's Deployment pane): the happy path, the dry run, and each
// refusal — no management token, an unknown one, a management token used as an API token, the
// container not confirmed, the production environment, a production schema development would
// break; and the header over real HTTP. Also cirrus/check's `variables` (the map's `$here`).

import Cirrus
import Foundation
import Hummingbird
import HummingbirdTesting
import RecordModel
import Testing

@testable import CirrusServer

@Suite struct DeploymentTests {
    let f: ServerFixture
    init() throws { f = try ServerFixture() }

    var confirm: String { #"{"confirm": "\#(ServerFixture.container)"}"# }

    /// Saves a Place in development (its type and fields are created by the save).
    func seedDevelopment() async {
        let saved = await f.call(
            "records/modify",
            modifyBody([("create", recordJSON("p1", #""name": {"value": "Louvre"}, "rank": {"value": 1}"#))]),
            as: "alice")
        #expect(saved.status == 200 && saved.json.recordNames == ["p1"])
    }

    /// Whether a Place can be saved in production.
    func savesInProduction(_ name: String) async -> Bool {
        let r = await f.call(
            "records/modify", modifyBody([("create", recordJSON(name, #""name": {"value": "Orsay"}"#))]),
            env: "production", as: "alice")
        return r.status == 200 && r.json["records"]?.array.first?.errorCode == nil
    }

    var productionPlace: RecordTypeSchema? { f.api.container(.production).schema.recordTypes["Place"] }

    @Test func promotionCopiesTheDevelopmentSchemaToProduction() async throws {
        await seedDevelopment()
        #expect(productionPlace == nil)
        #expect(await savesInProduction("before") == false)
        let r = await f.promote(confirm, management: f.management)
        #expect(r.status == 200)
        #expect(r.json["changed"] == .bool(true))
        #expect(r.json["applied"] == .bool(true))
        #expect(r.json["container"]?.stringValue == ServerFixture.container)
        let changes = (r.json["changes"]?.array ?? []).compactMap { $0["change"]?.stringValue }
        #expect(changes.contains { $0.hasPrefix("record type Place") }, "\(changes)")
        #expect(r.json["recordTypes"]?.array.contains(.string("Place")) == true)
        let dev = try #require(f.api.container(.development).schema.recordTypes["Place"])
        #expect(productionPlace == dev)
        #expect(await savesInProduction("after"))
        // Promoting again changes nothing.
        let again = await f.promote(confirm, management: f.management)
        #expect(again.status == 200)
        #expect(again.json["changed"] == .bool(false))
        #expect(again.json["changes"]?.array == [])
    }

    @Test func aDryRunListsTheChangesAndWritesNothing() async {
        await seedDevelopment()
        let r = await f.promote(
            #"{"confirm": "\#(ServerFixture.container)", "dryRun": true}"#, management: f.management)
        #expect(r.status == 200)
        #expect(r.json["applied"] == .bool(false))
        #expect(r.json["changed"] == .bool(true))
        let changes = r.json["changes"]?.array ?? []
        #expect(changes.contains { $0["change"]?.stringValue == "record type Place (2 fields)" }, "\(changes)")
        #expect(changes.allSatisfy { $0["refused"] == .bool(false) })
        #expect(productionPlace == nil)
    }

    @Test func withoutAManagementTokenTheServerRefuses() async {
        await seedDevelopment()
        let r = await f.promote(confirm, management: nil)
        #expect(r.status == 403)
        #expect(r.json.errorCode == "ACCESS_DENIED")
        #expect(r.json["reason"]?.stringValue?.contains("X-Cirrus-Management-Token") == true)
        #expect(productionPlace == nil)
    }

    @Test func anUnknownManagementTokenIsRefused() async {
        await seedDevelopment()
        for wrong in ["0123", f.apiToken, f.alice] {
            let r = await f.promote(confirm, management: wrong)
            #expect(r.status == 401, "\(wrong)")
            #expect(r.json.errorCode == "AUTHENTICATION_FAILED")
        }
        #expect(productionPlace == nil)
    }

    @Test func aManagementTokenIsNotAnAPIToken() async {
        let r = await f.promote(confirm, management: f.management, apiToken: f.management)
        #expect(r.status == 401)
        #expect(r.json["reason"]?.stringValue == "unknown ckAPIToken")
    }

    @Test func theContainerMustBeConfirmed() async {
        await seedDevelopment()
        let missing = await f.promote("{}", management: f.management)
        #expect(missing.status == 400)
        #expect(missing.json["reason"]?.stringValue == "confirm: missing; expected a string")
        let other = await f.promote(#"{"confirm": "iCloud.other"}"#, management: f.management)
        #expect(other.status == 400)
        #expect(
            other.json["reason"]?.stringValue
                == #"confirm: must name this container, "iCloud.test.cirrus", to confirm the promotion"#)
        #expect(productionPlace == nil)
    }

    @Test func promotionIsMadeFromDevelopmentOnly() async {
        await seedDevelopment()
        let r = await f.promote(confirm, env: "production", management: f.management)
        #expect(r.status == 400)
        #expect(r.json["reason"]?.stringValue?.contains("call this under /development/") == true)
        #expect(productionPlace == nil)
    }

    @Test func aProductionSchemaDevelopmentWouldBreakRefusesThePromotion() async throws {
        await seedDevelopment()
        let production = f.api.container(.production)
        try production.importSchema("DEFINE SCHEMA RECORD TYPE Place (name INT64 QUERYABLE, since TIMESTAMP);")
        let before = production.schema
        let dry = await f.promote(
            #"{"confirm": "\#(ServerFixture.container)", "dryRun": true}"#, management: f.management)
        let refused = (dry.json["changes"]?.array ?? []).filter { $0["refused"] == .bool(true) }
            .compactMap { $0["change"]?.stringValue }
        #expect(refused == ["field Place.name retyped INT64 → STRING", "field Place.since only in production"])
        let r = await f.promote(confirm, management: f.management)
        #expect(r.status == 400)
        #expect(r.json["reason"]?.stringValue?.hasPrefix("production refuses the development schema: ") == true)
        #expect(production.schema == before)
    }

    @Test func theManagementTokenTravelsInAHeaderOverHTTP() async throws {
        await seedDevelopment()
        let app = HTTPServer.application(f.api, host: "127.0.0.1", port: 0)
        let uri = ServerFixture.path("cirrus/schema/promote") + "?ckAPIToken=\(f.apiToken)"
        let body = confirm
        let management = f.management
        let header = try #require(HTTPFields.Element.Name("X-Cirrus-Management-Token"))
        try await app.test(.live) { client in
            try await client.execute(uri: uri, method: .post, body: ByteBuffer(string: body)) { response in
                #expect(response.status == .forbidden)
            }
            try await client.execute(
                uri: uri, method: .post, headers: [header: management],
                body: ByteBuffer(string: body)
            ) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body).contains(#""applied":true"#))
            }
        }
        #expect(productionPlace != nil)
    }

    @Test func checkGivesVariablesTheirValues() async {
        _ = await f.call(
            "records/modify",
            modifyBody([
                ("create", recordJSON("l", #""location": {"value": {"latitude": 48.86, "longitude": 2.34}}"#))
            ]), as: "alice")
        let predicate = "distanceToLocation:fromLocation:(location, $here) < 2"
        let ok = await f.call(
            "cirrus/check",
            #"{"recordType": "Place", "predicate": "\#(predicate)", "variables": {"here": {"value": {"latitude": 48.85, "longitude": 2.35}, "type": "LOCATION"}}}"#
        )
        #expect(ok.json["ok"] == .bool(true), "\(ok.json)")
        let filter = ok.json["filterBy"]?.array.first
        #expect(filter?["comparator"]?.stringValue == "NEAR")
        #expect(filter?["distance"] == .number(2000) || filter?["distance"] == .integer(2000), "\(ok.json)")
        let unbound = await f.call("cirrus/check", #"{"recordType": "Place", "predicate": "\#(predicate)"}"#)
        #expect(unbound.json["ok"] == .bool(false))
        let bad = await f.call(
            "cirrus/check",
            #"{"recordType": "Place", "predicate": "\#(predicate)", "variables": {"here": {"value": {"latitude": "north"}, "type": "LOCATION"}}}"#
        )
        #expect(bad.status == 400)
        #expect(bad.json["reason"]?.stringValue?.hasPrefix("variables.here") == true, "\(bad.json)")
    }
}

// zones/* and the HTTP front (Hummingbird on an ephemeral loopback port).

import Cirrus
import Foundation
import Hummingbird
import HummingbirdTesting
import RecordModel
import Testing

@testable import CirrusServer

@Suite struct ZonesAndHTTPTests {
    let f: ServerFixture
    init() throws { f = try ServerFixture() }

    @Test func zonesAreCreatedListedLookedUpAndDeleted() async throws {
        let created = await f.call(
            "zones/modify",
            #"{"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": "A"}}}, {"operationType": "create", "zone": {"zoneName": "B"}}]}"#,
            db: "private", as: "alice")
        #expect(
            (created.json["zones"]?.array ?? []).compactMap { $0["zoneID"]?["zoneName"]?.stringValue } == ["A", "B"])
        let listed = await f.call("zones/list", db: "private", as: "alice")
        #expect(
            (listed.json["zones"]?.array ?? []).compactMap { $0["zoneID"]?["zoneName"]?.stringValue } == [
                "_defaultZone", "A", "B",
            ])
        let lookup = await f.call(
            "zones/lookup", #"{"zones": [{"zoneName": "B"}, {"zoneName": "C"}]}"#, db: "private", as: "alice")
        let items = lookup.json["zones"]?.array ?? []
        #expect(items.first?["zoneID"]?["zoneName"]?.stringValue == "B")
        #expect(items.last?.errorCode == "ZONE_NOT_FOUND")
        let deleted = await f.call(
            "zones/modify",
            #"{"operations": [{"operationType": "delete", "zone": {"zoneID": {"zoneName": "A"}}}, {"operationType": "rename", "zone": {"zoneName": "B"}}]}"#,
            db: "private", as: "alice")
        #expect(deleted.status == 400)
        #expect(
            deleted.json["reason"]?.stringValue
                == #"operations[1].operationType: unknown operation type "rename" (create, delete)"#)
    }

    @Test func overHTTPOnALoopbackPort() async throws {
        let app = HTTPServer.application(f.api, host: "127.0.0.1", port: 0)
        let token = f.apiToken
        let alice = f.alice
        try await app.test(.live) { client in
            let base = ServerFixture.path("records")
            let save = modifyBody([("create", recordJSON("h1", type: "Note", #""title": {"value": "over http"}"#))])
            try await client.execute(
                uri: "\(base)/modify?ckAPIToken=\(token)&ckWebAuthToken=\(alice)", method: .post,
                body: ByteBuffer(string: save)
            ) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/json; charset=utf-8")
            }
            try await client.execute(
                uri: "\(base)/query?ckAPIToken=\(token)", method: .post,
                body: ByteBuffer(string: #"{"query": {"recordType": "Note"}}"#)
            ) { response in
                let json = try JSONValue.parse(String(buffer: response.body))
                #expect(json.recordNames == ["h1"])
            }
            try await client.execute(uri: "\(base)/query", method: .post, body: ByteBuffer(string: "{}")) { response in
                #expect(response.status == .unauthorized)
                let json = try JSONValue.parse(String(buffer: response.body))
                #expect(json.errorCode == "AUTHENTICATION_FAILED")
            }
            try await client.execute(
                uri: "\(base)/query?ckAPIToken=\(token)", method: .post,
                body: ByteBuffer(string: String(repeating: " ", count: 5 << 20))
            ) { response in
                #expect(response.status == .contentTooLarge)
            }
        }
    }
}

@Suite struct OpenAPIDescriptionTests {
    /// docs/openapi.yaml describes every operation the server answers.
    @Test func everyOperationIsInTheOpenAPIDescription() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let yaml = try String(contentsOf: root.appendingPathComponent("docs/openapi.yaml"), encoding: .utf8)
        for op in WebServicesAPI.operations + ["assets/put", "assets/download", "notifications"] {
            #expect(yaml.contains("/database/1/{container}/{environment}/{database}/\(op):\n"), "\(op)")
        }
    }
}

@Suite struct DashboardSupportTests {
    let f: ServerFixture
    init() throws { f = try ServerFixture() }

    /// A container name is escaped scalar by scalar: a `"` or `<` followed by a combining mark
    /// (one character with it) is escaped too.
    @Test func theContainerNameIsEscapedEvenBeforeACombiningMark() {
        #expect(Dashboard.htmlEscaped("a\"\u{301}<\u{301}&>b") == "a&quot;\u{301}&lt;\u{301}&amp;&gt;b")
    }

    @Test func checkGivesTheFiltersOrTheCaretInUTF16() async throws {
        _ = await f.call(
            "records/modify",
            modifyBody([("create", recordJSON("p", #""kind": {"value": "café"}, "rank": {"value": 1}"#))]),
            as: "alice")
        let ok = await f.call("cirrus/check", #"{"recordType": "Place", "predicate": "kind == 'café' AND rank > 0"}"#)
        #expect(ok.json["ok"] == .bool(true), "\(ok.json.jsonText)")
        #expect(ok.json["filterBy"]?.array.count == 2)
        #expect(ok.json["filterBy"]?.array.first?["comparator"]?.stringValue == "EQUALS")
        // "é" is 2 UTF-8 bytes but 1 UTF-16 unit: OR is at UTF-16 index 15 (byte 16).
        let bad = await f.call("cirrus/check", #"{"recordType": "Place", "predicate": "kind == 'café' OR rank > 0"}"#)
        #expect(bad.json["ok"] == .bool(false))
        #expect(bad.json["start"]?.int64Value == 15)
        #expect(bad.json["end"]?.int64Value == 17)
        #expect(bad.json["message"]?.stringValue?.isEmpty == false)
        let missing = await f.call("cirrus/check", #"{"predicate": "x"}"#)
        #expect(missing.json["reason"]?.stringValue == "recordType: missing; expected a string")
        let schema = await f.call("cirrus/schema")
        let place = schema.json["recordTypes"]?.array.first
        #expect(place?["name"]?.stringValue == "Place")
        #expect(place?["fields"]?.array.first?["name"]?.stringValue == "kind")
        #expect(
            place?["fields"]?.array.first?["options"]
                == .array([.string("QUERYABLE"), .string("SORTABLE"), .string("SEARCHABLE")]))
    }

    @Test func explainGivesThePlanTreeWithActualRowsAndMissingIndexes() async throws {
        let ops = (0..<20).map { ("create", recordJSON("p\($0)", #""rank": {"value": \#($0)}"#)) }
        _ = await f.call("records/modify", modifyBody(ops), as: "alice")
        let e = await f.call(
            "cirrus/explain",
            #"{"query": {"recordType": "Place", "filterBy": [{"fieldName": "rank", "comparator": "GREATER_THAN_OR_EQUALS", "fieldValue": {"value": 15}}], "sortBy": [{"fieldName": "rank"}]}, "resultsLimit": 3}"#
        )
        #expect(e.status == 200, "\(e.json.jsonText)")
        let plan = try #require(e.json["plan"])
        #expect(plan["operator"]?.stringValue?.isEmpty == false)
        // Every node has its estimate; the executed ones their actual rows; the page had 3.
        func nodes(_ n: JSONValue) -> [JSONValue] { [n] + (n["children"]?.array ?? []).flatMap(nodes) }
        #expect(nodes(plan).allSatisfy { $0["estimatedRows"] != nil })
        #expect(nodes(plan).contains { $0["actualRows"] != nil })
        #expect(e.json["returned"]?.int64Value == 3)
        #expect(e.json["text"]?.stringValue?.contains("rank") == true)
        // A query on recordName needs an index development does not add: the advisor says so.
        let advice = await f.call(
            "cirrus/explain",
            #"{"query": {"recordType": "Place", "filterBy": [{"fieldName": "recordName", "comparator": "EQUALS", "fieldValue": {"value": "p1"}}]}}"#
        )
        let missing = (advice.json["indexes"]?.array ?? []).filter { $0["missing"] == .bool(true) }
        #expect(missing.count == 1, "\(advice.json.jsonText)")
        let bad = await f.call(
            "cirrus/explain",
            #"{"query": {"recordType": "Place", "filterBy": [{"fieldName": "rank", "comparator": "EQUALS", "fieldValue": {"value": "x"}}]}}"#
        )
        #expect(bad.status == 400)
        #expect(bad.json["reason"]?.stringValue?.hasPrefix("query.filterBy[0]:") == true)
    }

    @Test func theDashboardIsServedWithoutAnythingFromElsewhere() async throws {
        let app = HTTPServer.application(f.api, host: "127.0.0.1", port: 0)
        try await app.test(.live) { client in
            try await client.execute(uri: "/", method: .get) { response in
                #expect(response.status == .ok)
                let html = String(buffer: response.body)
                #expect(html.contains(#"data-container="iCloud.test.cirrus""#))
                #expect(!html.contains("http://") && !html.contains("https://"))
            }
            for file in ["dashboard.js", "api.js", "map.js", "world.js", "dashboard.css"] {
                try await client.execute(uri: "/dashboard/\(file)", method: .get) { response in
                    #expect(response.status == .ok, "\(file)")
                    #expect(!String(buffer: response.body).contains("https://"), "\(file)")
                }
            }
            try await client.execute(uri: "/dashboard/..%2FPackage.swift", method: .get) { response in
                #expect(response.status == .notFound)
            }
        }
    }
}

@Suite struct JSONBytesTests {
    /// records/query's answer written straight from its records is the same text as its JSON value.
    @Test func aRecordsPageWritesTheSameBytesAsItsJSON() {
        let zone = ZoneID(zoneName: "Trips \"quoted\"", ownerName: "_alice")
        let fields: RecordFields = [
            "name": .string("Café \"de\" Flore\n"), "visitors": .int64(-450_000), "rating": .double(4.25),
            "opened": .date(Timestamp(millisecondsSince1970: 1_700_000_000_123)), "blob": .bytes([0, 1, 254]),
            "where": .location(Location(latitude: 48.854, longitude: 2.3325)),
            "parent": .reference(Reference(recordID: RecordID(recordName: "paris", zoneID: zone))),
            "tags": .list([.string("a"), .string("b")]), "empty": .list([]), "Zeta": .int64(0), "é": .int64(1),
        ]
        let full = Record(
            recordType: "Place", recordID: RecordID(recordName: "flore", zoneID: zone), fields: fields,
            creationDate: Timestamp(millisecondsSince1970: 5), modificationDate: nil,
            creatorUserRecordID: RecordID(recordName: "_alice", zoneID: zone),
            lastModifiedUserRecordID: RecordID(recordName: "_bob"), recordChangeTag: "t1")
        let bare = Record(recordType: "Note", recordID: RecordID(recordName: "n"))
        let stampOnly = Record(
            recordType: "Note", recordID: RecordID(recordName: "m"),
            modificationDate: Timestamp(millisecondsSince1970: 9))
        for page in [
            RecordsPage(items: [], continuationMarker: nil),
            RecordsPage(items: [(full.recordID, .success(full))], continuationMarker: "c\u{1}"),
            RecordsPage(
                items: [(bare.recordID, .success(bare)), (stampOnly.recordID, .success(stampOnly))],
                continuationMarker: nil),
        ] {
            #expect(page.bytes == page.json.jsonBytes, "\(page.json.jsonText)")
            #expect(!page.hasAssets)
        }
        let withAsset = Record(
            recordType: "Photo", recordID: RecordID(recordName: "p"),
            fields: ["image": .asset(Asset(contentHash: "ab", size: 2))])
        #expect(RecordsPage(items: [(withAsset.recordID, .success(withAsset))]).hasAssets)
    }

    /// The server's byte writer gives exactly RecordModel's JSON text.
    @Test func theByteWriterAgreesWithJSONText() throws {
        let values: [JSONValue] = [
            .null, .bool(true), .integer(-42), .integer(0), .integer(7), .integer(1_000_000),
            .integer(Int64.max), .integer(Int64.min), .number(1.5), .number(1e300), .string(""),
            .string("quote \" backslash \\ newline \n tab \t cr \r bell \u{07} nul \u{0} é 💡 \u{1F}"),
            .array([.integer(1), .string("a"), .object([])]),
            .object([("k\"ey", .array([])), ("nested", .object([("x", .number(-0.25))]))]),
        ]
        for v in values {
            #expect(v.jsonBytes == Array(v.jsonText.utf8), "\(v.jsonText)")
        }
        let text = try #require(values.first { if case .string(let s) = $0 { !s.isEmpty } else { false } })
        let parsed = try JSONValue.parse(String(decoding: text.jsonBytes, as: UTF8.self))
        #expect(parsed == text)
    }
}

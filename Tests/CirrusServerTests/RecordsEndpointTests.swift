// records/modify, records/query, records/lookup, records/changes through WebServicesAPI.

import Cirrus
import CirrusServer
import Foundation
import RecordModel
import Testing

@Suite struct RecordsEndpointTests {
    let f: ServerFixture
    init() throws { f = try ServerFixture() }

    func seedPlaces(_ n: Int = 25) async {
        let ops = (0..<n).map { i in
            (
                "create",
                recordJSON(
                    "p\(i)",
                    #""kind": {"value": "\#(i % 2 == 0 ? "cafe" : "museum")"}, "rank": {"value": \#(i)}, "location": {"value": {"latitude": \#(48.0 + Double(i) * 0.01), "longitude": 2.0}}"#
                )
            )
        }
        let r = await f.call("records/modify", modifyBody(ops), as: "alice")
        #expect(r.status == 200)
        #expect(r.json.recordNames.count == n)
    }

    @Test func createQueryAndPageWithTheContinuationMarker() async throws {
        await seedPlaces()
        let query =
            #""query": {"recordType": "Place", "filterBy": [{"fieldName": "kind", "comparator": "EQUALS", "fieldValue": {"value": "cafe"}}], "sortBy": [{"fieldName": "rank", "ascending": false}]}"#
        var names: [String] = []
        var marker: String? = nil
        var pages = 0
        repeat {
            let body =
                "{\(query), \"resultsLimit\": 5" + (marker.map { #", "continuationMarker": "\#($0)""# } ?? "") + "}"
            let r = await f.call("records/query", body)
            #expect(r.status == 200, "\(r.json.jsonText)")
            names += r.json.recordNames
            marker = r.json["continuationMarker"]?.stringValue
            pages += 1
        } while marker != nil && pages < 10
        #expect(names == stride(from: 24, through: 0, by: -2).map { "p\($0)" })
        #expect(pages == 3)
    }

    @Test func desiredKeysProjectTheFields() async throws {
        await seedPlaces(3)
        let r = await f.call(
            "records/query", #"{"query": {"recordType": "Place"}, "desiredKeys": ["rank"], "resultsLimit": 1}"#)
        let fields = r.json["records"]?.array.first?["fields"]
        #expect(fields?["rank"] != nil)
        #expect(fields?["kind"] == nil)
    }

    @Test func nearUsesMetresAndSortByRelativeLocationIsNearestFirst() async throws {
        await seedPlaces(10)
        // p0 is at 48.00 N; each next place 0.01° (≈1.11 km) further north. 2.5 km reaches p0, p1, p2.
        let r = await f.call(
            "records/query",
            #"{"query": {"recordType": "Place", "filterBy": [{"fieldName": "location", "comparator": "NEAR", "fieldValue": {"value": {"latitude": 48.0, "longitude": 2.0}}, "distance": 2500}], "sortBy": [{"fieldName": "location", "relativeLocation": {"value": {"latitude": 48.0, "longitude": 2.0}}}]}}"#
        )
        #expect(r.status == 200, "\(r.json.jsonText)")
        #expect(r.json.recordNames == ["p0", "p1", "p2"])
    }

    @Test func jsonFiltersAndFormatStringsGiveTheSameRecords() async throws {
        await seedPlaces()
        let db = f.api.container(.development).publicDatabase(as: .anonymous)
        let cases: [(String, String, [PredicateArgument])] = [
            (
                #"[{"fieldName": "kind", "comparator": "EQUALS", "fieldValue": {"value": "museum"}}, {"fieldName": "rank", "comparator": "GREATER_THAN", "fieldValue": {"value": 10}}]"#,
                "kind == 'museum' AND rank > 10", []
            ),
            (
                #"[{"fieldName": "rank", "comparator": "IN", "fieldValue": {"value": [1, 4, 9, 16], "type": "INT64_LIST"}}]"#,
                "rank IN {1, 4, 9, 16}", []
            ),
            (
                #"[{"fieldName": "kind", "comparator": "BEGINS_WITH", "fieldValue": {"value": "mu"}}]"#,
                "kind BEGINSWITH 'mu'", []
            ),
            (
                #"[{"fieldName": "rank", "comparator": "LESS_THAN_OR_EQUALS", "fieldValue": {"value": 3}}, {"fieldName": "kind", "comparator": "NOT_EQUALS", "fieldValue": {"value": "cafe"}}]"#,
                "rank <= %@ AND kind != %@", [3, "cafe"]
            ),
        ]
        for (filters, format, args) in cases {
            let r = await f.call(
                "records/query",
                #"{"query": {"recordType": "Place", "filterBy": \#(filters), "sortBy": [{"fieldName": "rank"}]}, "resultsLimit": 200}"#
            )
            #expect(r.status == 200, "\(format): \(r.json.jsonText)")
            let direct = try await db.records(
                matching: RecordQuery(
                    recordType: "Place", predicate: format, arguments: args,
                    sortDescriptors: [.field("rank", ascending: true)]), resultsLimit: 200)
            let expected = direct.matchResults.map { $0.0.recordName }
            #expect(!expected.isEmpty, "\(format)")
            #expect(r.json.recordNames == expected, "\(format)")
        }
    }

    @Test func refusedFiltersNameThePathInsideTheBody() async throws {
        await seedPlaces(2)
        let cases: [(String, String)] = [
            (
                #"{"query": {"recordType": "Place", "filterBy": [{"fieldName": "kind", "comparator": "EQUALS", "fieldValue": {"value": "x"}}, {"fieldName": "kind", "comparator": "LESS_THAN", "fieldValue": {"value": 5}}]}}"#,
                "query.filterBy[1]: Field 'kind' is STRING but the value is INT64"
            ),
            (
                #"{"query": {"recordType": "Place", "filterBy": [{"fieldName": "kind", "comparator": "LIKE", "fieldValue": {"value": "x"}}]}}"#,
                #"query.filterBy[0]: "comparator": unknown comparator "LIKE""#
            ),
            (#"{"query": {"filterBy": []}}"#, "query.recordType: missing; expected a string"),
            (#"{"query": {"recordType": 5}}"#, "query.recordType: expected a string, found a number"),
            (
                #"{"query": {"recordType": "Place", "sortBy": [{"fieldName": "rank", "ascending": "yes"}]}}"#,
                #"query.sortBy[0]: "ascending" must be true or false"#
            ),
            (#"{"query": {"recordType": "Place"}, "resultsLimit": 201}"#, "resultsLimit: 201 is outside 0…200"),
            (#"{"query": {"recordType": "Place"}, "continuationMarker": "nonsense"}"#, "continuationMarker: "),
            (#"{"query": "#, "the body is not JSON"),
            ("[1]", "the body must be a JSON object"),
        ]
        for (body, reason) in cases {
            let r = await f.call("records/query", body)
            #expect(r.status == 400, "\(body)")
            #expect(r.json.errorCode == "BAD_REQUEST", "\(body)")
            let got = r.json["reason"]?.stringValue ?? ""
            #expect(got.hasPrefix(reason), "\(body): \(got)")
            #expect(r.json["uuid"]?.stringValue?.count == 36)
        }
    }

    @Test func everyOperationTypeDoesWhatCloudKitSays() async throws {
        let created = await f.call(
            "records/modify",
            modifyBody([("create", recordJSON("n", type: "Note", #""a": {"value": "1"}, "b": {"value": "2"}"#))]),
            as: "alice")
        let tag1 = try #require(created.json["records"]?.array.first?["recordChangeTag"]?.stringValue)

        // create again: EXISTS.
        let again = await f.call(
            "records/modify", modifyBody([("create", recordJSON("n", type: "Note", ""))]), as: "alice")
        #expect(again.json["records"]?.array.first?.errorCode == "EXISTS")

        // update: the tag is checked, fields not sent are kept.
        let updated = await f.call(
            "records/modify",
            modifyBody([("update", recordJSON("n", type: "Note", tag: tag1, #""a": {"value": "u"}"#))]),
            as: "alice")
        let u = try #require(updated.json["records"]?.array.first)
        #expect(u["fields"]?["a"]?["value"]?.stringValue == "u")
        #expect(u["fields"]?["b"]?["value"]?.stringValue == "2")
        let tag2 = try #require(u["recordChangeTag"]?.stringValue)
        #expect(tag2 != tag1)

        // update with the stale tag: CONFLICT carrying the server's record.
        let stale = await f.call(
            "records/modify",
            modifyBody([("update", recordJSON("n", type: "Note", tag: tag1, #""a": {"value": "x"}"#))]),
            as: "alice")
        let conflict = try #require(stale.json["records"]?.array.first)
        #expect(conflict.errorCode == "CONFLICT")
        #expect(conflict["serverRecord"]?["recordChangeTag"]?.stringValue == tag2)

        // update without a tag is refused before anything runs.
        let untagged = await f.call(
            "records/modify", modifyBody([("update", recordJSON("n", type: "Note", #""a": {"value": "x"}"#))]),
            as: "alice")
        #expect(untagged.status == 400)
        #expect(untagged.json["reason"]?.stringValue?.hasPrefix("operations[0].record.recordChangeTag:") == true)

        // replace: fields not sent are dropped.
        let replaced = await f.call(
            "records/modify",
            modifyBody([("replace", recordJSON("n", type: "Note", tag: tag2, #""a": {"value": "r"}"#))]),
            as: "alice")
        let r = try #require(replaced.json["records"]?.array.first)
        #expect(r["fields"]?["b"] == nil)
        #expect(r["fields"]?["a"]?["value"]?.stringValue == "r")

        // forceUpdate without a tag keeps other fields; forceReplace replaces.
        let fu = await f.call(
            "records/modify", modifyBody([("forceUpdate", recordJSON("n", type: "Note", #""b": {"value": "fb"}"#))]),
            as: "alice")
        #expect(fu.json["records"]?.array.first?["fields"]?["a"]?["value"]?.stringValue == "r")
        let fr = await f.call(
            "records/modify", modifyBody([("forceReplace", recordJSON("n", type: "Note", #""c": {"value": "fc"}"#))]),
            as: "alice")
        let frRecord = try #require(fr.json["records"]?.array.first)
        #expect(frRecord["fields"]?["a"] == nil)
        let tag3 = try #require(frRecord["recordChangeTag"]?.stringValue)

        // delete with a stale tag: CONFLICT; with the right one: deleted.
        let badDelete = await f.call(
            "records/modify",
            #"{"operations": [{"operationType": "delete", "record": {"recordName": "n", "recordChangeTag": "\#(tag1)"}}]}"#,
            as: "alice")
        #expect(badDelete.json["records"]?.array.first?.errorCode == "CONFLICT")
        let delete = await f.call(
            "records/modify",
            #"{"operations": [{"operationType": "delete", "record": {"recordName": "n", "recordChangeTag": "\#(tag3)"}}]}"#,
            as: "alice")
        #expect(delete.json["records"]?.array.first?["deleted"] == .bool(true))
        let gone = await f.call(
            "records/modify", #"{"operations": [{"operationType": "forceDelete", "record": {"recordName": "n"}}]}"#,
            as: "alice")
        #expect(gone.json["records"]?.array.first?.errorCode == "NOT_FOUND")
    }

    @Test func atomicBatchesInACustomZoneFailTogether() async throws {
        let zone = await f.call(
            "zones/modify", #"{"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": "Work"}}}]}"#,
            db: "private", as: "alice")
        #expect(zone.status == 200)
        let body = modifyBody(
            [
                ("create", recordJSON("a", type: "Note", zone: "Work", #""n": {"value": 1}"#)),
                ("create", recordJSON("b", type: "Note", zone: "Work", #""n": {"value": "not a number"}"#)),
            ], atomic: true)
        let r = await f.call("records/modify", body, db: "private", as: "alice")
        let codes = (r.json["records"]?.array ?? []).map { $0.errorCode }
        #expect(codes == ["ATOMIC_ERROR", "BAD_REQUEST"])
        let look = await f.call(
            "records/lookup", #"{"records": [{"recordName": "a", "zoneID": {"zoneName": "Work"}}]}"#, db: "private",
            as: "alice")
        #expect(look.json["records"]?.array.first?.errorCode == "NOT_FOUND")
    }

    @Test func lookupAnswersEachRecordInOrder() async throws {
        await seedPlaces(3)
        let r = await f.call(
            "records/lookup",
            #"{"records": [{"recordName": "p2"}, {"recordName": "nope"}, {"recordName": "p0"}], "desiredKeys": ["kind"]}"#
        )
        let items = r.json["records"]?.array ?? []
        #expect(items.count == 3)
        #expect(items[0]["recordName"]?.stringValue == "p2")
        #expect(items[0]["fields"]?["rank"] == nil)
        #expect(items[1].errorCode == "NOT_FOUND")
        #expect(items[1]["recordName"]?.stringValue == "nope")
        #expect(items[2]["recordName"]?.stringValue == "p0")
    }

    @Test func changesOfAZoneResumeFromTheSyncToken() async throws {
        _ = await f.call(
            "zones/modify", #"{"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": "Z"}}}]}"#,
            db: "private", as: "alice")
        _ = await f.call(
            "records/modify",
            modifyBody([
                ("create", recordJSON("x", type: "Note", zone: "Z", #""v": {"value": 1}"#)),
                ("create", recordJSON("y", type: "Note", zone: "Z", #""v": {"value": 2}"#)),
            ]), db: "private", as: "alice")
        let first = await f.call("records/changes", #"{"zoneID": {"zoneName": "Z"}}"#, db: "private", as: "alice")
        #expect(Set(first.json.recordNames) == ["x", "y"])
        let token = try #require(first.json["syncToken"]?.stringValue)
        _ = await f.call(
            "records/modify",
            #"{"operations": [{"operationType": "forceDelete", "record": {"recordName": "x", "zoneID": {"zoneName": "Z"}}}]}"#,
            db: "private", as: "alice")
        let next = await f.call(
            "records/changes", #"{"zoneID": {"zoneName": "Z"}, "syncToken": "\#(token)"}"#, db: "private", as: "alice")
        let items = next.json["records"]?.array ?? []
        #expect(items.count == 1)
        #expect(items.first?["recordName"]?.stringValue == "x")
        #expect(items.first?["deleted"] == .bool(true))
        let bad = await f.call(
            "records/changes", #"{"zoneID": {"zoneName": "Z"}, "syncToken": "%%"}"#, db: "private", as: "alice")
        #expect(bad.status == 400)
        #expect(bad.json["reason"]?.stringValue == "syncToken: not a sync token")
    }

    @Test func limitsAreCloudKits() async throws {
        let many = modifyBody((0..<201).map { ("create", recordJSON("r\($0)", type: "Note", "")) })
        let r = await f.call("records/modify", many, as: "alice")
        #expect(r.status == 400)
        #expect(r.json["reason"]?.stringValue == "operations: 201 elements; the limit is 200")
        // 1 MB of field data per record: the record fails in its place.
        let huge = await f.call(
            "records/modify",
            modifyBody(
                [
                    (
                        "create",
                        recordJSON(
                            "big", type: "Note", #""text": {"value": "\#(String(repeating: "x", count: 1_100_000))"}"#)
                    ),
                    ("create", recordJSON("small", type: "Note", #""text": {"value": "ok"}"#)),
                ], atomic: false), as: "alice")
        #expect(huge.status == 200)
        let items = huge.json["records"]?.array ?? []
        #expect(items.first?.errorCode == "BAD_REQUEST")
        #expect(
            items.first?["reason"]?.stringValue?.contains("the limit is 1048576 bytes") == true,
            "\(items.first?.jsonText ?? "")")
        #expect(items.last?["recordName"]?.stringValue == "small")
        // At most 200 records per response, whatever resultsLimit says (0: the server chooses).
        for batch in 0..<2 {
            let ops = (0..<150).map { ("create", recordJSON("m\(batch)-\($0)", type: "Many", #""v": {"value": 1}"#)) }
            _ = await f.call("records/modify", modifyBody(ops), as: "alice")
        }
        let page = await f.call("records/query", #"{"query": {"recordType": "Many"}, "resultsLimit": 0}"#)
        #expect(page.status == 200, "\(page.json.jsonText.prefix(300))")
        #expect(page.json.recordNames.count <= 200)
        #expect(page.json["continuationMarker"]?.stringValue != nil)
        let small = try ServerFixture(
            limits: {
                var l = ServerLimits(); l.maximumBodyBytes = 100; return l
            }())
        let big = await small.call(
            "records/query", #"{"query": {"recordType": "Place"}, "pad": "\#(String(repeating: "x", count: 200))"}"#)
        #expect(big.status == 413)
        #expect(big.json.errorCode == "QUOTA_EXCEEDED")
    }
}

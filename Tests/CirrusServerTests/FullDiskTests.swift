// `cirrus serve` on a full disk: writes get TRY_AGAIN_LATER (CKError serviceUnavailable) saying
// the disk is full and when to retry, reads go on, and writes work again once space is back —
// without a restart (docs/web-services.md, "Errors").

import Cirrus
import CirrusServer
import Foundation
import RecordLog
import RecordModel
import Testing

@Suite struct FullDiskTests {
    @Test func aFullDiskRefusesWritesWithTryAgainLaterAndWritesResumeWhenSpaceIsBack() async throws {
        let f = try ServerFixture(durability: .everyCommit)
        let first = await f.call(
            "records/modify", modifyBody([("create", recordJSON("a", #""n": {"value": 1}"#))]), as: "alice")
        #expect(first.status == 200, "\(first.json.jsonText)")

        f.fs.setCapacity(f.fs.usedBytes + 16)  // not room for one more frame
        let refused = await f.call(
            "records/modify", modifyBody([("create", recordJSON("b", #""n": {"value": 2}"#))]), as: "alice")
        // As every records/modify error: per record, in a 200 response.
        #expect(refused.status == 200, "\(refused.json.jsonText)")
        let error = refused.json["records"]?.array.first ?? .null
        #expect(error["serverErrorCode"]?.stringValue == "TRY_AGAIN_LATER", "\(refused.json.jsonText)")
        #expect((error["retryAfter"]?.doubleValue ?? 0) > 0)
        let reason = error["reason"]?.stringValue ?? ""
        #expect(reason.contains("disk is full") && reason.contains("No space left on device") && reason.contains("/c/"))

        // Reads go on.
        let lookup = await f.call("records/lookup", #"{"records": [{"recordName": "a"}, {"recordName": "b"}]}"#)
        #expect(lookup.status == 200)
        #expect(lookup.json["records"]?.array.first?["recordName"]?.stringValue == "a")
        #expect(lookup.json["records"]?.array.last?["serverErrorCode"]?.stringValue == "NOT_FOUND")
        let query = await f.call("records/query", #"{"query": {"recordType": "Place"}}"#)
        #expect(query.status == 200 && query.json.recordNames == ["a"])

        // Space is back: the same request succeeds on the same server.
        f.fs.setCapacity(nil)
        let retried = await f.call(
            "records/modify", modifyBody([("create", recordJSON("b", #""n": {"value": 2}"#))]), as: "alice")
        #expect(retried.status == 200, "\(retried.json.jsonText)")
        let both = await f.call("records/query", #"{"query": {"recordType": "Place"}}"#)
        #expect(both.json.recordNames.sorted() == ["a", "b"])
    }
}

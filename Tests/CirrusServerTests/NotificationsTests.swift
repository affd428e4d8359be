// Notifications of subscriptions: the kept backlog through WebServicesAPI, and Server-Sent Events
// over HTTP on an ephemeral loopback port (backlog, Last-Event-ID resume, live events).

import Cirrus
import CirrusServer
import Foundation
import Hummingbird
import HummingbirdTesting
import RecordModel
import Testing

@Suite struct NotificationsTests {
    let f: ServerFixture
    init() throws { f = try ServerFixture() }

    /// Alice subscribes to cafés in the public database (the schema comes from a first save).
    func subscribe() async {
        _ = await f.call(
            "records/modify", modifyBody([("create", recordJSON("p0", #""kind": {"value": "museum"}"#))]), as: "alice")
        let r = await f.call(
            "subscriptions/modify",
            #"{"operations": [{"operationType": "create", "subscription": \#(SubscriptionsAndAssetsTests.cafes)}]}"#,
            as: "alice")
        #expect(r.json["subscriptions"]?.array.first?["subscriptionID"]?.stringValue == "cafes")
    }

    func save(_ name: String, kind: String) async {
        let r = await f.call(
            "records/modify", modifyBody([("create", recordJSON(name, #""kind": {"value": "\#(kind)"}"#))]), as: "bob")
        #expect(r.status == 200)
    }

    /// The backlog after `last` as alice (or `user`), waiting up to 5 s for `count` events:
    /// notifications reach the server's feed asynchronously after the commit.
    func backlog(after last: Int? = nil, count: Int, as user: String = "alice") async throws -> JSONValue {
        var query = f.credentials(as: user)
        if let last { query["lastEventID"] = String(last) }
        var answer = JSONValue.null
        for _ in 0..<100 {
            answer = await f.api.handle(
                WebRequest(method: "POST", path: ServerFixture.path("notifications"), query: query)
            ).body
            if (answer["events"]?.array.count ?? 0) >= count { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        return answer
    }

    @Test func theBacklogHoldsMatchingChangesAndResumesAfterLastEventID() async throws {
        await subscribe()
        await save("c1", kind: "cafe")
        await save("m1", kind: "museum")
        await save("c2", kind: "cafe")
        let all = try await backlog(count: 2)
        let events = all["events"]?.array ?? []
        #expect(events.compactMap { $0["id"]?.int64Value } == [1, 2])
        #expect(events.compactMap { $0["notification"]?["recordName"]?.stringValue } == ["c1", "c2"])
        #expect(events.first?["notification"]?["reason"]?.stringValue == "create")
        #expect(events.first?["notification"]?["subscriptionID"]?.stringValue == "cafes")
        #expect(events.first?["notification"]?["record"] == nil)
        #expect(all["reset"] == .bool(false))

        let after1 = try await backlog(after: 1, count: 1)
        #expect((after1["events"]?.array ?? []).compactMap { $0["id"]?.int64Value } == [2])
        let future = try await backlog(after: 99, count: 2)
        #expect(future["reset"] == .bool(true))

        // Bob saved the records but subscribed to nothing: his feed is empty.
        let bob = try await backlog(count: 0, as: "bob")
        #expect(bob["events"]?.array.isEmpty == true)
        let bad = await f.api.handle(
            WebRequest(
                method: "POST", path: ServerFixture.path("notifications"), query: f.credentials(as: "alice"),
                headers: ["Last-Event-ID": "seven"]))
        #expect(bad.status == 400)
        #expect(bad.body["reason"]?.stringValue?.hasPrefix("Last-Event-ID: \"seven\" is not a number") == true)
    }

    @Test func serverSentEventsOverHTTP() async throws {
        await subscribe()
        await save("c1", kind: "cafe")
        _ = try await backlog(count: 1)
        let app = HTTPServer.application(f.api, host: "127.0.0.1", port: 0)
        let query = "ckAPIToken=\(f.apiToken)&ckWebAuthToken=\(f.alice)"
        let path = ServerFixture.path("notifications")
        let lastEventID = try #require(HTTPFields.Element.Name("Last-Event-ID"))
        try await app.test(.live) { client in
            // The backlog, then the stream ends after maxEvents.
            try await client.execute(uri: "\(path)?\(query)&maxEvents=1&timeout=10", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/event-stream; charset=utf-8")
                let text = String(buffer: response.body)
                #expect(text.hasPrefix("id: 1\nevent: notification\ndata: {\"subscriptionID\":\"cafes\""), "\(text)")
                #expect(text.hasSuffix("\n\n"))
            }
            // Resuming after event 1: a live event arrives while the stream is open.
            async let live = client.execute(
                uri: "\(path)?\(query)&maxEvents=1&timeout=10", method: .get, headers: [lastEventID: "1"])
            try await Task.sleep(for: .milliseconds(500))
            await save("c2", kind: "cafe")
            let response = try await live
            let text = String(buffer: response.body)
            #expect(text.hasPrefix("id: 2\nevent: notification\n"), "\(text)")
            #expect(text.contains("\"recordName\":\"c2\""))
            // A Last-Event-ID the server never issued: reset first; timeout ends the stream.
            try await client.execute(
                uri: "\(path)?\(query)&timeout=1", method: .get, headers: [lastEventID: "50"]
            ) { response in
                let text = String(buffer: response.body)
                #expect(text.hasPrefix("event: reset\n"), "\(text)")
                #expect(text.contains("id: 1\n"))
            }
            // Unauthenticated: an error object, not a stream.
            try await client.execute(uri: "\(path)?timeout=1", method: .get) { response in
                #expect(response.status == .unauthorized)
            }
        }
    }
}

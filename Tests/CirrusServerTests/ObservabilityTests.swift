// Logs and telemetry of `cirrus serve`: the request log (what it keeps and never keeps, filters,
// newest first, bounded), cirrus/telemetry's per-minute series, and GET /metrics parsed as the
// Prometheus text format and checked against the requests the test made.

import Cirrus
import Foundation
import Hummingbird
import HummingbirdTesting
import RecordModel
import Testing

@testable import CirrusServer

/// A strict reader of the Prometheus text exposition format (version 0.0.4): `# HELP` / `# TYPE`
/// comments, then `name{label="value",…} number` samples; anything else is an error.
struct PrometheusText {
    struct Sample: Hashable {
        var name: String
        var labels: [String: String]
        var value: Double
    }
    var types: [String: String] = [:]
    var samples: [Sample] = []

    struct Malformed: Error, CustomStringConvertible { var description: String }

    init(_ text: String) throws {
        for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: true).enumerated() {
            if line.hasPrefix("#") {
                let parts = line.split(separator: " ", maxSplits: 3)
                guard parts.count >= 3, parts[1] == "TYPE" || parts[1] == "HELP" else {
                    throw Malformed(description: "line \(n + 1): bad comment \(line)")
                }
                if parts[1] == "TYPE" {
                    guard parts.count == 4, ["counter", "gauge", "histogram", "summary", "untyped"].contains(parts[3])
                    else { throw Malformed(description: "line \(n + 1): bad TYPE \(line)") }
                    types[String(parts[2])] = String(parts[3])
                }
                continue
            }
            var rest = Substring(line)
            let nameEnd = rest.firstIndex { $0 == "{" || $0 == " " } ?? rest.endIndex
            let name = String(rest[..<nameEnd])
            guard name.range(of: #"^[a-zA-Z_:][a-zA-Z0-9_:]*$"#, options: .regularExpression) != nil else {
                throw Malformed(description: "line \(n + 1): bad name \(name)")
            }
            rest = rest[nameEnd...]
            var labels: [String: String] = [:]
            if rest.first == "{" {
                rest = rest.dropFirst()
                while rest.first != "}" {
                    guard let eq = rest.firstIndex(of: "="), rest[rest.index(after: eq)] == "\"" else {
                        throw Malformed(description: "line \(n + 1): bad label in \(line)")
                    }
                    let key = String(rest[..<eq])
                    var i = rest.index(eq, offsetBy: 2)
                    var value = ""
                    while i < rest.endIndex, rest[i] != "\"" {
                        if rest[i] == "\\" { i = rest.index(after: i) }
                        guard i < rest.endIndex else { break }
                        value.append(rest[i])
                        i = rest.index(after: i)
                    }
                    guard i < rest.endIndex else { throw Malformed(description: "line \(n + 1): unterminated") }
                    labels[key] = value
                    rest = rest[rest.index(after: i)...]
                    if rest.first == "," { rest = rest.dropFirst() }
                }
                rest = rest.dropFirst()
            }
            guard rest.first == " ", let value = Double(rest.dropFirst().split(separator: " ")[0]) else {
                throw Malformed(description: "line \(n + 1): bad value in \(line)")
            }
            samples.append(Sample(name: name, labels: labels, value: value))
        }
    }

    func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples.first { s in s.name == name && labels.allSatisfy { k, v in s.labels[k] == v } }?.value
    }
}

@Suite struct ObservabilityTests {
    let f: ServerFixture

    init() throws {
        var limits = ServerLimits()
        limits.requestLogCapacity = 50
        f = try ServerFixture(limits: limits)
    }

    func management(_ op: String, _ body: String = "{}", token: String? = nil) async -> (status: Int, json: JSONValue) {
        let r = await f.api.handle(
            WebRequest(
                method: "POST", path: ServerFixture.path(op), query: ["ckAPIToken": f.apiToken],
                headers: token.map { ["X-Cirrus-Management-Token": $0] } ?? [:], body: Array(body.utf8)))
        return (r.status, r.body)
    }

    /// Two creates, two queries (one refused), a lookup with an unknown name, an anonymous caller.
    func traffic() async {
        let created = await f.call(
            "records/modify",
            modifyBody([
                ("create", recordJSON("louvre", #""name": {"value": "Louvre secret"}, "rank": {"value": 1}"#)),
                ("create", recordJSON("orsay", #""name": {"value": "Orsay"}, "rank": {"value": 2}"#)),
            ]), as: "alice")
        #expect(created.status == 200)
        #expect(await f.call("records/query", #"{"query": {"recordType": "Place"}}"#).json.recordNames.count == 2)
        let bad = await f.call(
            "records/query",
            #"{"query": {"recordType": "Place", "filterBy": [{"fieldName": "name", "comparator": "LESS_THAN", "fieldValue": {"value": 3}}]}}"#
        )
        #expect(bad.status == 400)
        #expect(
            await f.call("records/lookup", #"{"records": [{"recordName": "louvre"}, {"recordName": "nope"}]}"#).status
                == 200)
        #expect(await f.call("users/caller").status == 421)
    }

    @Test func theRequestLogKeepsWhatHappenedAndNothingElse() async throws {
        defer { try? f.close() }
        await traffic()
        let r = await management("cirrus/logs", token: f.management)
        #expect(r.status == 200)
        let entries = r.json["entries"]?.array ?? []
        #expect(
            entries.compactMap { $0["operation"]?.stringValue }
                == ["users/caller", "records/lookup", "records/query", "records/query", "records/modify"])
        #expect(entries.compactMap { $0["id"]?.int64Value } == [5, 4, 3, 2, 1])
        #expect(entries.compactMap { $0["status"]?.int64Value } == [421, 200, 400, 200, 200])
        #expect(entries[0]["serverErrorCode"]?.stringValue == "AUTHENTICATION_REQUIRED")
        #expect(entries[2]["serverErrorCode"]?.stringValue == "BAD_REQUEST")
        #expect(entries[2]["recordType"]?.stringValue == "Place")  // from the query, though it failed
        #expect(
            entries[4]["recordType"]?.stringValue == "Place" && entries[4]["environment"]?.stringValue == "development")
        #expect(entries[4]["database"]?.stringValue == "public")
        for e in entries {
            #expect((e["requestBytes"]?.int64Value ?? -1) >= 0 && (e["responseBytes"]?.int64Value ?? 0) > 0)
            #expect(e["durationMs"] != nil && e["time"]?.int64Value == Int64(f.clock.timeIntervalSince1970 * 1000))
        }
        #expect(entries[4]["requestBytes"]?.int64Value ?? 0 > 100)
        // Never contents, tokens or users.
        let text = r.json.jsonText
        for secret in ["Louvre secret", "Orsay", f.apiToken, f.alice, f.management, "_alice"] {
            #expect(!text.contains(secret), "the log holds \(secret)")
        }
        // Filters; the log's own reads are not logged.
        let errors = await management("cirrus/logs", #"{"errorsOnly": true}"#, token: f.management)
        #expect(errors.json["entries"]?.array.compactMap { $0["status"]?.int64Value } == [421, 400])
        let queries = await management(
            "cirrus/logs", #"{"operation": "records/query", "limit": 1}"#, token: f.management)
        #expect(queries.json["entries"]?.array.count == 1 && queries.json["matched"]?.int64Value == 2)
        #expect(queries.json["entries"]?.array.first?["status"]?.int64Value == 400)
        let byType = await management("cirrus/logs", #"{"recordType": "Place", "status": 200}"#, token: f.management)
        #expect(byType.json["matched"]?.int64Value == 3)
        #expect(f.api.requestLog(matching: RequestLogFilter(database: "public")).count == 5)
        // Management token required; bad filters named.
        #expect(await management("cirrus/logs").status == 403)
        #expect(await management("cirrus/logs", token: f.apiToken).status == 401)
        let badLimit = await management("cirrus/logs", #"{"limit": 0}"#, token: f.management)
        #expect(badLimit.status == 400 && badLimit.json["reason"]?.stringValue?.hasPrefix("limit:") == true)
        #expect(f.api.requestLog().count == 5)
    }

    @Test func theLogIsBounded() async throws {
        defer { try? f.close() }
        for _ in 0..<60 { _ = await f.call("zones/list", db: "private", as: "bob") }
        let all = f.api.requestLog(limit: 1000)
        #expect(all.count == 50)
        #expect(all.first?.id == 60 && all.last?.id == 11)
    }

    @Test func telemetryCountsRequestsAndErrorsPerMinute() async throws {
        defer { try? f.close() }
        await traffic()
        let t = await management("cirrus/telemetry", token: f.management)
        #expect(t.status == 200)
        #expect(t.json["minutes"]?.array.count == 60)
        let ops = t.json["operations"]?.array ?? []
        #expect(ops.first?["operation"]?.stringValue == "*")
        func series(_ op: String, _ key: String) -> [JSONValue] {
            ops.first { $0["operation"]?.stringValue == op }?[key]?.array ?? []
        }
        #expect(series("*", "requests").last?.int64Value == 5)
        #expect(series("*", "errors").last?.int64Value == 2)
        #expect(series("records/query", "requests").last?.int64Value == 2)
        #expect(series("records/query", "errors").last?.int64Value == 1)
        #expect(series("records/query", "requests").dropLast().allSatisfy { $0.int64Value == 0 })
        let p50 = series("records/query", "p50").last
        let p99 = series("records/query", "p99").last
        #expect(p50 != .null && p50 != nil && p99 != nil && p99 != .null)
        #expect(series("records/query", "p50").first == .null)
        #expect(await management("cirrus/telemetry").status == 403)
    }

    @Test func metricsAreThePrometheusTextOfWhatHappened() async throws {
        defer { try? f.close() }
        await traffic()
        let m = try PrometheusText(f.api.metricsText())
        #expect(m.types["cirrus_requests_total"] == "counter")
        #expect(m.types["cirrus_request_duration_seconds"] == "histogram")
        let dev = ["environment": "development"]
        #expect(
            m.value(
                "cirrus_requests_total", ["operation": "records/modify", "status": "200"].merging(dev) { a, _ in a })
                == 1)
        #expect(m.value("cirrus_requests_total", ["operation": "records/query", "status": "200"]) == 1)
        #expect(m.value("cirrus_requests_total", ["operation": "records/query", "status": "400"]) == 1)
        #expect(m.value("cirrus_request_errors_total", ["operation": "records/query", "code": "BAD_REQUEST"]) == 1)
        #expect(
            m.value("cirrus_request_errors_total", ["operation": "users/caller", "code": "AUTHENTICATION_REQUIRED"])
                == 1)
        #expect(m.value("cirrus_records_written_total", dev) == 2)
        #expect(m.value("cirrus_records_read_total", dev) == 3)  // 2 by the query, 1 by the lookup
        #expect(m.value("cirrus_request_duration_seconds_count", ["operation": "records/query"]) == 2)
        let buckets = m.samples.filter {
            $0.name == "cirrus_request_duration_seconds_bucket" && $0.labels["operation"] == "records/query"
        }
        #expect(buckets.count > 5)
        #expect(zip(buckets, buckets.dropFirst()).allSatisfy { $0.value <= $1.value })
        #expect(buckets.first { $0.labels["le"] == "+Inf" }?.value == 2)
        #expect(m.value("cirrus_requests_in_flight") == 0)
        #expect(m.value("cirrus_open_connections") == 0)  // no HTTP server yet: api.handle was called directly
        #expect(m.value("cirrus_store_live_records", dev) == 2)
        #expect(m.value("cirrus_store_live_records", ["environment": "production"]) == 0)
        #expect(m.value("cirrus_request_log_entries") == 5)
        // Over HTTP: GET /metrics, the text format's content type.
        let app = HTTPServer.application(f.api, host: "127.0.0.1", port: 0)
        try await app.test(.live) { client in
            try await client.execute(uri: "/metrics", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
                let parsed = try PrometheusText(String(buffer: response.body))
                #expect(parsed.value("cirrus_records_written_total", dev) == 2)
                #expect(parsed.value("cirrus_open_connections") ?? 0 >= 1)  // this request's own
            }
        }
        // The server stopped: its connections are closed and no longer counted.
        #expect(try PrometheusText(f.api.metricsText()).value("cirrus_open_connections") == 0)
    }
}

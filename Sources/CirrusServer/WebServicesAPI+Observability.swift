// Logs and telemetry of `cirrus serve`: every answered request goes to the request log (its
// operation, environment, database, record type, status, error code, duration and bytes — never
// contents or tokens), the per-minute telemetry and the Prometheus metrics (ServerMetrics.swift).
//
//   POST …/cirrus/logs       {"operation"?, "environment"?, "database"?, "recordType"?, "status"?,
//                             "errorsOnly"?, "since"? (ms since 1970), "limit"? (1…1000, default 100)}
//                            → {"entries": [newest first], "matched", "capacity"}
//   POST …/cirrus/telemetry  → {"now", "minutes": [60 minute starts, ms], "operations": [{"operation"
//                             ("*": all), "requests": [60], "errors": [60], "p50"/"p95"/"p99": [60 ms or null]}]}
//   GET  /metrics            the Prometheus text format (HTTPServer.swift)
//
// Both operations need a management token in the X-Cirrus-Management-Token header, as promotion
// does: the log tells who uses which record types when. They are not themselves logged (the
// dashboard polls them), but are counted in the metrics.

import Cirrus
import Foundation
import RecordModel

extension WebServicesAPI {
    static let logsOperation = "cirrus/logs"
    static let telemetryOperation = "cirrus/telemetry"
    /// Operations answered outside `perform` that the log names as they are.
    static let otherOperations: Set<String> = [assetPutOperation, assetDownloadOperation, notificationsOperation]
    /// Operations whose answers' records count as read.
    static let readingOperations: Set<String> = ["records/query", "records/lookup", "records/changes"]

    /// The newest entries of the request log that match `filter` (at most `limit`), newest first.
    ///
    /// ```swift
    /// let failures = api.requestLog(matching: RequestLogFilter(errorsOnly: true), limit: 20)
    /// ```
    public func requestLog(
        matching filter: RequestLogFilter = RequestLogFilter(), limit: Int = 100
    )
        -> [RequestLogEntry]
    {
        requestLog.entries(matching: filter, limit: max(0, limit)).entries
    }

    /// The server's metrics in the Prometheus text format (what `GET /metrics` answers).
    public func metricsText() -> String {
        metrics.render(containers: containers.all, logEntries: requestLog.count)
    }

    /// Logs and counts one answered request (its body encoded now, once, to count its bytes).
    func observe(_ request: WebRequest, _ response: inout WebResponse, elapsed: Duration) {
        let route = try? Route(path: request.path, container: containerIdentifier)
        let operation: String
        if let route, Self.operations.contains(route.operation) || Self.otherOperations.contains(route.operation) {
            operation = route.operation
        } else {
            operation = "unknown"
        }
        let environment = route?.environment.rawValue
        let responseBytes = response.encodeOnce()
        let failed = response.status >= 400
        let code = failed ? response.body["serverErrorCode"]?.stringValue : nil
        var succeeded = 0
        var types = Set<String>()
        if let page = response.recordsPage {
            for (_, result) in page.items {
                guard case .success(let r) = result else { continue }
                succeeded += 1
                types.insert(r.recordType)
            }
        } else if response.bytes == nil, !failed, case .array(let items)? = response.body["records"] {
            for item in items where item["serverErrorCode"] == nil {
                succeeded += 1
                if let t = item["recordType"]?.stringValue { types.insert(t) }
            }
        }
        if types.isEmpty, ["records/query", "cirrus/explain", "cirrus/check"].contains(operation),
            let json = try? JSONValue.parse(String(decoding: request.body, as: UTF8.self)),
            let t = (json["query"]?["recordType"] ?? json["recordType"])?.stringValue
        {
            types.insert(t)
        }
        let (seconds, attoseconds) = elapsed.components
        let nanoseconds = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
        metrics.observe(
            operation: operation, environment: environment ?? "none", status: response.status, code: code,
            nanoseconds: nanoseconds, recordsRead: Self.readingOperations.contains(operation) ? succeeded : 0,
            recordsWritten: operation == "records/modify" ? succeeded : 0)
        if operation == Self.logsOperation || operation == Self.telemetryOperation { return }
        let sortedTypes = types.sorted { compareUTF8($0, $1) < 0 }
        requestLog.append(
            RequestLogEntry(
                id: 0, time: now(), operation: operation, environment: environment, database: route?.database,
                recordType: sortedTypes.isEmpty ? nil : sortedTypes.prefix(3).joined(separator: ","),
                status: response.status, serverErrorCode: code,
                durationMicroseconds: Int(nanoseconds / 1000), requestBytes: request.body.count,
                responseBytes: responseBytes))
    }

    /// `cirrus/logs`.
    func logs(_ request: WebRequest, _ body: JSONBody) throws(WebServicesError) -> JSONValue {
        try requireManagementToken(request, for: "reading the request log")
        var filter = RequestLogFilter()
        filter.operation = try body["operation"].optionalString()
        filter.environment = try body["environment"].optionalString()
        filter.database = try body["database"].optionalString()
        filter.recordType = try body["recordType"].optionalString()
        filter.status = try body["status"].optionalInt(in: 100...599).map(Int.init)
        filter.errorsOnly = try body["errorsOnly"].bool(default: false)
        filter.since = try body["since"].optionalInt(in: 0...Int64(1) << 50).map {
            Date(timeIntervalSince1970: Double($0) / 1000)
        }
        let limit = Int(try body["limit"].optionalInt(in: 1...1000) ?? 100)
        let (entries, matched) = requestLog.entries(matching: filter, limit: limit)
        return .object([
            ("entries", .array(entries.map(Self.entryJSON))), ("matched", .integer(Int64(matched))),
            ("capacity", .integer(Int64(requestLog.capacity))),
        ])
    }

    static func entryJSON(_ e: RequestLogEntry) -> JSONValue {
        var m: [(String, JSONValue)] = [
            ("id", .integer(Int64(e.id))), ("time", .integer(Int64((e.time.timeIntervalSince1970 * 1000).rounded()))),
            ("operation", .string(e.operation)),
        ]
        if let v = e.environment { m.append(("environment", .string(v))) }
        if let v = e.database { m.append(("database", .string(v))) }
        if let v = e.recordType { m.append(("recordType", .string(v))) }
        m.append(("status", .integer(Int64(e.status))))
        if let v = e.serverErrorCode { m.append(("serverErrorCode", .string(v))) }
        m += [
            ("durationMs", .number(Double(e.durationMicroseconds) / 1000)),
            ("requestBytes", .integer(Int64(e.requestBytes))), ("responseBytes", .integer(Int64(e.responseBytes))),
        ]
        return .object(m)
    }

    /// `cirrus/telemetry`.
    func telemetry(_ request: WebRequest) throws(WebServicesError) -> JSONValue {
        try requireManagementToken(request, for: "reading the telemetry")
        let at = now()
        let series = requestLog.telemetry(now: at)
        let ops = series.keys.sorted { a, b in a == "*" ? b != "*" : (b == "*" ? false : compareUTF8(a, b) < 0) }
        let minutes = series["*"]?.map { JSONValue.integer(Int64($0.minute) * 60_000) } ?? []
        func quantiles(_ list: [(minute: Int, stats: RequestLog.MinuteStats)], _ q: Double) -> JSONValue {
            .array(list.map { $0.stats.quantile(q).map { .number(($0 * 1000).rounded() / 1000) } ?? .null })
        }
        return .object([
            ("now", .integer(Int64((at.timeIntervalSince1970 * 1000).rounded()))), ("minutes", .array(minutes)),
            (
                "operations",
                .array(
                    ops.map { op in
                        let list = series[op] ?? []
                        return .object([
                            ("operation", .string(op)),
                            ("requests", .array(list.map { .integer(Int64($0.stats.requests)) })),
                            ("errors", .array(list.map { .integer(Int64($0.stats.errors)) })),
                            ("p50", quantiles(list, 0.5)), ("p95", quantiles(list, 0.95)),
                            ("p99", quantiles(list, 0.99)),
                        ])
                    })
            ),
        ])
    }
}

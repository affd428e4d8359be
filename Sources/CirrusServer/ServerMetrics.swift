// ServerMetrics: `cirrus serve`'s figures through swift-metrics, exported in the Prometheus text
// format by swift-prometheus at `GET /metrics`. A registry of the server's own (no global
// bootstrap: two servers in one process keep apart), handed to swift-metrics as the factory of
// every counter, timer and gauge.
//
//   cirrus_requests_total{operation, environment, status}     counter
//   cirrus_request_errors_total{operation, code}              counter (code: CloudKit's serverErrorCode)
//   cirrus_request_duration_seconds{operation}                histogram
//   cirrus_records_read_total{environment}                    counter (records returned by query,
//                                                             lookup and changes)
//   cirrus_records_written_total{environment}                 counter (records saved or deleted)
//   cirrus_requests_in_flight                                  gauge
//   cirrus_open_connections                                    gauge (HTTP connections, HTTPServer.swift)
//   cirrus_notification_streams_open                           gauge (Server-Sent Events connections)
//   cirrus_request_log_entries                                 gauge
//   cirrus_store_log_segments, _log_bytes, _live_records, _zones, _delta_records,
//   cirrus_store_commits{environment}                          gauges, read from each store at scrape time
//
// Label values are bounded: an operation the server does not know is `unknown`, record types are
// never labels (they are in the request log).

import Cirrus
import CoreMetrics
import Foundation
import Prometheus

final class ServerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    let factory: PrometheusMetricsFactory
    let inFlight: Meter
    let streamsOpen: Meter
    let connectionsOpen: Meter

    init() {
        var f = PrometheusMetricsFactory(registry: registry)
        f.defaultDurationHistogramBuckets = [
            .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
            .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
            .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10),
        ]
        factory = f
        inFlight = Meter(label: "cirrus_requests_in_flight", factory: f)
        streamsOpen = Meter(label: "cirrus_notification_streams_open", factory: f)
        connectionsOpen = Meter(label: "cirrus_open_connections", factory: f)
    }

    /// Counts one answered request.
    func observe(
        operation: String, environment: String, status: Int, code: String?, nanoseconds: Int64, recordsRead: Int,
        recordsWritten: Int
    ) {
        Counter(
            label: "cirrus_requests_total",
            dimensions: [("operation", operation), ("environment", environment), ("status", String(status))],
            factory: factory
        ).increment()
        if let code {
            Counter(
                label: "cirrus_request_errors_total", dimensions: [("operation", operation), ("code", code)],
                factory: factory
            ).increment()
        }
        Timer(label: "cirrus_request_duration_seconds", dimensions: [("operation", operation)], factory: factory)
            .recordNanoseconds(max(0, nanoseconds))
        if recordsRead > 0 {
            Counter(label: "cirrus_records_read_total", dimensions: [("environment", environment)], factory: factory)
                .increment(by: recordsRead)
        }
        if recordsWritten > 0 {
            Counter(label: "cirrus_records_written_total", dimensions: [("environment", environment)], factory: factory)
                .increment(by: recordsWritten)
        }
    }

    /// The Prometheus text of every metric, with the store gauges and the log size read now.
    func render(containers: [Container], logEntries: Int) -> String {
        Gauge(label: "cirrus_request_log_entries", factory: factory).record(logEntries)
        for c in containers {
            let s = c.statistics()
            let env = [("environment", c.environment.rawValue)]
            let figures: [(String, Int)] = [
                ("cirrus_store_log_segments", s.logSegments), ("cirrus_store_log_bytes", s.logBytes),
                ("cirrus_store_live_records", s.liveRecords), ("cirrus_store_zones", s.zones),
                ("cirrus_store_delta_records", s.deltaRecords), ("cirrus_store_commits", s.commits),
                ("cirrus_store_table_layers", s.tableLayers), ("cirrus_store_read_merges", s.readMerges),
            ]
            for (name, value) in figures { Gauge(label: name, dimensions: env, factory: factory).record(value) }
        }
        return registry.emitToString()
    }
}

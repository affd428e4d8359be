// RequestLog: what `cirrus serve` keeps of each request it answered — time, operation,
// environment, database, record type, HTTP status, server error code, duration and bytes in and
// out. Never a record's contents, a field value, a token or a user: nothing here can leak data
// or let someone act as a caller. Bounded: the newest `capacity` entries (a ring); older ones
// are dropped. Queried newest first with filters (the dashboard's Logs pane, `cirrus/logs`).
//
// Telemetry: per operation and per minute over the last hour, the request and error counts and
// a latency histogram of log-spaced buckets (each 25 % wider than the one before, 50 µs to
// about 10 minutes), from which p50/p95/p99 are estimated (a bucket's upper bound: at most 25 %
// high). Bounded: 60 minutes × the operations the server knows.

import Foundation
import RecordModel

/// One answered request, as the request log keeps it.
public struct RequestLogEntry: Sendable, Hashable {
    /// Increasing from 1 with every request logged since the server started.
    public var id: Int
    /// When the request was answered.
    public var time: Date
    /// The operation (`records/query`, …); `unknown` for a path that names none.
    public var operation: String
    /// `development` or `production`; nil when the path named neither.
    public var environment: String?
    /// `public` or `private`; nil when the path named neither.
    public var database: String?
    /// The record type the request was about (the query's, or the records' of a modify or
    /// lookup, comma-separated, at most three); nil when none.
    public var recordType: String?
    /// The HTTP status.
    public var status: Int
    /// The CloudKit error code of a failed request (`BAD_REQUEST`, …); nil when it succeeded.
    public var serverErrorCode: String?
    /// How long the server took, in microseconds.
    public var durationMicroseconds: Int
    /// Bytes of the request body.
    public var requestBytes: Int
    /// Bytes of the response body.
    public var responseBytes: Int
}

/// Which entries a query of the request log wants; nil members match anything.
public struct RequestLogFilter: Sendable, Hashable {
    /// Only this operation.
    public var operation: String?
    /// Only this environment.
    public var environment: String?
    /// Only this database.
    public var database: String?
    /// Only requests about this record type (one of an entry's types).
    public var recordType: String?
    /// Only this HTTP status.
    public var status: Int?
    /// Only failed requests (status 400 or more).
    public var errorsOnly = false
    /// Only entries answered at or after this time.
    public var since: Date?

    /// A filter; by default everything matches.
    public init(
        operation: String? = nil, environment: String? = nil, database: String? = nil, recordType: String? = nil,
        status: Int? = nil, errorsOnly: Bool = false, since: Date? = nil
    ) {
        self.operation = operation
        self.environment = environment
        self.database = database
        self.recordType = recordType
        self.status = status
        self.errorsOnly = errorsOnly
        self.since = since
    }

    func matches(_ e: RequestLogEntry) -> Bool {
        if let operation, e.operation != operation { return false }
        if let environment, e.environment != environment { return false }
        if let database, e.database != database { return false }
        if let recordType, !(e.recordType ?? "").split(separator: ",").contains(Substring(recordType)) { return false }
        if let status, e.status != status { return false }
        if errorsOnly && e.status < 400 { return false }
        if let since, e.time < since { return false }
        return true
    }
}

/// The request log and the per-minute telemetry of a server. Thread-safe.
final class RequestLog: @unchecked Sendable {
    let capacity: Int
    private let lock = NSLock()
    // Guarded by lock:
    private var ring: [RequestLogEntry] = []
    private var next = 0  // where the next entry goes once the ring is full
    private var lastID = 0
    private var minutes: [Int: [String: MinuteStats]] = [:]  // minute since 1970 → operation → stats

    init(capacity: Int) { self.capacity = max(1, capacity) }

    /// Per operation and minute: counts and a latency histogram.
    struct MinuteStats: Sendable, Hashable {
        var requests = 0
        var errors = 0
        var buckets = [Int](repeating: 0, count: RequestLog.bucketCount)

        mutating func add(_ other: MinuteStats) {
            requests += other.requests
            errors += other.errors
            for i in buckets.indices { buckets[i] += other.buckets[i] }
        }

        /// The estimated `q` quantile of the durations, in milliseconds (a bucket's upper bound).
        func quantile(_ q: Double) -> Double? {
            let n = buckets.reduce(0, +)
            guard n > 0 else { return nil }
            let rank = max(1, Int((q * Double(n)).rounded(.up)))
            var seen = 0
            for (i, c) in buckets.enumerated() {
                seen += c
                if seen >= rank { return RequestLog.bucketUpperBound(i) / 1000 }
            }
            return RequestLog.bucketUpperBound(buckets.count - 1) / 1000
        }
    }

    static let bucketCount = 60
    /// The upper bound of latency bucket `i` in microseconds: 50 µs × 1.25^i.
    static func bucketUpperBound(_ i: Int) -> Double { 50 * pow(1.25, Double(i)) }
    static func bucket(microseconds: Int) -> Int {
        guard microseconds > 50 else { return 0 }
        return min(bucketCount - 1, Int((log(Double(microseconds) / 50) / log(1.25)).rounded(.up)))
    }

    /// Logs a request (assigning its id) and counts it in its minute.
    func append(_ entry: RequestLogEntry) {
        lock.lock()
        defer { lock.unlock() }
        lastID += 1
        var e = entry
        e.id = lastID
        if ring.count < capacity {
            ring.append(e)
        } else {
            ring[next] = e
            next = (next + 1) % capacity
        }
        let minute = Int(e.time.timeIntervalSince1970 / 60)
        var stats = minutes[minute]?[e.operation] ?? MinuteStats()
        stats.requests += 1
        if e.status >= 400 { stats.errors += 1 }
        stats.buckets[Self.bucket(microseconds: e.durationMicroseconds)] += 1
        minutes[minute, default: [:]][e.operation] = stats
        // Keep the last hour (and a minute of slack for clocks that step back).
        if minutes.count > 62 {
            for m in minutes.keys where m < minute - 61 { minutes[m] = nil }
        }
    }

    /// Entries matching `filter`, newest first, at most `limit`; and how many matched in all.
    func entries(matching filter: RequestLogFilter, limit: Int) -> (entries: [RequestLogEntry], matched: Int) {
        lock.lock()
        let ordered = ring.count < capacity ? ring : Array(ring[next...] + ring[..<next])
        lock.unlock()
        var out: [RequestLogEntry] = []
        var matched = 0
        for e in ordered.reversed() where filter.matches(e) {
            matched += 1
            if out.count < limit { out.append(e) }
        }
        return (out, matched)
    }

    /// How many entries the log holds.
    var count: Int { lock.withLock { ring.count } }

    /// The last 60 minutes up to `now` (oldest first), per operation (`*`: all together):
    /// each minute's start, requests, errors and p50/p95/p99 in milliseconds (nil without requests).
    func telemetry(now: Date) -> [String: [(minute: Int, stats: MinuteStats)]] {
        let current = Int(now.timeIntervalSince1970 / 60)
        let window = (current - 59)...current
        let copy = lock.withLock { minutes.filter { window.contains($0.key) } }
        var ops = Set<String>()
        for byOp in copy.values { ops.formUnion(byOp.keys) }
        var out: [String: [(minute: Int, stats: MinuteStats)]] = [:]
        for op in ops.union(["*"]) {
            out[op] = window.map { m in
                if op == "*" {
                    var all = MinuteStats()
                    for s in copy[m]?.values.map({ $0 }) ?? [] { all.add(s) }
                    return (m, all)
                }
                return (m, copy[m]?[op] ?? MinuteStats())
            }
        }
        return out
    }
}

// Subscriptions and their notifications on PostgreSQL: the two tables, the statements on them,
// and what a request does before its commit. The rules (a predicate checked into a matcher,
// whether a change fires and with which reason) are Cirrus's `SubscriptionRules`, the same code
// as the embedded engine's; access checks are the façade's (PostgresDatabase+Subscriptions.swift);
// streams and LISTEN are PostgresNotifier.swift.
//
// Tables (in the container's namespace; created at open by `prepareSubscriptions()`):
//
//     cirrus_subscriptions (tenant, id, subscriber, kind, record_type, predicate, arguments,
//                           fires_on, zone_name)           PRIMARY KEY (tenant, id)
//       kind 'query': record_type, predicate (the format text), arguments (the JSON array of
//       subscriptions.json: [{"key": …} | {"value": <Web Services value>}]), fires_on
//       (Subscription.FiresOn's bits: 1 creation, 2 update, 4 deletion, 8 once);
//       kind 'zone': zone_name. The subscriber is the user record name of who saved it.
//
//     cirrus_notifications (tenant, seq, position, subscription_id, subscriber, record_type,
//                           zone_name, record_name, reason, record, at)
//                                                           PRIMARY KEY (tenant, seq, position)
//       the outbox: one row per notification a committed request fired. seq is the tenant's
//       request sequence (cirrus_tenants; a request holds the counter row to its commit, so a
//       tenant's seqs commit in order), position numbers the request's notifications in the
//       order the embedded engine sends them (items in request order, for each the firing
//       subscriptions by id). reason: 1 created, 2 updated, 3 deleted. record: RecordRow bytes
//       of the record after the change, or before it for a deletion (the notification then
//       carries no record; the bytes decide who may read it). at: the transaction's now().
//
// Never change the meaning of these columns or codes: another process's rows are read with them.
//
// Before a request commits (`fireSubscriptions`, run by modify's after-writes hook and by a
// zone deletion), the tenant's subscriptions of the types and zones it touched are read in its
// transaction, checked, and every notification they fire is inserted; fired `once`
// subscriptions are deleted; `pg_notify(channel, tenant key)` wakes the listeners at commit (in
// commit order; a rolled-back request inserts and sends nothing). Retention: every 32nd sequence
// of a tenant deletes its outbox rows older than ten minutes, so the outbox holds roughly ten
// minutes of notifications of each tenant that still writes.

import CirrusFacade
import Foundation
import Logging
import NIOCore
import PostgresNIO
import RecordModel

/// Where a notification stream is in a tenant's outbox: after `seq`'s row `position`.
struct OutboxPosition: Sendable, Hashable, Comparable {
    var seq: Int64
    var position: Int32

    static func < (a: Self, b: Self) -> Bool { (a.seq, a.position) < (b.seq, b.position) }

    /// After every row of sequences up to `seq`.
    static func after(_ seq: Int64) -> Self { Self(seq: seq, position: .max) }
}

/// The outcome of saving a subscription.
enum PostgresSubscriptionSave: Sendable {
    case saved
    /// Its custom zone does not exist.
    case zoneNotFound
    /// The id is another subscriber's.
    case taken
}

extension PostgresStore {
    /// How long outbox rows are kept (see the file header).
    static let outboxRetentionSeconds = 600
    /// A tenant's outbox is pruned at every sequence divisible by this.
    static let outboxPruneEvery: Int64 = 32
    /// Rows a stream reads at a time.
    static let outboxPage = 256

    /// The LISTEN channel of a container's namespace: `cirrus_` and 16 hex digits of the
    /// namespace's FNV-1a hash (a channel is an identifier: at most 63 bytes, and postgres-nio
    /// double-quotes it).
    static func channel(_ namespace: String) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in namespace.utf8 {
            h ^= UInt64(b)
            h = h &* 0x0100_0000_01b3
        }
        let hex = String(h, radix: 16)
        return "cirrus_" + String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// Creates `cirrus_subscriptions` and `cirrus_notifications` when missing, under the
    /// namespace's DDL lock.
    func prepareSubscriptions() async throws(CirrusError) {
        let namespace = tenant.namespace
        let logger = self.logger
        let subs = SQLName.qualified(namespace, "cirrus_subscriptions")
        let outbox = SQLName.qualified(namespace, "cirrus_notifications")
        let citus = self.citus && layout == .singleNode
        try await run("preparing the subscriptions of \(namespace)") { client in
            try await client.withTransaction(logger: logger) { conn in
                var lock = PostgresBindings()
                lock.append(namespace)
                for try await _ in try await conn.query(
                    PostgresQuery(unsafeSQL: "SELECT pg_advisory_xact_lock(hashtext($1))", binds: lock), logger: logger)
                {}
                let existed = try await Self.tableExists(conn, namespace, "cirrus_subscriptions", logger)
                for (sql, binds) in [
                    ("CREATE SCHEMA IF NOT EXISTS \(SQLName.quote(namespace))", PostgresBindings()),
                    (
                        "CREATE TABLE IF NOT EXISTS \(subs) (tenant text NOT NULL, id text COLLATE \"C\" NOT NULL, "
                            + "subscriber text COLLATE \"C\" NOT NULL, kind text NOT NULL, record_type text, "
                            + "predicate text, arguments text, fires_on smallint, zone_name text COLLATE \"C\", "
                            + "PRIMARY KEY (tenant, id))", PostgresBindings()
                    ),
                    (
                        "CREATE TABLE IF NOT EXISTS \(outbox) (tenant text NOT NULL, seq bigint NOT NULL, "
                            + "position integer NOT NULL, subscription_id text NOT NULL, "
                            + "subscriber text COLLATE \"C\" NOT NULL, record_type text NOT NULL, "
                            + "zone_name text COLLATE \"C\" NOT NULL, record_name text COLLATE \"C\" NOT NULL, "
                            + "reason smallint NOT NULL, record bytea NOT NULL, at timestamptz NOT NULL DEFAULT now(), "
                            + "PRIMARY KEY (tenant, seq, position))", PostgresBindings()
                    ),
                    (
                        "CREATE INDEX IF NOT EXISTS cirrus_notifications_subscriber ON \(outbox) "
                            + "(tenant, subscriber, seq, position)", PostgresBindings()
                    ),
                ] {
                    for try await _ in try await conn.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
                    {}
                }
                // Under Citus both are distributed with the other tenant tables (a write fires
                // and records its tenant's notifications in its own transaction).
                if citus && !existed {
                    for table in [subs, outbox] {
                        var t = PostgresBindings()
                        t.append(table)
                        t.append(SQLName.qualified(namespace, "cirrus_tenants"))
                        for try await _ in try await conn.query(
                            PostgresQuery(
                                unsafeSQL:
                                    "SELECT create_distributed_table($1::regclass, 'tenant', colocate_with => $2)",
                                binds: t), logger: logger)
                        {}
                    }
                }
            }
        }
    }

    /// Saves (or replaces) `s` — checked already — for `subscriber`: `.taken` when another
    /// subscriber has the id, `.zoneNotFound` when its custom zone does not exist (the zone's
    /// row is locked FOR SHARE, so a deletion of the zone waits for this save and then drops it).
    func saveSubscription(
        _ s: Subscription, subscriber: String
    ) async throws(CirrusError)
        -> PostgresSubscriptionSave
    {
        let namespace = tenant.namespace
        let key = tenant.key
        let logger = self.logger
        return try await run("saving subscription \(s.id) of \(key)") { client in
            try await client.withTransaction(logger: logger) { conn -> PostgresSubscriptionSave in
                var b = SQLBuilder()
                let t = b.param(key)
                let values: String
                switch s.kind {
                case .zone(let z):
                    if !z.isDefaultZone {
                        var c = SQLBuilder()
                        var found = false
                        for try await _ in try await conn.query(
                            PostgresQuery(
                                unsafeSQL:
                                    "SELECT 1 FROM \(SQLName.qualified(namespace, "cirrus_zones")) WHERE tenant = "
                                    + "\(c.param(key)) AND zone_name = \(c.param(z.zoneName)) FOR SHARE", binds: c.binds
                            ),
                            logger: logger)
                        { found = true }
                        if !found { return .zoneNotFound }
                    }
                    values =
                        "\(b.param(s.id)), \(b.param(subscriber)), 'zone', NULL, NULL, NULL, NULL, \(b.param(z.zoneName))"
                case .query(let type, let predicate, let args, let firesOn):
                    values =
                        "\(b.param(s.id)), \(b.param(subscriber)), 'query', \(b.param(type)), \(b.param(predicate)), "
                        + "\(b.param(SubscriptionRules.argumentsJSON(args).jsonText)), "
                        + "\(b.param(String(firesOn.rawValue)))::smallint, NULL"
                }
                var saved = false
                for try await _ in try await conn.query(
                    PostgresQuery(
                        unsafeSQL:
                            "INSERT INTO \(SQLName.qualified(namespace, "cirrus_subscriptions")) AS s (tenant, id, "
                            + "subscriber, kind, record_type, predicate, arguments, fires_on, zone_name) VALUES (\(t), "
                            + "\(values)) ON CONFLICT (tenant, id) DO UPDATE SET kind = excluded.kind, record_type = "
                            + "excluded.record_type, predicate = excluded.predicate, arguments = excluded.arguments, "
                            + "fires_on = excluded.fires_on, zone_name = excluded.zone_name "
                            + "WHERE s.subscriber = excluded.subscriber RETURNING 1", binds: b.binds), logger: logger)
                { saved = true }
                return saved ? .saved : .taken
            }
        }
    }

    /// Deletes the subscription `id` of `subscriber`; false when it has none by that id.
    func deleteSubscription(id: String, subscriber: String) async throws(CirrusError) -> Bool {
        let table = SQLName.qualified(tenant.namespace, "cirrus_subscriptions")
        let key = tenant.key
        let logger = self.logger
        return try await run("deleting subscription \(id) of \(key)") { client in
            var b = SQLBuilder()
            var found = false
            for try await _ in try await client.query(
                PostgresQuery(
                    unsafeSQL: "DELETE FROM \(table) WHERE tenant = \(b.param(key)) AND id = \(b.param(id)) "
                        + "AND subscriber = \(b.param(subscriber)) RETURNING 1", binds: b.binds), logger: logger)
            { found = true }
            return found
        }
    }

    /// The subscriptions `subscriber` saved in this tenant, by id (not checked).
    func subscriptions(of subscriber: String) async throws(CirrusError) -> [Subscription] {
        let table = SQLName.qualified(tenant.namespace, "cirrus_subscriptions")
        let key = tenant.key
        let logger = self.logger
        let address = self.address
        return try await run("listing the subscriptions of \(key)", retryRead: true) { client in
            var b = SQLBuilder()
            let rows = try await client.query(
                PostgresQuery(
                    unsafeSQL: "SELECT \(Self.subscriptionColumns) FROM \(table) WHERE tenant = \(b.param(key)) "
                        + "AND subscriber = \(b.param(subscriber))", binds: b.binds), logger: logger)
            var out: [Subscription] = []
            for try await row in rows.decode(SubscriptionRow.self) {
                out.append(try Self.subscription(row, address: address).0)
            }
            return out.sorted { $0.id < $1.id }
        }
    }

    typealias SubscriptionRow = (String, String, String, String?, String?, String?, Int16?, String?)
    static let subscriptionColumns = "id, subscriber, kind, record_type, predicate, arguments, fires_on, zone_name"

    /// A stored subscription and its subscriber; internalError when the row does not decode.
    static func subscription(
        _ row: SubscriptionRow, address: String
    ) throws(CirrusError) -> (
        Subscription, String
    ) {
        let (id, subscriber, kind, type, predicate, arguments, firesOn, zone) = row
        func bad(_ what: String) -> CirrusError {
            CirrusError(.internalError, "the stored subscription \"\(id)\" \(what)", location: address)
        }
        switch kind {
        case "zone":
            guard let zone else { throw bad("has no zone") }
            return (Subscription(id: id, zoneID: ZoneID(zoneName: zone)), subscriber)
        case "query":
            guard let type, let predicate, let arguments, let firesOn else { throw bad("lacks a query column") }
            let args: [PredicateArgument]
            do {
                args = try SubscriptionRules.arguments(fromJSON: try JSONValue.parse(arguments))
            } catch {
                throw bad("has arguments that do not decode: \(error)")
            }
            return (
                Subscription(
                    id: id, recordType: type, predicate: predicate, arguments: args,
                    firesOn: Subscription.FiresOn(rawValue: UInt8(truncatingIfNeeded: firesOn))),
                subscriber
            )
        default:
            throw bad("has kind \(kind)")
        }
    }

    /// What a request whose changes are `changes` notifies, in its transaction on `conn` at the
    /// tenant's sequence `seq` (see the file header): reads the subscriptions of the changed
    /// types and zones, checks them against `schema` (or, when one no longer checks against
    /// it — another process grew the schema since — against the schema stored in the
    /// database), inserts the notifications, deletes fired `once` subscriptions and notifies the
    /// namespace's channel. A stored subscription that checks against neither is skipped and
    /// logged (a corrupt row must not stop the tenant's writes).
    static func fireSubscriptions(
        _ conn: PostgresConnection, logger: Logger, namespace: String, tenant: String, seq: Int64,
        changes: [PostgresChange], schema: Schema, now: Timestamp
    ) async throws {
        let touched = changes.compactMap { $0.new ?? $0.old }
        if touched.isEmpty { return }
        var b = SQLBuilder()
        let t = b.param(tenant)
        var subscriptions: [(Subscription, String)] = []
        for try await row in try await conn.query(
            PostgresQuery(
                unsafeSQL: "SELECT \(subscriptionColumns) FROM \(SQLName.qualified(namespace, "cirrus_subscriptions")) "
                    + "WHERE tenant = \(t) AND (record_type = ANY(\(b.param(Array(Set(touched.map(\.recordType))))))"
                    + " OR zone_name = ANY(\(b.param(Array(Set(touched.map(\.recordID.zoneID.zoneName)))))))",
                binds: b.binds), logger: logger
        ).decode(SubscriptionRow.self) {
            subscriptions.append(try subscription(row, address: ""))
        }
        if subscriptions.isEmpty { return }
        var stored: Schema? = nil
        var checked: [(Subscription, String)] = []
        for (s, subscriber) in subscriptions.sorted(by: { $0.0.id < $1.0.id }) {
            do {
                checked.append((try SubscriptionRules.check(s, schema: schema, now: now), subscriber))
            } catch {
                if stored == nil { stored = try await storedSchema(conn, namespace: namespace, logger: logger) }
                do {
                    checked.append((try SubscriptionRules.check(s, schema: stored ?? schema, now: now), subscriber))
                } catch {
                    logger.error(
                        "subscription \(s.id) of \(tenant) does not check against the stored schema; skipped: \(error)")
                }
            }
        }
        var rows = OutboxRows()
        var once = Set<String>()
        for c in changes {
            for (s, subscriber) in checked {
                guard let n = SubscriptionRules.notification(s, old: c.old, new: c.new), let any = c.new ?? c.old
                else { continue }
                rows.append(n, subscriber: subscriber, record: any)
                if SubscriptionRules.firesOnce(s) { once.insert(s.id) }
            }
        }
        if rows.count == 0 { return }
        var i = SQLBuilder()
        let it = i.param(tenant)
        try await drain(
            conn,
            "INSERT INTO \(SQLName.qualified(namespace, "cirrus_notifications")) (tenant, seq, position, "
                + "subscription_id, subscriber, record_type, zone_name, record_name, reason, record) "
                + "SELECT \(it), \(i.param(String(seq)))::bigint, p::integer, s, u, rt, z, n, r::smallint, decode(h, 'hex') "
                + "FROM unnest(\(i.param(rows.positions))::text[], \(i.param(rows.subscriptionIDs))::text[], "
                + "\(i.param(rows.subscribers))::text[], \(i.param(rows.recordTypes))::text[], "
                + "\(i.param(rows.zoneNames))::text[], \(i.param(rows.recordNames))::text[], "
                + "\(i.param(rows.reasons))::text[], \(i.param(rows.records))::text[]) AS x(p, s, u, rt, z, n, r, h)",
            i, logger)
        if !once.isEmpty {
            var d = SQLBuilder()
            try await drain(
                conn,
                "DELETE FROM \(SQLName.qualified(namespace, "cirrus_subscriptions")) WHERE tenant = \(d.param(tenant)) "
                    + "AND id = ANY(\(d.param(once.sorted()))) AND kind = 'query'", d, logger)
        }
        if seq % outboxPruneEvery == 0 {
            var d = SQLBuilder()
            try await drain(
                conn,
                "DELETE FROM \(SQLName.qualified(namespace, "cirrus_notifications")) WHERE tenant = "
                    + "\(d.param(tenant)) AND at < now() - interval '\(outboxRetentionSeconds) seconds'", d, logger)
        }
        var n = SQLBuilder()
        try await drain(
            conn, "SELECT pg_notify(\(n.param(channel(namespace))), \(n.param(tenant)))::text", n, logger)
    }

    /// Everything a zone deletion does for subscriptions, in its transaction, before the zone's
    /// rows are deleted: the deletion of each record of the zone notifies (as on the embedded
    /// engine, whose zone subscriptions see their zone's records go), then the zone's
    /// subscriptions are dropped.
    static func zoneDeleted(
        _ conn: PostgresConnection, logger: Logger, namespace: String, tenant: String, zone: String, seq: Int64,
        tables: [String], schema: Schema, now: Timestamp
    ) async throws {
        var changes: [PostgresChange] = []
        for table in tables {
            var b = SQLBuilder()
            for try await data in try await conn.query(
                PostgresQuery(
                    unsafeSQL: "SELECT data FROM \(table) WHERE tenant = \(b.param(tenant)) AND zone_name = "
                        + "\(b.param(zone)) ORDER BY record_name", binds: b.binds), logger: logger
            ).decode(ByteBuffer.self) {
                changes.append(PostgresChange(old: try RecordRow.decode(Array(data.readableBytesView)), new: nil))
            }
        }
        try await fireSubscriptions(
            conn, logger: logger, namespace: namespace, tenant: tenant, seq: seq, changes: changes, schema: schema,
            now: now)
        var d = SQLBuilder()
        try await drain(
            conn,
            "DELETE FROM \(SQLName.qualified(namespace, "cirrus_subscriptions")) WHERE tenant = \(d.param(tenant)) "
                + "AND kind = 'zone' AND zone_name = \(d.param(zone))", d, logger)
    }

    /// The schema stored in the database (cirrus_schema), read in the caller's transaction.
    static func storedSchema(_ conn: PostgresConnection, namespace: String, logger: Logger) async throws -> Schema? {
        var text: String? = nil
        for try await s in try await conn.query(
            PostgresQuery(
                unsafeSQL: "SELECT schema FROM \(SQLName.qualified(namespace, "cirrus_schema")) WHERE id = 1"),
            logger: logger
        ).decode(String.self) { text = s }
        guard let text else { return nil }
        return try JSONDecoder().decode(Schema.self, from: Data(text.utf8))
    }

    /// The tenant's last committed sequence (0 before its first request): a stream opened now
    /// starts after it.
    func currentSequence() async throws(CirrusError) -> Int64 {
        let table = SQLName.qualified(tenant.namespace, "cirrus_tenants")
        let key = tenant.key
        let logger = self.logger
        return try await run("reading the sequence of \(key)", retryRead: true) { client in
            var b = SQLBuilder()
            var seq: Int64 = 0
            for try await n in try await client.query(
                PostgresQuery(
                    unsafeSQL: "SELECT sequence FROM \(table) WHERE tenant = \(b.param(key))", binds: b.binds),
                logger: logger
            ).decode(Int64.self) { seq = n }
            return seq
        }
    }

    /// The outbox rows of `subscriber` after `position`, in commit order (at most
    /// ``outboxPage``): each row's position and its notification, with the record the access
    /// rules decide on (for a deletion, the record as it was; the notification carries none).
    func outbox(
        subscriber: String, after position: OutboxPosition
    ) async throws(CirrusError) -> [(
        OutboxPosition, RecordNotification, Record
    )] {
        let table = SQLName.qualified(tenant.namespace, "cirrus_notifications")
        let key = tenant.key
        let logger = self.logger
        let address = self.address
        return try await run("reading the notifications of \(key)", retryRead: true) { client in
            var b = SQLBuilder()
            let rows = try await client.query(
                PostgresQuery(
                    unsafeSQL: "SELECT seq, position, subscription_id, reason, record FROM \(table) WHERE tenant = "
                        + "\(b.param(key)) AND subscriber = \(b.param(subscriber)) AND (seq, position) > "
                        + "(\(b.param(String(position.seq)))::bigint, \(b.param(String(position.position)))::integer) "
                        + "ORDER BY seq, position LIMIT \(Self.outboxPage)", binds: b.binds), logger: logger)
            var out: [(OutboxPosition, RecordNotification, Record)] = []
            for try await (seq, pos, id, reason, data) in rows.decode((Int64, Int32, String, Int16, ByteBuffer).self) {
                let record = try RecordRow.decode(Array(data.readableBytesView))
                let why: RecordNotification.Reason
                switch reason {
                case 1: why = .recordCreated
                case 2: why = .recordUpdated
                case 3: why = .recordDeleted
                default:
                    throw CirrusError(
                        .internalError, "a notification of \(key) has reason \(reason)", location: address)
                }
                out.append(
                    (
                        OutboxPosition(seq: seq, position: pos),
                        RecordNotification(
                            subscriptionID: id, recordID: record.recordID, recordType: record.recordType, reason: why,
                            record: why == .recordDeleted ? nil : record),
                        record
                    ))
            }
            return out
        }
    }

    /// Runs a statement on `conn` and drains its rows.
    private static func drain(
        _ conn: PostgresConnection, _ sql: String, _ b: SQLBuilder, _ logger: Logger
    )
        async throws
    {
        for try await _ in try await conn.query(PostgresQuery(unsafeSQL: sql, binds: b.binds), logger: logger) {}
    }
}

/// The columns of a request's outbox rows, as text arrays for one `INSERT … SELECT FROM unnest`.
private struct OutboxRows {
    var positions: [String] = []
    var subscriptionIDs: [String] = []
    var subscribers: [String] = []
    var recordTypes: [String] = []
    var zoneNames: [String] = []
    var recordNames: [String] = []
    var reasons: [String] = []
    var records: [String] = []

    var count: Int { positions.count }

    mutating func append(_ n: RecordNotification, subscriber: String, record: Record) {
        positions.append(String(positions.count))
        subscriptionIDs.append(n.subscriptionID)
        subscribers.append(subscriber)
        recordTypes.append(record.recordType)
        zoneNames.append(record.recordID.zoneID.zoneName)
        recordNames.append(record.recordID.recordName)
        switch n.reason {
        case .recordCreated: reasons.append("1")
        case .recordUpdated: reasons.append("2")
        case .recordDeleted: reasons.append("3")
        }
        records.append(SQLText.hex(RecordRow.encode(record)))
    }
}

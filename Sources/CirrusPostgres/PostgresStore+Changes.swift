// Change history on PostgreSQL: what changed in a custom zone since a position, and which zones
// of a tenant changed — the data behind the façade's change tokens (PostgresDatabase+Changes.swift).
//
// Every write request of a tenant takes the next number of its counter (`cirrus_tenants`) under
// the counter row's lock, held to the commit, so the tenant's requests commit in counter order
// and a snapshot holds exactly the requests up to some number. Each live record keeps the number
// of its last write (`cirrus_names.seq`); a deletion leaves a tombstone with its number
// (`cirrus_tombstones`, removed when the name is saved again or its zone deleted); a zone keeps
// the number it was created at (`cirrus_zones.created_seq`). The items of one request share its
// number, so a position is a number plus, inside it, the last (owner, record name) delivered.
// Every read here runs in one REPEATABLE READ transaction: the counter, the zone and the rows
// come from one snapshot. Tombstones are kept until their zone is deleted (no compaction).

import CirrusFacade
import Logging
import NIOCore
import PostgresNIO
import RecordModel

/// A position in a tenant's history: every change with a sequence number below `sequence`,
/// and those at `sequence` — all of them when `after` is nil, else up to the (zone owner, record
/// name) `after`.
struct ChangePosition: Sendable, Hashable {
    var sequence: Int64
    var afterOwner: String?
    var afterName: String?

    /// Everything up to and including `sequence`.
    init(through sequence: Int64) {
        self.sequence = sequence
    }

    /// Up to the item (`owner`, `name`) of `sequence`.
    init(sequence: Int64, owner: String, name: String) {
        self.sequence = sequence
        afterOwner = owner
        afterName = name
    }
}

/// One page of a zone's history.
struct PostgresZoneChangePage: Sendable {
    /// Saved records (their current versions), in history order.
    var changed: [Record]
    /// Deleted records and the types they had.
    var deleted: [(RecordID, String)]
    /// Where the next page starts.
    var next: ChangePosition
    /// Whether more changes follow.
    var more: Bool
}

extension PostgresStore {
    /// The changes of the custom zone `zone` after `since` (nil: from its creation), at most
    /// `limit`. zoneNotFound when it does not exist; changeTokenExpired when `since` is ahead of
    /// the tenant's history or older than the zone (a zone of that name deleted since).
    func zoneChanges(
        _ zone: String, since: ChangePosition?, limit: Int
    ) async throws(CirrusError) -> PostgresZoneChangePage {
        let namespace = tenant.namespace
        let key = tenant.key
        let logger = self.logger
        let tables = self.tables
        let scope = self.scope
        let pageSize = max(1, limit)
        return try await run("fetching the changes of zone \(zone) of \(key)", retryRead: true) { client in
            try await client.withTransaction(logger: logger) { conn in
                let ctx = WriteContext(
                    conn: conn, scope: scope, tables: tables, now: Timestamp(millisecondsSince1970: 0), user: nil)
                try await ctx.exec("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                var b = SQLBuilder()
                let t = b.param(key)
                let z = b.param(zone)
                var state: (current: Int64, created: Int64?) = (0, nil)
                for try await (current, created) in try await ctx.query(
                    "SELECT COALESCE((SELECT sequence FROM \(SQLName.qualified(namespace, "cirrus_tenants")) "
                        + "WHERE tenant = \(t)), 0), (SELECT created_seq FROM "
                        + "\(SQLName.qualified(namespace, "cirrus_zones")) WHERE tenant = \(t) AND zone_name = \(z))", b
                ).decode((Int64, Int64?).self) { state = (current, created) }
                guard let created = state.created else {
                    throw CirrusError(.zoneNotFound, "zone \"\(zone)\" does not exist")
                }
                if let since, since.sequence > state.current || since.sequence < created {
                    throw CirrusError(
                        .changeTokenExpired,
                        "the change token is \(since.sequence > state.current ? "ahead of" : "older than") zone "
                            + "\"\(zone)\"; fetch the zone from the beginning")
                }
                let after: String
                if let since, let o = since.afterOwner, let n = since.afterName {
                    after =
                        "(seq, zone_owner, record_name) > (\(b.param(String(since.sequence)))::bigint, "
                        + "\(b.param(o)), \(b.param(n)))"
                } else {
                    after = "seq > \(b.param(String(since?.sequence ?? 0)))::bigint"
                }
                let filter = "tenant = \(t) AND zone_name = \(z) AND \(after)"
                let rows = try await ctx.query(
                    "SELECT * FROM (SELECT false AS deleted, seq, zone_owner, record_name, record_type FROM "
                        + "\(SQLName.qualified(namespace, "cirrus_names")) WHERE \(filter) UNION ALL "
                        + "SELECT true, seq, zone_owner, record_name, record_type FROM "
                        + "\(SQLName.qualified(namespace, "cirrus_tombstones")) WHERE \(filter)) c "
                        + "ORDER BY seq, zone_owner, record_name LIMIT \(pageSize + 1)", b)
                var items: [(deleted: Bool, seq: Int64, id: RecordID, type: String)] = []
                for try await (deleted, seq, owner, name, type) in rows.decode(
                    (Bool, Int64, String, String, String).self)
                {
                    items.append(
                        (
                            deleted, seq, RecordID(recordName: name, zoneID: ZoneID(zoneName: zone, ownerName: owner)),
                            type
                        ))
                }
                let more = items.count > pageSize
                let page = items.prefix(pageSize)
                let found = try await ctx.records(page.filter { !$0.deleted }.map(\.id))
                var out = PostgresZoneChangePage(
                    changed: [], deleted: [], next: ChangePosition(through: state.current), more: more)
                for item in page {
                    if item.deleted {
                        out.deleted.append((item.id, item.type))
                    } else if let r = found[item.id] {
                        out.changed.append(r)
                    }
                }
                if more, let last = page.last {
                    out.next = ChangePosition(
                        sequence: last.seq, owner: last.id.zoneID.ownerName, name: last.id.recordName)
                }
                return out
            }
        }
    }

    /// The tenant's custom zones with the sequence of their latest change (creation, or a
    /// record saved or deleted in them), and the tenant's current sequence — one snapshot.
    func zoneHistory() async throws(CirrusError) -> (zones: [(name: String, latest: Int64)], current: Int64) {
        let namespace = tenant.namespace
        let key = tenant.key
        let logger = self.logger
        return try await run("fetching the zone changes of \(key)", retryRead: true) { client in
            try await client.withTransaction(logger: logger) { conn in
                for try await _ in try await conn.query(
                    "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
                {}
                var b = SQLBuilder()
                let t = b.param(key)
                var current: Int64 = 0
                for try await n in try await conn.query(
                    PostgresQuery(
                        unsafeSQL: "SELECT COALESCE((SELECT sequence FROM "
                            + "\(SQLName.qualified(namespace, "cirrus_tenants")) WHERE tenant = \(t)), 0)",
                        binds: b.binds), logger: logger
                ).decode(Int64.self) { current = n }
                var zones: [(name: String, latest: Int64)] = []
                let latest = { (table: String) in
                    "COALESCE((SELECT max(x.seq) FROM \(SQLName.qualified(namespace, table)) x "
                        + "WHERE x.tenant = z.tenant AND x.zone_name = z.zone_name), 0)"
                }
                for try await (name, seq) in try await conn.query(
                    PostgresQuery(
                        unsafeSQL: "SELECT z.zone_name, GREATEST(z.created_seq, \(latest("cirrus_names")), "
                            + "\(latest("cirrus_tombstones"))) FROM \(SQLName.qualified(namespace, "cirrus_zones")) z "
                            + "WHERE z.tenant = \(t)", binds: b.binds), logger: logger
                ).decode((String, Int64).self) { zones.append((name, seq)) }
                return (zones, current)
            }
        }
    }
}

// Change tokens on PostgreSQL: a zone's changes since a token and the zones of a database that
// changed since a database token, with the embedded engine's rules (EmbeddedDatabase+Zones and
// +DatabaseChanges): custom zones of private databases only (the default zone and the public
// database → badDatabase), a missing zone → zoneNotFound, a token this database did not issue,
// from the future, or older than its zone → changeTokenExpired. The history behind them is
// PostgresStore+Changes.swift.
//
// Token bytes (opaque to callers; docs/scale-out.md "Change tokens"):
//
//     zone token      "CZP1", sequence (8 bytes little-endian), flag (1: an item key follows),
//                     tenant key, 0, zone name, 0, [zone owner, 0, record name, 0]
//     database token  "CDP1", sequence, flag, tenant key, 0, [last zone name, 0],
//                     the names of the zones that existed, each followed by 0
//
// Like the embedded engine's database token, it carries the zone names it has seen, so a zone
// deleted since is reported without keeping zone tombstones.

import CirrusFacade
import RecordModel

/// The bytes of a PostgreSQL change token: a magic, a position, then NUL-terminated strings.
struct PostgresTokenBytes {
    var magic: String
    var sequence: Int64
    var flagged: Bool
    var strings: [String]

    var bytes: [UInt8] {
        var d = Array(magic.utf8)
        for i in 0..<8 { d.append(UInt8(truncatingIfNeeded: UInt64(bitPattern: sequence) >> (8 * UInt64(i)))) }
        d.append(flagged ? 1 : 0)
        for s in strings { d += Array(s.utf8) + [0] }
        return d
    }

    init(magic: String, sequence: Int64, flagged: Bool, strings: [String]) {
        self.magic = magic
        self.sequence = sequence
        self.flagged = flagged
        self.strings = strings
    }

    /// The fields of `data`; nil unless it has `magic` and decodes whole.
    init?(_ data: [UInt8], magic: String) {
        let m = Array(magic.utf8)
        guard data.count >= m.count + 9, Array(data[0..<m.count]) == m, data.last == 0 else { return nil }
        var v: UInt64 = 0
        for i in 0..<8 { v |= UInt64(data[m.count + i]) << (8 * UInt64(i)) }
        let flag = data[m.count + 8]
        guard flag <= 1, v <= UInt64(Int64.max) else { return nil }
        var strings: [String] = []
        for p in data[(m.count + 9)...].split(separator: 0, omittingEmptySubsequences: false).dropLast() {
            guard let s = String(validating: p, as: UTF8.self) else { return nil }
            strings.append(s)
        }
        self.init(magic: magic, sequence: Int64(v), flagged: flag == 1, strings: strings)
    }
}

extension PostgresDatabase {
    /// The changes of a custom zone since `token` (nil: from the beginning), at most `limit`
    /// per page (see the file header for the rules).
    public func changes(in zone: ZoneID, since token: ChangeToken?, limit: Int) async throws(CirrusError) -> ZoneChanges
    {
        try Self.checkCancelled()
        try AccessRules.checkDatabaseAccess(scope: scope, identity: identity)
        let z = try checkZone(zone)
        if z.isDefaultZone {
            throw CirrusError(.badDatabase, "the default zone does not support fetching changes", zoneID: zone)
        }
        let key = store.tenant.key
        var since: ChangePosition? = nil
        if let token {
            guard let t = PostgresTokenBytes(token.data, magic: "CZP1"), t.strings.count == (t.flagged ? 4 : 2),
                t.strings[0] == key, t.strings[1] == z.zoneName
            else {
                throw CirrusError(
                    .changeTokenExpired, "the change token was not issued for this zone; fetch it from the beginning",
                    zoneID: zone)
            }
            since =
                t.flagged
                ? ChangePosition(sequence: t.sequence, owner: t.strings[2], name: t.strings[3])
                : ChangePosition(through: t.sequence)
        }
        let page: PostgresZoneChangePage
        do {
            page = try await container.current(store).zoneChanges(z.zoneName, since: since, limit: limit)
        } catch {
            var e = error
            e.zoneID = zone
            throw e
        }
        let schema = self.schema
        var next = PostgresTokenBytes(
            magic: "CZP1", sequence: page.next.sequence, flagged: page.next.afterName != nil,
            strings: [key, z.zoneName])
        if let o = page.next.afterOwner, let n = page.next.afterName { next.strings += [o, n] }
        return ZoneChanges(
            changed: page.changed.filter { AccessRules.canRead($0, scope: scope, identity: identity, schema: schema) },
            deleted: page.deleted.map { ($0.0, recordType: $0.1) },
            token: ChangeToken(data: next.bytes), moreComing: page.more)
    }

    /// The custom zones changed since `token` (nil: every zone), at most `limit` per page; the
    /// public database → badDatabase.
    public func databaseChanges(
        since token: DatabaseChangeToken?, limit: Int
    ) async throws(CirrusError)
        -> DatabaseChanges
    {
        try Self.checkCancelled()
        try AccessRules.checkDatabaseAccess(scope: scope, identity: identity)
        if scope == .public { throw CirrusError(.badDatabase, "the public database has no custom zones to fetch") }
        let key = store.tenant.key
        let history: (zones: [(name: String, latest: Int64)], current: Int64)
        do {
            history = try await container.current(store).zoneHistory()
        } catch {
            throw error
        }
        var after: (Int64, String?) = (0, nil)
        var known: Set<String> = []
        if let token {
            guard let t = PostgresTokenBytes(token.data, magic: "CDP1"), t.strings.first == key,
                t.strings.count >= (t.flagged ? 2 : 1), t.sequence <= history.current
            else {
                throw CirrusError(
                    .changeTokenExpired,
                    "the database change token was not issued by this database or is ahead of it; fetch from the beginning"
                )
            }
            after = (t.sequence, t.flagged ? t.strings[1] : nil)
            known = Set(t.strings.dropFirst(t.flagged ? 2 : 1))
        }
        // Zones changed after the position, by (latest change, name): a request that touched
        // several zones gives them one sequence, so a page may end inside it.
        let changed = history.zones.filter { z in
            if let name = after.1 { return (z.latest, z.name) > (after.0, name) }
            return z.latest > after.0
        }.sorted { ($0.latest, $0.name) < ($1.latest, $1.name) }
        let pageSize = max(1, limit)
        let page = changed.prefix(pageSize)
        let more = changed.count > pageSize
        let names = history.zones.map(\.name).sorted()
        var next = PostgresTokenBytes(magic: "CDP1", sequence: history.current, flagged: false, strings: [key])
        if more, let last = page.last {
            next = PostgresTokenBytes(magic: "CDP1", sequence: last.latest, flagged: true, strings: [key, last.name])
        }
        next.strings += names
        return DatabaseChanges(
            changed: page.map { ZoneID(zoneName: $0.name) },
            deleted: known.subtracting(names).sorted().map { ZoneID(zoneName: $0) },
            token: DatabaseChangeToken(data: next.bytes), moreComing: more)
    }
}

// EmbeddedDatabase+DatabaseChanges: which custom zones of a database changed since a database change
// token — CloudKit's "fetch database changes" (CKFetchDatabaseChangesOperation, Web Services
// `changes/database`). A zone changed when it was created, or a record in it was saved or
// deleted, after the token's sequence; a zone the token knew that no longer exists was deleted.
//
// A database change token is opaque bytes: "CDT1", the sequence it was issued at and the
// compaction horizon then (8 bytes little-endian each), the owner, 0, then the names of the
// zones that existed, each followed by 0. Keeping the names is what lets a deletion be reported
// although the log forgets a deleted zone. The rules of validity are the zone tokens' (a token
// from before the last compaction whose horizon differs has lost tombstones: changeTokenExpired).
// Cost: one pass over the database's record ids and tombstones per call.

import RecordLog
import RecordModel

/// An opaque position in a database's history of zones.
public struct DatabaseChangeToken: Sendable, Hashable {
    /// The token's bytes (store them to resume later).
    public let data: [UInt8]

    /// A token from bytes a previous fetch returned.
    public init(data: [UInt8]) { self.data = data }

    init(owner: String, sequence: UInt64, horizon: UInt64, zones: [String]) {
        var d = Array("CDT1".utf8)
        for v in [sequence, horizon] { for i in 0..<8 { d.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) } }
        d += Array(owner.utf8) + [0]
        for z in zones { d += Array(z.utf8) + [0] }
        data = d
    }

    /// Owner, sequence, horizon and the zone names; nil if the bytes do not decode.
    var decoded: (owner: String, sequence: UInt64, horizon: UInt64, zones: Set<String>)? {
        guard data.count >= 21, Array(data[0..<4]) == Array("CDT1".utf8), data.last == 0 else { return nil }
        func u64(_ at: Int) -> UInt64 {
            var v: UInt64 = 0
            for i in 0..<8 { v |= UInt64(data[at + i]) << (8 * UInt64(i)) }
            return v
        }
        var parts: [String] = []
        for p in data[20...].split(separator: 0, omittingEmptySubsequences: false).dropLast() {
            guard let s = String(validating: p, as: UTF8.self) else { return nil }
            parts.append(s)
        }
        guard let owner = parts.first else { return nil }
        return (owner, u64(4), u64(12), Set(parts.dropFirst()))
    }
}

/// One page of a database's zone changes.
public struct DatabaseChanges: Sendable {
    /// Custom zones created or with changed records since the token, oldest change first.
    public var changed: [ZoneID]
    /// Zones the token knew that have been deleted since.
    public var deleted: [ZoneID]
    /// Where the next fetch starts.
    public var token: DatabaseChangeToken
    /// Whether more changed zones follow (fetch again with `token`).
    public var moreComing: Bool

    /// A page of zone changes (what another engine's backend returns).
    public init(changed: [ZoneID], deleted: [ZoneID], token: DatabaseChangeToken, moreComing: Bool) {
        self.changed = changed
        self.deleted = deleted
        self.token = token
        self.moreComing = moreComing
    }
}

extension EmbeddedDatabase {
    /// The custom zones that changed since `token` (nil: every zone), at most `limit` per page.
    /// The public database has no custom zones (badDatabase).
    ///
    /// ```swift
    /// var token: DatabaseChangeToken? = nil
    /// repeat {
    ///     let page = try await db.databaseChanges(since: token)
    ///     for zone in page.changed { try await fetchChanges(of: zone) }
    ///     token = page.token
    /// } while page.moreComing
    /// ```
    public func databaseChanges(
        since token: DatabaseChangeToken?, limit: Int = DatabaseLimits.defaultChangesPageSize
    ) async throws(CirrusError) -> DatabaseChanges {
        try Self.checkCancelled()
        try checkDatabaseAccess()
        if scope == .public { throw CirrusError(.badDatabase, "the public database has no custom zones to fetch") }
        let snap = core.store.snapshot()
        var since: UInt64 = 0
        var known: Set<String> = []
        if let token {
            guard let (o, seq, issuedHorizon, zones) = token.decoded, o == owner, seq <= snap.lastSequence,
                seq >= snap.horizon || issuedHorizon == snap.horizon
            else {
                throw CirrusError(
                    .changeTokenExpired,
                    "the database change token is unknown or older than the log keeps; fetch from the beginning")
            }
            since = seq
            known = zones
        }
        // The latest change of each custom zone of this owner.
        var latest: [String: UInt64] = [:]
        for (z, created) in snap.zones where z.ownerName == owner { latest[z.zoneName] = created }
        for id in snap.recordIDs where id.zoneID.ownerName == owner {
            guard let seq = snap.sequence(of: id), let l = latest[id.zoneID.zoneName], seq > l else { continue }
            latest[id.zoneID.zoneName] = seq
        }
        for name in Array(latest.keys) {
            let storage = ZoneID(zoneName: name, ownerName: owner)
            for t in snap.tombstones(in: storage) where t.sequence > latest[name] ?? 0 { latest[name] = t.sequence }
        }
        let changed = latest.filter { $0.value > since }.sorted { ($0.value, $0.key) < ($1.value, $1.key) }
        let pageSize = max(1, limit)
        let page = changed.prefix(pageSize)
        let more = changed.count > pageSize
        let deleted = known.subtracting(latest.keys).sorted()
        // Every log entry has its own sequence, so no two zones share a latest change and the
        // next page can start right after the last zone of this one.
        let next = more ? page.last?.value ?? snap.lastSequence : snap.lastSequence
        return DatabaseChanges(
            changed: page.map { ZoneID(zoneName: $0.key) }, deleted: deleted.map { ZoneID(zoneName: $0) },
            token: DatabaseChangeToken(
                owner: owner, sequence: next, horizon: snap.horizon, zones: latest.keys.sorted()),
            moreComing: more)
    }
}

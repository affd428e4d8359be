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

import CirrusFacade
import RecordLog
import RecordModel

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

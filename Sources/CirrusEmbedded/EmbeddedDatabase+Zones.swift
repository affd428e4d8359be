// EmbeddedDatabase+Zones: custom zones (private databases only; the public database has just the
// default zone → badDatabase) and fetching a zone's changes since a change token.
//
// A change token is the zone (owner and name) plus the log sequence number it was issued at,
// and the compaction horizon at that time, encoded as opaque bytes: "CZT2", sequence and horizon
// (8 bytes little-endian each), owner, 0, zone name. The horizon lets a token issued after a
// compaction (say, the second page of a fetch from the beginning) stay valid although its
// sequence is below the horizon: no deletion it has not seen was compacted away. Changes since it: live records of the zone written after
// the sequence and tombstones (RecordLog keeps deletions until compaction) after it, in sequence
// order, paged. A token older than the compaction horizon or the zone's creation, from another
// zone, from the future, or not decoding at all → changeTokenExpired.

import CirrusFacade
import RecordLog
import RecordModel

extension EmbeddedDatabase {
    /// Creates a custom zone (no-op if it exists). badDatabase in the public database.
    @discardableResult
    public func save(zone: ZoneID) async throws(CirrusError) -> ZoneID {
        try Self.checkCancelled()
        try checkDatabaseAccess()
        let z = try checkZone(zone)
        if z.isDefaultZone { return z }
        do {
            try Validation.validateZoneID(z)
        } catch {
            throw .zone(.invalidArguments, zone, error.message)
        }
        try requireWriter()
        return try core.withWriteLock { () throws(CirrusError) in
            if core.zoneExists(owner: owner, z) { return z }
            try core.commitHoldingLock(
                [.createZone(ZoneID(zoneName: z.zoneName, ownerName: owner))], changes: [], newSchema: nil)
            return z
        }
    }

    /// Deletes a custom zone, every record in it and its zone subscriptions. zoneNotFound if it
    /// does not exist.
    public func deleteZone(_ zone: ZoneID) async throws(CirrusError) {
        try Self.checkCancelled()
        try checkDatabaseAccess()
        let z = try checkZone(zone)
        if z.isDefaultZone { throw .zone(.invalidArguments, zone, "the default zone cannot be deleted") }
        try requireWriter()
        let storage = ZoneID(zoneName: z.zoneName, ownerName: owner)
        try core.withWriteLock { () throws(CirrusError) in
            guard core.zoneExists(owner: owner, z) else { throw .zone(.zoneNotFound, zone, "no such zone") }
            let stored: [StoredRecord]
            do { stored = try core.store.snapshot().records(in: storage) } catch { throw .unreadable(error) }
            let gone = stored.map { RecordChange(owner: owner, old: ContainerCore.apiForm($0.record), new: nil) }
            try core.commitHoldingLock([.deleteZone(storage)], changes: gone, newSchema: nil)
            // Zone subscriptions of the zone go with it.
            let dropped = core.stateLock.withLock { () -> Bool in
                let before = core.subscriptions[owner]?.count ?? 0
                core.subscriptions[owner] = core.subscriptions[owner]?.filter { _, s in
                    if case .zone(let sz) = s.kind { return sz.zoneName != z.zoneName }
                    return true
                }
                return (core.subscriptions[owner]?.count ?? 0) != before
            }
            if dropped { core.persistSubscriptionsLater() }
        }
    }

    /// The zones of this database, the default zone first.
    public func allZones() async throws(CirrusError) -> [ZoneID] {
        try checkDatabaseAccess()
        return [.default] + core.zones(owner: owner).keys.map { ZoneID(zoneName: $0.zoneName) }.sorted()
    }

    func requireWriter() throws(CirrusError) {
        if identity.userRecordName == nil {
            throw CirrusError(.notAuthenticated, "changing zones needs a signed-in user")
        }
        if core.options.readOnly { throw CirrusError(.internalError, "the container is open read-only") }
    }

    /// The changes of a custom zone since `token` (nil: from the beginning), at most `limit`
    /// per page. The default zone and the public database have no change fetching (badDatabase).
    ///
    /// ```swift
    /// var token: ChangeToken? = nil
    /// repeat {
    ///     let page = try await db.changes(in: zone, since: token)
    ///     apply(page.changed, page.deleted)
    ///     token = page.token
    /// } while page.moreComing
    /// ```
    public func changes(
        in zone: ZoneID, since token: ChangeToken?, limit: Int = DatabaseLimits.defaultChangesPageSize
    ) async throws(CirrusError) -> ZoneChanges {
        try Self.checkCancelled()
        try checkDatabaseAccess()
        let z = try checkZone(zone)
        if z.isDefaultZone { throw .zone(.badDatabase, zone, "the default zone does not support fetching changes") }
        let storage = ZoneID(zoneName: z.zoneName, ownerName: owner)
        let snap = core.store.snapshot()
        guard let created = snap.zones[storage] else { throw .zone(.zoneNotFound, zone, "no such zone") }
        var since: UInt64 = 0
        if let token {
            // Valid when issued since the last compaction (the log still has every deletion
            // the token has not seen) or at/after the horizon.
            guard let (tz, seq, issuedHorizon) = token.decoded, tz == storage, seq <= snap.lastSequence,
                seq >= snap.horizon || issuedHorizon == snap.horizon, seq >= created
            else {
                throw .zone(
                    .changeTokenExpired, zone,
                    "the change token is unknown or older than the log keeps; fetch the zone from the beginning")
            }
            since = seq
        }
        // Select by sequence without decoding; decode only the page.
        enum Item { case saved(RecordID), deleted(RecordID, String) }
        var items: [(UInt64, Item)] = []
        for id in snap.recordIDs where id.zoneID == storage {
            if let seq = snap.sequence(of: id), seq > since { items.append((seq, .saved(id))) }
        }
        // A name saved again after its deletion is live: it is reported as changed, not deleted.
        for t in snap.tombstones(in: storage) where t.sequence > since && snap.sequence(of: t.recordID) == nil {
            items.append((t.sequence, .deleted(t.recordID, t.recordType)))
        }
        items.sort { $0.0 < $1.0 }
        let pageSize = max(1, limit)
        let more = items.count > pageSize
        let page = items.prefix(pageSize)
        var out = ZoneChanges(
            changed: [], deleted: [],
            token: ChangeToken(owner: owner, zoneName: z.zoneName, sequence: snap.lastSequence, horizon: snap.horizon),
            moreComing: more)
        for (_, item) in page {
            switch item {
            case .saved(let id):
                let stored: StoredRecord?
                do { stored = try snap.record(id) } catch { throw .unreadable(error) }
                if let s = stored { out.changed.append(ContainerCore.apiForm(s.record)) }
            case .deleted(let id, let type): out.deleted.append((ContainerCore.apiID(id), recordType: type))
            }
        }
        if more, let last = page.last {
            out.token = ChangeToken(owner: owner, zoneName: z.zoneName, sequence: last.0, horizon: snap.horizon)
        }
        return out
    }
}

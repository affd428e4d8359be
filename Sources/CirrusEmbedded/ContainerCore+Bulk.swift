// ContainerCore+Bulk: the façade's side of a bulk import — plan each batch as administrative
// saves against the committed state, hand the resulting versions to the store's BulkLoad, keep
// references, asset counts, zones and the growing schema, and at the end land everything with
// one checkpoint and re-make the tables over the new segments.

import CirrusFacade
import Indexes
import RecordLog
import RecordModel

/// What a bulk import has planned so far (guarded by the write lock).
struct BulkImportState {
    let load: BulkLoad
    /// The schema including what the import added so far.
    var schema: Schema
    var schemaChanged = false
    /// Zones the import creates (storage form).
    var zones: Set<ZoneID> = []
    /// Ids added so far (storage form): an id may appear once per import.
    var seen = BulkIDs()
}

/// The ids a bulk import added, as 64-bit fingerprints (8 bytes an id where the ids themselves
/// took about 130: 10M records' ids no longer need 1.3 GB). A fingerprint seen before is
/// settled against the load itself — its buffer and sorted runs — so the answer is exact; with
/// distinct ids that happens about once in 10^5 imports of 10M records, and for every real repeat.
struct BulkIDs {
    private var fingerprints: Set<UInt64> = []

    mutating func insert(_ id: RecordID) { fingerprints.insert(Self.fingerprint(id)) }

    /// Whether `id` was added to `load` before.
    func contains(_ id: RecordID, in load: BulkLoad) -> Bool {
        fingerprints.contains(Self.fingerprint(id)) && load.contains(id)
    }

    /// The id's hash (SipHash, seeded per process: the set never leaves it).
    private static func fingerprint(_ id: RecordID) -> UInt64 { UInt64(bitPattern: Int64(id.hashValue)) }
}

extension ContainerCore {
    /// Plans and adds one batch; returns the rejected records (index in `records`, error).
    /// `validated`: every record passed `Record.validate()` already (not checked again).
    func bulkAdd(
        _ records: [Record], db: EmbeddedDatabase, owner: String, validated: Bool = false
    ) throws -> [(Int, CirrusError)] {
        guard var state = bulk else { throw CirrusError(.internalError, "no bulk import under way") }
        if case .private = db.scope {
            for r in records where !r.recordID.zoneID.isDefaultZone {
                let z = ZoneID(zoneName: r.recordID.zoneID.zoneName, ownerName: owner)
                // An invalid zone is not created here: its records fail validation with its name.
                if !zoneExists(owner: owner, z), (try? Validation.validateZoneID(z)) != nil {
                    state.zones.insert(z)
                    state.load.addZone(z)
                }
            }
            bulk = state
        }
        var plan = ModifyPlanner(database: db, policy: .allKeys, excludedZones: [], administrative: true)
        plan.validated = validated
        plan.run(saving: records, deleting: [])
        var saved: [Record] = []
        for op in plan.operations {
            if case .save(let r) = op {
                saved.append(r)
                state.seen.insert(r.recordID)
            }
        }
        do { try state.load.add(saved) } catch { throw CirrusError.storage(error, "the import") }
        var dropped: [String: Int] = [:]
        for c in plan.changes {
            if let o = c.old { removeRefs(owner: c.owner, o, dropped: &dropped) }
            if let n = c.new { addRefs(owner: c.owner, n) }
        }
        for (hash, _) in dropped where (assetRefs[hash] ?? 0) == 0 {
            assetRefs[hash] = nil
            unreferencedAssets.insert(hash)
        }
        if plan.schemaChanged {
            state.schema = plan.schema
            state.schemaChanged = true
        }
        bulk = state
        return plan.outcomes.enumerated().compactMap { (i, r) in
            if case .failure(let e) = r { return (i, e) }
            return nil
        }
    }

    /// Lands the bulk import: one checkpoint with everything, then new tables.
    func finishBulk() throws(CirrusError) {
        guard var state = bulk else { return }
        // The ids' fingerprints are not needed to land the load (10M records: ≈ 200 MB).
        state.seen = BulkIDs()
        bulk = state
        let schema = state.schema
        if state.schemaChanged { state.load.setSchema(schema) }
        try ensureSecrets(state.load.owners.union(state.zones.map(\.ownerName)))
        do {
            try state.load.finish(userState: userStateBytes(), sections: Self.sectionEncoder(schema))
        } catch {
            throw CirrusError.storage(error, "the import")
        }
        bulk = nil
        rewriteAtCheckpoint = []
        try remakeTables(schema: schema)
    }
}

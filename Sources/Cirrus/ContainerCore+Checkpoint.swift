// ContainerCore+Checkpoint: opening tables from the checkpoint's data segments plus the log
// tail, and writing checkpoints (docs/storage-format.md).
//
// Open: a table per base table (mapped, nothing decoded), then the delta — every record changed
// since the checkpoint — applied as one commit through the normal write path, so tables,
// indexes, reverse references and asset counts come out exactly as if the process had never
// stopped. The façade's own state (reverse deleteSelf references, asset reference counts) is
// saved with each checkpoint in the store's `user` section so it need not be rebuilt from
// every record. A store never checkpointed (or written by an older version) is bulk-built from
// its log as before.
//
// Checkpoint: under the write lock, the store writes each changed table's delta as a new layer
// (merging layers tiered) and asks for the layer's index sections; the tables are then re-made
// over the new layers (a table whose layers did not change is reused).

import Foundation
import Indexes
import RecordLog
import RecordModel

/// The façade's state saved with a checkpoint.
struct CheckpointUserState: Codable {
    static let version = 1
    var version = CheckpointUserState.version
    /// owner → target (API form) → records holding a deleteSelf reference to it.
    var backrefs: [String: [RecordID: Set<RecordID>]]
    var assetRefs: [String: Int]
}

extension ContainerCore {
    /// Builds the published tables from a store snapshot (at open).
    func loadTables(_ snap: StoreSnapshot, schema: Schema) throws(CirrusError) {
        guard snap.checkpointSequence > 0 else {
            // Never checkpointed: bulk-build every table from the replayed log.
            var grouped: [String: [String: [Record]]] = [:]
            snap.forEachRecord { stored in
                let owner = stored.record.recordID.zoneID.ownerName
                let r = Self.apiForm(stored.record)
                grouped[owner, default: [:]][r.recordType, default: []].append(r)
                addRefs(owner: owner, r)
            }
            for (owner, types) in grouped {
                for (type, records) in types {
                    tables[owner, default: [:]][type] = TypeTable(
                        recordType: type, owner: owner, schema: schema.recordTypes[type], records: records,
                        nodeSize: options.indexNodeSize)
                }
            }
            return
        }
        tables = try baseTables(snap, schema: schema)
        if let bytes = store.checkpointUserState, !bytes.isEmpty {
            do {
                let u = try JSONDecoder().decode(CheckpointUserState.self, from: Data(bytes))
                guard u.version == CheckpointUserState.version else {
                    throw CirrusError(
                        .internalError,
                        "the checkpoint's façade state has version \(u.version); this build reads \(CheckpointUserState.version)"
                    )
                }
                backrefs = u.backrefs
                assetRefs = u.assetRefs
            } catch let e as CirrusError {
                throw e
            } catch {
                throw CirrusError(
                    .internalError, "the checkpoint's façade state in \(storeDirectory) does not decode: \(error)")
            }
        } else {
            // No saved state (a store compacted by an older tool): rebuild it from the rows.
            snap.forEachRecord { addRefs(owner: $0.record.recordID.zoneID.ownerName, Self.apiForm($0.record)) }
        }
        let changes = snap.deltaChanges().map { c in
            RecordChange(
                owner: c.id.zoneID.ownerName, old: c.base.map { Self.apiForm($0.record) },
                new: c.current.map { Self.apiForm($0.record) })
        }
        if !changes.isEmpty { apply(changes, newSchema: nil) }
    }

    /// The façade's state as the checkpoint's `user` bytes.
    func userStateBytes() throws(CirrusError) -> [UInt8] {
        do {
            let enc = JSONEncoder()
            enc.outputFormatting = .sortedKeys
            return Array(try enc.encode(CheckpointUserState(backrefs: backrefs, assetRefs: assetRefs)))
        } catch {
            throw CirrusError(.internalError, "cannot encode the façade state for a checkpoint: \(error)")
        }
    }

    /// Writes a checkpoint and re-makes the tables over the new segments (write lock held).
    /// `raiseHorizon` also forgets deletions, as compaction does.
    @discardableResult
    func checkpointHoldingLock(raiseHorizon: Bool = false) throws(CirrusError) -> CheckpointReport {
        if let e = checkpointError {
            checkpointError = nil
            throw e
        }
        let schema = stateLock.withLock { publishedSchema }
        let nodeSize = options.indexNodeSize
        let report: CheckpointReport
        do {
            report = try store.checkpoint(
                userState: try userStateBytes(), raiseHorizon: raiseHorizon, rewrite: rewriteAtCheckpoint,
                sections: { rows in
                    Self.indexSections(rows, schema: schema.recordTypes[rows.key.recordType], nodeSize: nodeSize)
                })
        } catch {
            throw CirrusError(.internalError, "the checkpoint failed: \(error)")
        }
        rewriteAtCheckpoint = []
        try remakeTables(schema: schema)
        return report
    }

    /// A table over each of the snapshot's base tables, with an empty delta (nothing decoded but
    /// dead rows); a table whose layers and schema did not change since the last call is reused.
    func baseTables(_ snap: StoreSnapshot, schema: Schema) throws(CirrusError) -> [String: [String: TypeTable]] {
        var out: [String: [String: TypeTable]] = [:]
        var made: [TableKey: TypeTable] = [:]
        for (key, b) in snap.base {
            let typeSchema = schema.recordTypes[key.recordType]
            let table: TypeTable
            if let old = baseOnlyTables[key], old.base?.files == b.files, old.schema == typeSchema {
                table = old
            } else {
                table = try TypeTable(
                    base: b, schema: typeSchema, nodeSize: options.indexNodeSize, cacheSize: options.recordCacheSize)
            }
            made[key] = table
            out[key.owner, default: [:]][key.recordType] = table
        }
        baseOnlyTables = made
        return out
    }

    /// Re-makes every table over the store's base (after a checkpoint or bulk load: the delta
    /// is empty) and publishes them with `schema`.
    func remakeTables(schema: Schema) throws(CirrusError) {
        let snap = store.snapshot()
        let next = try baseTables(snap, schema: schema)
        stateLock.withLock {
            tables = next
            publishedSchema = schema
            publishedVersion &+= 1
        }
    }

    /// Checkpoints when the delta has grown past the threshold (write lock held): in the
    /// background when `options.backgroundCheckpoints`, so commits go on while segments are written.
    func checkpointIfDue() throws(CirrusError) {
        guard !options.readOnly, !checkpointRunning, bulk == nil, store.deltaCount >= options.checkpointThreshold else {
            return
        }
        if options.backgroundCheckpoints { try startBackgroundCheckpoint() } else { try checkpointHoldingLock() }
    }

    /// Starts a checkpoint beside commits (write lock held): snapshot now, segments written on
    /// another thread, switch and rebase under the write lock when they are done.
    func startBackgroundCheckpoint() throws(CirrusError) {
        let job: CheckpointJob
        do { job = try store.beginCheckpoint() } catch {
            throw CirrusError(.internalError, "the checkpoint failed: \(error)")
        }
        let user = try userStateBytes()
        let schema = stateLock.withLock { publishedSchema }
        let rewrite = rewriteAtCheckpoint
        rewriteAtCheckpoint = []
        checkpointRunning = true
        checkpoints.enter()
        let nodeSize = options.indexNodeSize
        let thread = Thread { [self] in
            defer { checkpoints.leave() }
            let written = Result { () throws(LogError) in
                try store.writeCheckpoint(job, userState: user, rewrite: rewrite) { rows in
                    Self.indexSections(rows, schema: schema.recordTypes[rows.key.recordType], nodeSize: nodeSize)
                }
            }
            writeLock.withLock {
                checkpointRunning = false
                do {
                    try store.installCheckpoint(try written.get(), job: job)
                    try rebaseTables()
                    checkpointError = nil
                } catch {
                    // The commits are safe in the log; the next checkpoint tries again, and the
                    // failure is reported by close() and checkpoint().
                    rewriteAtCheckpoint.formUnion(rewrite)
                    checkpointError = CirrusError(.internalError, "a background checkpoint failed: \(error)")
                }
            }
        }
        thread.name = "cirrus-checkpoint"
        thread.start()
    }

    /// Waits until no background checkpoint is running (call without the write lock).
    func waitForCheckpoints() { checkpoints.wait() }

    /// After a background checkpoint's switch: tables over the new base plus the changes
    /// committed since its snapshot, published at once (write lock held). References and asset
    /// counts are already current and are not touched.
    func rebaseTables() throws(CirrusError) {
        let schema = stateLock.withLock { publishedSchema }
        let snap = store.snapshot()
        var next = try baseTables(snap, schema: schema)
        let changes = snap.deltaChanges().map { c in
            RecordChange(
                owner: c.id.zoneID.ownerName, old: c.base.map { Self.apiForm($0.record) },
                new: c.current.map { Self.apiForm($0.record) })
        }
        for (owner, types) in Self.byTable(changes) {
            for (type, list) in types {
                let t = applying(list, to: next[owner]?[type], owner: owner, type: type, schema: schema)
                next[owner, default: [:]][type] = t
            }
        }
        stateLock.withLock {
            tables = next
            publishedVersion &+= 1
        }
    }

}

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
// Checkpoint: the store writes each changed table's delta as a new layer (merging layers
// tiered) and asks for the layer's index sections; the tables are then re-made over the new
// layers (a table whose layers did not change is reused). In the background (the usual case)
// that happens beside commits: the new tables are caught up with the commits made meanwhile
// (StoreSnapshot.changes(since:)) and only the manifest switch and the last few commits hold
// the write lock.

import CirrusFacade
import CirrusIO
import Foundation
import Indexes
import RecordLog
import RecordModel
import Synchronization

/// The façade's state saved with a checkpoint: binary (`encoded()`); the JSON of version 1,
/// which checkpoints written before hold, is still read.
struct CheckpointUserState: Codable, Equatable {
    static let version = 1
    var version = CheckpointUserState.version
    /// owner → target (API form) → records holding a deleteSelf reference to it.
    var backrefs: [String: [RecordID: Set<RecordID>]]
    var assetRefs: [String: Int]

    /// The first byte of the binary form (JSON begins with `{`).
    static let binaryTag: UInt8 = 2

    /// `u8 2`, varint owner count, per owner (sorted): string owner, varint target count, per
    /// target (sorted): record id, varint count, the referring record ids (sorted); then varint
    /// asset count, per asset (sorted by hash): string content hash, zigzag count. Canonical.
    func encoded() -> [UInt8] {
        var w = ByteWriter()
        w.u8(Self.binaryTag)
        w.varint(UInt64(backrefs.count))
        for (owner, targets) in backrefs.sorted(by: { compareUTF8($0.key, $1.key) < 0 }) {
            w.string(owner)
            w.varint(UInt64(targets.count))
            for (target, holders) in targets.sorted(by: { $0.key < $1.key }) {
                RecordCodec.encodeRecordID(target, into: &w)
                w.varint(UInt64(holders.count))
                for h in holders.sorted() { RecordCodec.encodeRecordID(h, into: &w) }
            }
        }
        w.varint(UInt64(assetRefs.count))
        for (hash, n) in assetRefs.sorted(by: { compareUTF8($0.key, $1.key) < 0 }) {
            w.string(hash)
            w.zigzag(Int64(n))
        }
        return w.bytes
    }

    /// Reads either form; a JSON state must be of this build's version.
    static func decode(_ bytes: [UInt8]) throws -> CheckpointUserState {
        guard bytes.first == binaryTag else {
            let u = try JSONDecoder().decode(CheckpointUserState.self, from: Data(bytes))
            guard u.version == version else {
                throw CirrusError(
                    .internalError,
                    "the checkpoint's façade state has version \(u.version); this build reads \(version)")
            }
            return u
        }
        return try bytes.withUnsafeBytes { buf throws(CodecError) in
            var r = ByteReader(buf, offset: 1)
            var backrefs: [String: [RecordID: Set<RecordID>]] = [:]
            for _ in 0..<(try r.length()) {
                let owner = try r.string()
                var targets: [RecordID: Set<RecordID>] = [:]
                for _ in 0..<(try r.length()) {
                    let target = try RecordCodec.decodeRecordID(&r)
                    var holders: Set<RecordID> = []
                    for _ in 0..<(try r.length()) { holders.insert(try RecordCodec.decodeRecordID(&r)) }
                    targets[target] = holders
                }
                backrefs[owner] = targets
            }
            var assetRefs: [String: Int] = [:]
            for _ in 0..<(try r.length()) {
                let hash = try r.string()
                assetRefs[hash] = Int(try r.zigzag())
            }
            guard r.isAtEnd else { throw CodecError("\(r.remaining) trailing bytes", offset: r.offset) }
            return CheckpointUserState(backrefs: backrefs, assetRefs: assetRefs)
        }
    }
}

extension ContainerCore {
    /// Builds the published tables from a store snapshot (at open). A stored record that does
    /// not decode fails the open, naming it (`cirrus repair` salvages the rest).
    func loadTables(_ snap: StoreSnapshot, schema: Schema) throws(CirrusError) {
        do {
            try loadTablesUnchecked(snap, schema: schema)
        } catch let e as CirrusError {
            throw e
        } catch {
            throw .unreadable(error)
        }
    }

    private func loadTablesUnchecked(_ snap: StoreSnapshot, schema: Schema) throws {
        guard snap.checkpointSequence > 0 else {
            // Never checkpointed: bulk-build every table from the replayed log.
            var grouped: [String: [String: [Record]]] = [:]
            try snap.forEachRecord { stored in
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
                let u = try CheckpointUserState.decode(bytes)
                backrefs = u.backrefs
                assetRefs = u.assetRefs
            } catch let e as CirrusError {
                throw e
            } catch {
                // Derived from the rows (reverse references, asset counts): rebuilt, never load-bearing.
                warn(
                    OpenWarning(
                        path: store.directory, offset: 0,
                        reason: "the checkpoint's façade state does not decode: \(error)",
                        consequence: "reverse references and asset counts are rebuilt from the rows"))
                try snap.forEachRecord { addRefs(owner: $0.record.recordID.zoneID.ownerName, Self.apiForm($0.record)) }
            }
        } else {
            // No saved state (a store compacted by an older tool): rebuild it from the rows.
            try snap.forEachRecord { addRefs(owner: $0.record.recordID.zoneID.ownerName, Self.apiForm($0.record)) }
        }
        let changes = try snap.deltaChanges().map { c in
            RecordChange(
                owner: c.id.zoneID.ownerName, old: c.base.map { Self.apiForm($0.record) },
                new: c.current.map { Self.apiForm($0.record) })
        }
        if !changes.isEmpty { apply(changes, newSchema: nil) }
    }

    /// The façade's state as the checkpoint's `user` bytes.
    func userStateBytes() -> [UInt8] { CheckpointUserState(backrefs: backrefs, assetRefs: assetRefs).encoded() }

    /// Writes a checkpoint and re-makes the tables over the new segments (write lock held).
    /// `raiseHorizon` also forgets deletions, as compaction does; the tables of `merge` end in
    /// one layer each.
    @discardableResult
    func checkpointHoldingLock(
        raiseHorizon: Bool = false, merge: Set<TableKey> = []
    ) throws(CirrusError) -> CheckpointReport {
        if let e = checkpointError {
            checkpointError = nil
            throw e
        }
        let schema = stateLock.withLock { publishedSchema }
        let report: CheckpointReport
        do {
            report = try store.checkpoint(
                userState: userStateBytes(), raiseHorizon: raiseHorizon, rewrite: rewriteAtCheckpoint, merge: merge,
                sections: Self.sectionEncoder(schema))
        } catch {
            throw CirrusError.storage(error, "the checkpoint")
        }
        rewriteAtCheckpoint = []
        try remakeTables(schema: schema)
        return report
    }

    /// A table over each of the snapshot's base tables, with an empty delta (nothing decoded); a
    /// table whose layers and schema did not change since the last call is reused.
    ///
    /// A table with an index its segments lack (added to the schema since they were written, or
    /// damaged) has it built from its rows, at every open until the segments hold it: such a table
    /// is rewritten at the next checkpoint, which `close()` then writes.
    func baseTables(_ snap: StoreSnapshot, schema: Schema) throws(CirrusError) -> [String: [String: TypeTable]] {
        let (out, made) = Self.baseTables(
            Array(snap.base.values), schema: schema, reusing: baseOnlyTables, options: options, warnings: indexWarnings)
        baseOnlyTables = made
        if !options.readOnly {
            for (key, t) in made where !t.parts.indexes.rebuilt.isEmpty { rewriteAtCheckpoint.insert(key) }
        }
        return out
    }

    /// Tables over `base` with empty deltas, reusing those of `reusing` whose layers and schema
    /// are the same; also returns them by key (the next call's `reusing`). Touches no state but
    /// `warnings`, which gets the damaged index sections of the tables made (read-only with
    /// `indexesOnFirstUse`: when their indexes are first used).
    static func baseTables(
        _ base: [BaseTable], schema: Schema, reusing: [TableKey: TypeTable], options: ContainerOptions,
        warnings: IndexWarnings
    ) -> (tables: [String: [String: TypeTable]], byKey: [TableKey: TypeTable]) {
        var out: [String: [String: TypeTable]] = [:]
        var made: [TableKey: TypeTable] = [:]
        for b in base {
            let key = b.key
            let typeSchema = schema.recordTypes[key.recordType]
            let table: TypeTable
            if let old = reusing[key], old.parts.base?.files == b.files, old.parts.schema == typeSchema {
                table = old
            } else {
                table = TypeTable(
                    base: b, schema: typeSchema, nodeSize: options.indexNodeSize, cacheSize: options.recordCacheSize,
                    readMergeBudget: options.readOnly ? nil : options.readMergeBudget,
                    deferIndexes: options.readOnly && options.indexesOnFirstUse, warnings: warnings)
            }
            made[key] = table
            out[key.owner, default: [:]][key.recordType] = table
        }
        return (out, made)
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
    /// another thread, new tables built over them and caught up beside commits, then the switch
    /// and the last few commits under the write lock. The tables of `merge` end in one layer each.
    func startBackgroundCheckpoint(merge: Set<TableKey> = []) throws(CirrusError) {
        guard !checkpointCancel.isSet else { return }  // closing
        let job: CheckpointJob
        do { job = try store.beginCheckpoint() } catch {
            throw CirrusError.storage(error, "the checkpoint")
        }
        let user = userStateBytes()
        let schema = stateLock.withLock { publishedSchema }
        let rewrite = rewriteAtCheckpoint
        let reusable = baseOnlyTables
        rewriteAtCheckpoint = []
        checkpointRunning = true
        checkpoints.enter()
        let cancel = checkpointCancel
        let thread = Thread { [self] in
            defer { checkpoints.leave() }
            let written = Result { () throws(LogError) in
                try store.writeCheckpoint(
                    job, userState: user, rewrite: rewrite, merge: merge,
                    sections: Self.sectionEncoder(schema, cancel: cancel), isCancelled: { cancel.isSet })
            }
            // The new tables are built and caught up with the commits made meanwhile here,
            // beside commits; the write lock is held only for the switch and the last few.
            var pre: PreparedRebase?
            if case .success(let p) = written {
                // A failure here leaves the whole rebase to the lock, as before.
                pre = try? prepareRebase(p, since: job.snapshot, schema: schema, reusing: reusable)
            }
            writeLock.withLock {
                checkpointRunning = false
                var installed = false
                if case .failure = written, cancel.isSet {
                    // Cancelled by close: its files are gone, the log keeps its changes.
                    rewriteAtCheckpoint.formUnion(rewrite)
                    return
                }
                do {
                    let prepared = try written.get()
                    try store.installCheckpoint(prepared, job: job)
                    installed = true
                    let schema = stateLock.withLock { publishedSchema }
                    if let pre, pre.schema == schema {
                        try finishRebase(pre)
                    } else {
                        // The schema changed meanwhile (or building failed): all under the lock.
                        try finishRebase(
                            try prepareRebase(
                                prepared, since: job.snapshot, schema: schema, reusing: baseOnlyTables, rounds: 0))
                    }
                    checkpointError = nil
                } catch {
                    // The commits are safe in the log; the next checkpoint tries again, and the
                    // failure is reported by close() and checkpoint().
                    rewriteAtCheckpoint.formUnion(rewrite)
                    checkpointError = CirrusError(.internalError, "a background checkpoint failed: \(error)")
                    options.logger.error(
                        "\(checkpointError.map { "\($0)" } ?? "")", metadata: ["container": .string(directory)])
                    // Installed but not published (a record met on the way did not decode): the
                    // tables readers see are the old ones; writes stop until the container is
                    // reopened, which builds them from the store.
                    if installed { writePoison = checkpointError }
                }
            }
        }
        thread.name = "cirrus-checkpoint"
        thread.start()
    }

    /// Waits until no background checkpoint is running (call without the write lock).
    func waitForCheckpoints() { checkpoints.wait() }

    /// Cancels a background checkpoint still writing its files (it stops within a few thousand
    /// rows or one index section; one past its writing finishes) and waits for it; no
    /// checkpoint starts afterwards. For close.
    func cancelCheckpoints() {
        checkpointCancel.set()
        checkpoints.wait()
    }

    /// Tables over a background checkpoint's new base, with the changes committed since the
    /// checkpoint's snapshot applied (caught up a few times while commits go on), built without
    /// the write lock: only `finishRebase` needs it.
    struct PreparedRebase {
        var tables: [String: [String: TypeTable]]
        let byKey: [TableKey: TypeTable]
        /// The store state the tables are caught up to.
        var caughtUp: StoreSnapshot
        let schema: Schema
        /// Changes applied so far.
        var applied = 0
    }

    /// `rounds` catch-ups at most, stopping early once one applies fewer than 256 changes (the
    /// rest is left to `finishRebase`).
    func prepareRebase(
        _ p: RecordStore.PreparedCheckpoint, since snapshot: StoreSnapshot, schema: Schema,
        reusing: [TableKey: TypeTable], rounds: Int = 4
    ) throws(CirrusError) -> PreparedRebase {
        let (tables, byKey) = Self.baseTables(
            p.baseTables, schema: schema, reusing: reusing, options: options, warnings: indexWarnings)
        var pre = PreparedRebase(tables: tables, byKey: byKey, caughtUp: snapshot, schema: schema)
        for _ in 0..<rounds {
            if try catchUp(&pre, to: store.snapshot()) < 256 { break }
        }
        return pre
    }

    /// Applies to `pre`'s tables the changes from its state to `now`; returns how many.
    @discardableResult
    func catchUp(_ pre: inout PreparedRebase, to now: StoreSnapshot) throws(CirrusError) -> Int {
        let changed: [(id: RecordID, old: StoredRecord?, new: StoredRecord?)]
        do { changed = try now.changes(since: pre.caughtUp) } catch { throw .unreadable(error) }
        let changes = changed.map { c in
            RecordChange(
                owner: c.id.zoneID.ownerName, old: c.old.map { Self.apiForm($0.record) },
                new: c.new.map { Self.apiForm($0.record) })
        }
        for (owner, types) in Self.byTable(changes) {
            for (type, list) in types {
                pre.tables[owner, default: [:]][type] = applying(
                    list, to: pre.tables[owner]?[type], owner: owner, type: type, schema: pre.schema)
            }
        }
        pre.caughtUp = now
        pre.applied += changes.count
        return changes.count
    }

    /// After a background checkpoint's switch (write lock held): the prepared tables, caught up
    /// with the last commits, are published.
    func finishRebase(_ pre: PreparedRebase) throws(CirrusError) {
        var pre = pre
        let beside = pre.applied
        let last = try catchUp(&pre, to: store.snapshot())
        rebaseChanges.besideCommits += beside
        rebaseChanges.underLock += last
        baseOnlyTables = pre.byKey
        stateLock.withLock {
            tables = pre.tables
            publishedVersion &+= 1
        }
    }
}

/// A flag a background checkpoint reads while it writes: set (by close), the checkpoint stops and
/// removes its files. Set once, never cleared.
final class CheckpointCancel: Sendable {
    private let value = Mutex(false)

    /// Whether cancellation was asked for.
    var isSet: Bool { value.withLock { $0 } }

    /// Asks running and later checkpoints to stop.
    func set() { value.withLock { $0 = true } }

    /// What a cancelled checkpoint's section encoder throws.
    struct Cancelled: Error, CustomStringConvertible {
        var description: String { "the checkpoint was cancelled" }
    }
}

// ContainerCore: the shared state behind a Container and its Database handles — the record
// store, the schema, per-database row tables and indexes, reverse deleteSelf references, asset
// reference counts, subscriptions — and the single write path.
//
// Concurrency: `writeLock` serializes every write (read current versions, check tags and
// grants, commit to the log, apply to tables, publish, notify), so the log, the tables and the
// reverse references always agree once the lock is released. `stateLock` guards only what
// readers take: the published tables and schema. A writer builds new table values from copies
// (copy-on-write: it copies only touched pages/shards) and publishes them in one locked
// assignment, so a reader never sees half a commit and never waits for a commit's work.
//
// Keys: records are stored under their zone's *storage owner* — `__defaultOwner__` for the
// public database, the user record name for a private database — so one log holds every
// database of the container and no id of one database can name a record of another. Records
// handed out use the API form (owner `__defaultOwner__`).

import CirrusFacade
import CirrusIO
import Foundation
import Indexes
import Logging
import RecordLog
import RecordModel

/// One committed change to one record, in API form.
struct RecordChange: Sendable {
    var owner: String
    var old: Record?
    var new: Record?
}

final class ContainerCore: @unchecked Sendable {
    let directory: String
    let storeDirectory: String
    let environment: Environment
    let options: ContainerOptions
    let store: RecordStore

    let writeLock = NSLock()
    let stateLock = NSLock()
    // Guarded by stateLock (written only while also holding writeLock):
    var tables: [String: [String: TypeTable]] = [:]
    var publishedSchema: Schema {
        didSet { publishedWorldReadable = Access.worldReadable(publishedSchema) }
    }
    /// Whether everyone may read each record type of `publishedSchema` (`Access.worldReadable`),
    /// published with it for fetches by id.
    private(set) var publishedWorldReadable: [String: Bool]
    /// Bumped (under `stateLock`) every time tables or schema are published: two snapshots with
    /// the same version see the same data. Query continuations are valid only within one version.
    var publishedVersion: UInt64 = 0
    /// Live states of nearest-first streams between pages (EmbeddedDatabase+Query).
    let continuations = ContinuationCache()
    /// Syntax trees of recently parsed predicate texts (PredicateCache.swift).
    let predicates = PredicateCache()
    /// Plans of recent queries, each valid at the version it was made at (PlanCache.swift).
    let plans = PlanCache()
    var subscribers: [Int: Subscriber] = [:]
    var nextSubscriberKey = 0
    var subscriptions: [String: [String: Subscription]] = [:]  // owner → id → subscription
    var secrets: [String: [UInt8]] = [:]
    /// The error of a subscriptions write that was not a request of its own (SubscriptionStore).
    var subscriptionsUnsaved: CirrusError?
    /// Databases whose cursor secret is not on disk (`cursorSecret(owner:)`).
    var transientSecrets: Set<String> = []
    // Guarded by writeLock:
    /// owner → target (API form) → records holding a deleteSelf reference to it.
    var backrefs: [String: [RecordID: Set<RecordID>]] = [:]
    var assetRefs: [String: Int] = [:]
    /// Assets whose last reference went away, removed once that is durable.
    var unreferencedAssets = Set<String>()
    /// Assets stored by `storeAsset` and not yet referenced by a commit (stateLock): count of
    /// stores not yet matched by a committed reference. Their files are not removed until then
    /// (or until close; an asset never saved is removed at the next open).
    var assetPins: [String: Int] = [:]

    /// The bulk load under way (guarded by writeLock), see Container+Transfer.
    var bulk: BulkImportState?
    /// A background checkpoint is writing segments (guarded by writeLock); `checkpoints` counts
    /// running ones for close; the last one's failure waits here to be reported.
    var checkpointRunning = false
    let checkpoints = DispatchGroup()
    /// Set by close: a background checkpoint still writing stops (ContainerCore+Checkpoint.swift).
    let checkpointCancel = CheckpointCancel()
    var checkpointError: CirrusError?
    /// Set when a checkpoint was installed but its tables could not be published: every later
    /// write fails with it (the container must be reopened). Guarded by writeLock.
    var writePoison: CirrusError?
    /// Read-triggered merges started since open (stateLock).
    var readMerges = 0
    /// Changes a background checkpoint's rebase applied beside commits / under the write lock
    /// (tests check that the first path is taken).
    var rebaseChanges = (besideCommits: 0, underLock: 0)
    /// Tables whose schema changed since the last checkpoint: the next one rewrites them.
    var rewriteAtCheckpoint = Set<TableKey>()
    /// The tables last made over the base, with an empty delta (guarded by writeLock): a
    /// checkpoint that leaves a table's layers and schema as they were reuses its table instead
    /// of mapping its indexes and marking its dead rows again.
    var baseOnlyTables: [TableKey: TypeTable] = [:]

    /// The container's user identities (`DIR/users.json`, shared by both environments).
    let users: UserDirectory
    /// Damaged derived data the façade met at open and rebuilt (beside the store's own
    /// `openReport.warnings`); written only while opening.
    private(set) var openWarnings: [OpenWarning] = []
    /// Damaged index sections, found whenever a table's indexes are made (at open, or at their
    /// first use when deferred).
    let indexWarnings: IndexWarnings
    /// Saved subscriptions dropped at open because they no longer check, and those kept
    /// (`ContainerOptions.dropsInvalidSubscriptions`, for repair); nil when none was dropped.
    var droppedSubscriptions: (count: Int, kept: Int)?

    init(directory: String, environment: Environment, options: ContainerOptions, store: RecordStore, schema: Schema) {
        users = UserDirectory(directory: directory, fileSystem: options.fileSystem, clock: options.clock)
        self.directory = directory
        self.storeDirectory = joinPath(directory, environment.rawValue)
        self.environment = environment
        self.options = options
        self.store = store
        self.publishedSchema = schema
        self.publishedWorldReadable = Access.worldReadable(schema)
        indexWarnings = IndexWarnings { [store, logger = options.logger, directory] w in
            store.noteDamaged(w)
            Self.log(w, logger, directory: directory, environment: environment)
        }
    }

    static func open(
        directory: String, environment: Environment, options: ContainerOptions
    ) throws(CirrusError) -> ContainerCore {
        let storeDir = joinPath(directory, environment.rawValue)
        if options.fileSystem.exists(joinPath(directory, Manifest.fileName)) {
            throw CirrusError(
                .internalError,
                "\(directory) is a bare record store, not a container: move its files into \(storeDir) (see docs/database.md)"
            )
        }
        let store: RecordStore
        do {
            if !options.readOnly { try options.fileSystem.createDirectory(directory) }
            var storeOptions = RecordStoreOptions(
                durability: options.durability, readOnly: options.readOnly, clock: options.clock)
            // Index segments are opened with the indexes they hold: at first use when those are.
            storeOptions.indexSegmentsOnFirstUse = options.readOnly && options.indexesOnFirstUse
            store = try RecordStore.open(directory: storeDir, fileSystem: options.fileSystem, options: storeOptions)
        } catch {
            throw CirrusError(.internalError, "cannot open container \(directory) (\(environment.rawValue)): \(error)")
        }
        let snap = store.snapshot()
        var schema = snap.schema ?? Schema(environment: environment)
        schema.environment = environment
        if schema.recordTypes[Schema.usersRecordType] == nil {
            schema.recordTypes[Schema.usersRecordType] = RecordTypeSchema(name: Schema.usersRecordType)
        }
        let core = ContainerCore(
            directory: directory, environment: environment, options: options, store: store, schema: schema)
        for w in store.openReport.warnings { core.log(w) }
        do throws(CirrusError) {
            try core.loadSecrets()
            try core.loadTables(snap, schema: schema)
            if !options.readOnly { core.sweepAssets() }
            try core.loadSubscriptions()
        } catch {
            try? store.close()  // the load's error is the one to report; the store is dropped
            throw error
        }
        core.checkpointLeftTail()
        return core
    }

    /// After a writable open with a bounded close (`closeCheckpointLimit`): a delta larger than
    /// close checkpoints (left by a bounded close, or by a process that ended without closing),
    /// or a table whose segments lack an index of its schema, is checkpointed in the background,
    /// so that the open after this one maps it instead of replaying or rebuilding it again. A
    /// checkpoint that cannot start is logged: the tail stays in the log and is replayed again.
    func checkpointLeftTail() {
        guard !options.readOnly, options.backgroundCheckpoints, let limit = options.closeCheckpointLimit,
            store.deltaCount > limit || !rewriteAtCheckpoint.isEmpty
        else { return }
        writeLock.withLock {
            do { try startBackgroundCheckpoint() } catch {
                options.logger.warning(
                    "the log's tail was not checkpointed: \(error)", metadata: ["container": .string(directory)])
            }
        }
    }

    /// Records damaged derived data met while opening, and logs it.
    func warn(_ w: OpenWarning) {
        openWarnings.append(w)
        store.noteDamaged(w)
        log(w)
    }

    func log(_ w: OpenWarning) { Self.log(w, options.logger, directory: directory, environment: environment) }

    static func log(_ w: OpenWarning, _ logger: Logger, directory: String, environment: Environment) {
        logger.warning(
            "\(w.description)",
            metadata: ["container": .string(directory), "environment": .string(environment.rawValue)])
    }

    /// The live rows of the tables the next checkpoint rewrites whole (`rewriteAtCheckpoint`).
    func rowsToRewrite() -> Int {
        let keys = rewriteAtCheckpoint
        guard !keys.isEmpty else { return 0 }
        return stateLock.withLock { keys.reduce(0) { $0 + (tables[$1.owner]?[$1.recordType]?.liveCount ?? 0) } }
    }

    // MARK: forms

    static func apiForm(_ r: Record) -> Record {
        if r.recordID.zoneID.ownerName == ZoneID.defaultOwnerName { return r }
        var r = r
        r.recordID.zoneID.ownerName = ZoneID.defaultOwnerName
        return r
    }

    static func storageID(_ id: RecordID, owner: String) -> RecordID {
        RecordID(recordName: id.recordName, zoneID: ZoneID(zoneName: id.zoneID.zoneName, ownerName: owner))
    }

    static func apiID(_ id: RecordID) -> RecordID {
        RecordID(recordName: id.recordName, zoneID: ZoneID(zoneName: id.zoneID.zoneName))
    }

    // MARK: reading

    var schema: Schema { stateLock.withLock { publishedSchema } }

    /// The published schema and which of its types everyone may read, read together.
    var schemaAndWorldReadable: (Schema, [String: Bool]) {
        stateLock.withLock { (publishedSchema, publishedWorldReadable) }
    }

    func table(owner: String, type: String) -> (TypeTable?, Schema) {
        stateLock.withLock { (tables[owner]?[type], publishedSchema) }
    }

    /// A table and the version it was published with, read together, and — only when there is
    /// no table (a table carries its own) — the type's published schema. (Copying the whole
    /// schema out, then the type's out of it, cost a query a dozen retains it did not use.)
    /// What a query reads before it runs, under one lock: the published schema, whether
    /// everyone may read `type`, and `versionedTable(owner:type:)`.
    func queryState(
        owner: String, type: String
    ) -> (schema: Schema, everyone: Bool, table: TypeTable?, typeSchema: RecordTypeSchema?, version: UInt64) {
        stateLock.withLock {
            let table = tables[owner]?[type]
            return (
                publishedSchema, publishedWorldReadable[type] ?? false, table,
                table == nil ? publishedSchema.recordTypes[type] : nil, publishedVersion
            )
        }
    }

    func versionedTable(owner: String, type: String) -> (TypeTable?, RecordTypeSchema?, UInt64) {
        stateLock.withLock {
            let table = tables[owner]?[type]
            return (table, table == nil ? publishedSchema.recordTypes[type] : nil, publishedVersion)
        }
    }

    /// The live record (API form) of a database, or nil.
    func current(owner: String, _ id: RecordID) throws(CirrusError) -> Record? {
        // The published type tables hold every live record already decoded (API form): a few
        // dictionary lookups instead of decoding the log's stored bytes on every fetch.
        let key = id.zoneID.ownerName == ZoneID.defaultOwnerName ? id : Self.apiID(id)
        if let types = stateLock.withLock({ tables[owner] }) {
            // Binding a table costs one retain: its parts are behind one reference.
            for t in types.values {
                // A table in several layers is charged for them (ReadMerge.swift): the lookup is timed.
                let meter = t.mergeMeter
                let began = meter == nil ? 0 : DispatchTime.now().uptimeNanoseconds
                if let row = t.row(for: key), let r = t.record(row) {
                    if let meter, meter.charge(elapsedNanoseconds: DispatchTime.now().uptimeNanoseconds &- began) {
                        startReadMerge(meter)
                    }
                    return r
                }
            }
        }
        do {
            return try store.record(Self.storageID(id, owner: owner)).map { Self.apiForm($0.record) }
        } catch {
            throw CirrusError.unreadable(error)
        }
    }

    /// Custom zones of a database (storage form) with their creation sequence.
    func zones(owner: String) -> [ZoneID: UInt64] {
        store.snapshot().zones.filter { $0.key.ownerName == owner }
    }

    func zoneExists(owner: String, _ z: ZoneID) -> Bool {
        let key = ZoneID(zoneName: z.zoneName, ownerName: owner)
        return z.isDefaultZone || store.snapshot().zones[key] != nil || bulk?.zones.contains(key) == true
    }

    // MARK: writing (writeLock held by the caller)

    /// Runs `body` holding the write lock (a synchronous function, so async callers may use it).
    func withWriteLock<T>(_ body: () throws(CirrusError) -> T) throws(CirrusError) -> T {
        writeLock.lock()
        defer { writeLock.unlock() }
        return try body()
    }

    /// Commits `ops` to the log, then applies `changes` (and a new schema) to the tables,
    /// publishes them and notifies subscribers.
    func commitHoldingLock(_ ops: [LogOperation], changes: [RecordChange], newSchema: Schema?) throws(CirrusError) {
        var ops = ops
        if let newSchema, !ops.contains(where: { if case .setSchema = $0 { true } else { false } }) {
            // The schema change is part of the same atomic batch as the records that caused it.
            ops.insert(.setSchema(newSchema), at: 0)
        }
        if ops.isEmpty { return }
        if let writePoison {
            throw CirrusError(.internalError, "the container must be reopened: \(writePoison.message)")
        }
        // A database that holds data has its cursor secret on disk (`ensureSecrets`).
        var owners = Set(changes.map(\.owner))
        for op in ops {
            if case .createZone(let z) = op { owners.insert(z.ownerName) }
        }
        try ensureSecrets(owners)
        do {
            try store.commit(ops, validate: false)
        } catch {
            throw CirrusError.storage(error, "the commit")
        }
        apply(changes, newSchema: newSchema)
        notify(changes)
        // The commit is done whatever the checkpoint does: a checkpoint that cannot start (a full
        // disk) is logged and tried again at the next commit; the log keeps everything meanwhile.
        do { try checkpointIfDue() } catch {
            options.logger.error("\(error)", metadata: ["container": .string(directory)])
        }
    }

    func apply(_ changes: [RecordChange], newSchema: Schema?) {
        let (oldTables, oldSchema) = stateLock.withLock { (tables, publishedSchema) }
        let schema = newSchema ?? oldSchema
        var dropped: [String: Int] = [:]
        for c in changes {
            if let o = c.old { removeRefs(owner: c.owner, o, dropped: &dropped) }
            if let n = c.new { addRefs(owner: c.owner, n) }
        }
        let grouped = Self.byTable(changes)
        var updated: [(String, String, TypeTable)] = []
        for (owner, types) in grouped {
            for (type, list) in types {
                var t = applying(list, to: oldTables[owner]?[type], owner: owner, type: type, schema: schema)
                if t.adopt(schema: schema.recordTypes[type]) {
                    rewriteAtCheckpoint.insert(TableKey(owner: owner, recordType: type))
                }
                updated.append((owner, type, t))
            }
        }
        if let newSchema, newSchema != oldSchema {
            // A type whose schema changed is rebuilt in every database that has it.
            let touched = Set(updated.map { "\($0.0)\u{0}\($0.1)" })
            for (owner, types) in oldTables {
                for (type, t) in types
                where !touched.contains("\(owner)\u{0}\(type)") && t.parts.schema != newSchema.recordTypes[type] {
                    var t = t
                    // A grant change alone keeps the rows and indexes (the table is not rewritten).
                    if t.adopt(schema: newSchema.recordTypes[type]) {
                        rewriteAtCheckpoint.insert(TableKey(owner: owner, recordType: type))
                    }
                    updated.append((owner, type, t))
                }
            }
        }
        stateLock.withLock {
            for (owner, type, t) in updated { tables[owner, default: [:]][type] = t }
            if let newSchema { publishedSchema = newSchema }
            publishedVersion &+= 1
        }
        for (hash, _) in dropped where (assetRefs[hash] ?? 0) == 0 {
            assetRefs[hash] = nil
            unreferencedAssets.insert(hash)
        }
        if case .everyCommit = options.durability { removeUnreferencedAssets() }
    }

    /// `list` (one table's changes from `byTable`) applied to `table`, or to a new empty table of
    /// the type when the database has none yet.
    func applying(
        _ list: [(old: Record?, new: Record?)], to table: TypeTable?, owner: String, type: String, schema: Schema
    ) -> TypeTable {
        var t =
            table
            ?? TypeTable(
                recordType: type, owner: owner, schema: schema.recordTypes[type], records: [],
                nodeSize: options.indexNodeSize)
        t.apply(list)
        return t
    }

    /// Changes grouped by database and record type (a change of type is a deletion from the old
    /// type's table and an insertion into the new one's).
    static func byTable(_ changes: [RecordChange]) -> [String: [String: [(old: Record?, new: Record?)]]] {
        var grouped: [String: [String: [(old: Record?, new: Record?)]]] = [:]
        for c in changes {
            let type = c.new?.recordType ?? c.old?.recordType ?? ""
            if let o = c.old, let n = c.new, o.recordType != n.recordType {
                grouped[c.owner, default: [:]][o.recordType, default: []].append((o, nil))
                grouped[c.owner, default: [:]][n.recordType, default: []].append((nil, n))
            } else {
                grouped[c.owner, default: [:]][type, default: []].append((c.old, c.new))
            }
        }
        return grouped
    }

    /// Deletes the files of assets no live record refers to. With `.everyCommit` right after
    /// the commit; otherwise only once the deletions are durable (sync, close, compaction), so
    /// a crash can never bring back a record whose asset file is gone.
    func removeUnreferencedAssets(ignoringPins: Bool = false) {
        var kept = Set<String>()
        for hash in unreferencedAssets where (assetRefs[hash] ?? 0) == 0 {
            // Checked and removed under stateLock, the lock `storeAsset` pins under: either the pin
            // comes first and the file stays, or the removal does and storeAsset writes it again.
            stateLock.withLock {
                if !ignoringPins, (assetPins[hash] ?? 0) > 0 {
                    kept.insert(hash)
                    return
                }
                // An asset file that cannot be removed now is swept at the next writable open.
                try? options.fileSystem.remove(store.assetPath(hash))
            }
        }
        unreferencedAssets = kept
    }

    func addRefs(owner: String, _ r: Record) {
        for v in r.fields.values {
            v.forEachElement { e in
                switch e {
                case .reference(let ref) where ref.action == .deleteSelf:
                    backrefs[owner, default: [:]][Self.apiID(ref.recordID), default: []].insert(r.recordID)
                case .asset(let a):
                    assetRefs[a.contentHash, default: 0] += 1
                    stateLock.withLock {
                        if let n = assetPins[a.contentHash] { assetPins[a.contentHash] = n > 1 ? n - 1 : nil }
                    }
                default: break
                }
            }
        }
    }

    func removeRefs(owner: String, _ r: Record, dropped: inout [String: Int]) {
        for v in r.fields.values {
            v.forEachElement { e in
                switch e {
                case .reference(let ref) where ref.action == .deleteSelf:
                    let t = Self.apiID(ref.recordID)
                    backrefs[owner]?[t]?.remove(r.recordID)
                    if backrefs[owner]?[t]?.isEmpty == true { backrefs[owner]?[t] = nil }
                case .asset(let a):
                    assetRefs[a.contentHash, default: 0] -= 1
                    dropped[a.contentHash, default: 0] += 1
                default: break
                }
            }
        }
    }

    /// Removes asset files no live record refers to (left by a crash between storing an asset
    /// and committing its record, or by deletions before the last close).
    func sweepAssets() {
        let fs = options.fileSystem
        let root = joinPath(storeDirectory, "assets")
        // Best effort: what cannot be listed or removed now is tried again at the next open.
        guard fs.exists(root), let subs = try? fs.list(root) else { return }
        for sub in subs {
            let dir = joinPath(root, sub)
            for name in (try? fs.list(dir)) ?? [] where name.count == 64 && (assetRefs[name] ?? 0) == 0 {
                try? fs.remove(joinPath(dir, name))
            }
        }
    }

    // MARK: cursor secrets

    var secretsPath: String { joinPath(storeDirectory, "cursor-secrets.json") }

    /// Reads the cursor secrets. A missing file means none yet; an unreadable one fails the
    /// open (every cursor issued so far would otherwise stop being valid, silently).
    /// Reads the cursor secrets. A damaged file costs only the cursors issued so far (they fail
    /// as stale): the open goes on with new secrets and warns; a writable open keeps the damaged
    /// file under `damaged/` (a new one is written with the next commit), a read-only one
    /// leaves it.
    func loadSecrets() throws(CirrusError) {
        let path = secretsPath
        guard options.fileSystem.exists(path) else { return }
        let bytes: [UInt8]
        do { bytes = try options.fileSystem.read(path) } catch {
            throw CirrusError(.internalError, "cannot read \(path): \(error)")
        }
        do {
            secrets = try Self.decodeSecrets(bytes)
        } catch {
            secrets = [:]
            var consequence = "cursors issued before can no longer be resumed (they fail as stale)"
            if !options.readOnly {
                do {
                    _ = try RecordStore.keepDamagedFiles(
                        [("cursor-secrets.json", "damaged: \(error)")], in: storeDirectory,
                        fileSystem: options.fileSystem,
                        clock: options.clock, title: "Cursor secrets that did not read (new ones replace them):")
                    try options.fileSystem.remove(path)
                    consequence += "; the damaged file is kept under damaged/"
                } catch {
                    throw CirrusError(.internalError, "\(path) is damaged and cannot be set aside: \(error)")
                }
            }
            warn(OpenWarning(path: path, offset: 0, reason: "does not read: \(error)", consequence: consequence))
        }
    }

    /// `cursor-secrets.json`: `{"owner": [32 numbers 0…255], …}` (what `JSONEncoder` writes for
    /// `[String: [UInt8]]`), read with the record model's JSON reader — at every open, where
    /// Codable's first use in a process costs more than the rest of reading the file.
    static func decodeSecrets(_ bytes: [UInt8]) throws -> [String: [UInt8]] {
        let value = try bytes.withUnsafeBufferPointer { buf throws(JSONError) in try JSONValue.parse(bytes: buf) }
        guard case .object(let members) = value else { throw CirrusError(.internalError, "not a JSON object") }
        var secrets: [String: [UInt8]] = [:]
        for (owner, v) in members {
            guard case .array(let items) = v, items.count == 32 else {
                throw CirrusError(.internalError, "the secret of \(owner) is not 32 bytes")
            }
            secrets[owner] = try items.map { item in
                guard case .integer(let n) = item, let b = UInt8(exactly: n) else {
                    throw CirrusError(.internalError, "the secret of \(owner) holds a value that is not a byte")
                }
                return b
            }
        }
        return secrets
    }

    /// The database's cursor secret. Every database that holds data got its secret, on disk,
    /// before its first commit (`ensureSecrets`); one never written to (nothing to page through)
    /// gets a secret for this process only.
    func cursorSecret(owner: String) -> [UInt8] {
        stateLock.withLock {
            if let s = secrets[owner] { return s }
            let s = options.random.bytes(32)
            transientSecrets.insert(owner)
            secrets[owner] = s
            return s
        }
    }

    /// Makes sure each database of `owners` has its cursor secret on disk, before a commit
    /// writes to it (write lock held), so a later opening — read-only `cirrus query` among them —
    /// signs and checks cursors with the same secret. A failed write fails the commit.
    func ensureSecrets(_ owners: Set<String>) throws(CirrusError) {
        if options.readOnly { return }
        let all: [String: [UInt8]]? = stateLock.withLock {
            let missing = owners.filter { secrets[$0] == nil || transientSecrets.contains($0) }
            if missing.isEmpty { return nil }
            for o in missing where secrets[o] == nil { secrets[o] = options.random.bytes(32) }
            return secrets.filter { !transientSecrets.contains($0.key) || missing.contains($0.key) }
        }
        guard let all else { return }
        do {
            try options.fileSystem.writeAtomically(secretsPath, Array(try JSONEncoder().encode(all)))
        } catch {
            throw CirrusError(.internalError, "cannot write \(secretsPath): \(error)")
        }
        stateLock.withLock { transientSecrets.subtract(owners) }
    }
}

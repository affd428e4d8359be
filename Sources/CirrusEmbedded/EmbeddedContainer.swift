// EmbeddedContainer: the embedded engine behind a `Container` — a container directory: log,
// segments, Cirrus's own indexes, planner and executor (ContainerCore) — as the façade's
// `ContainerBackend`; and what only this engine offers, as extensions of `Container` and
// `Database`: `Container.open(at:)`, checkpoints, compaction, sync, the open report, invariant
// checks, the synchronous schema and role calls. Import, reset, repair, statistics and user
// accounts: Container+Transfer, +Reset, +Repair, +Statistics, +Users.

import CirrusFacade
import CirrusIO
import Indexes
import RecordLog
import RecordModel

/// A container directory as an engine of the façade (see the file header).
final class EmbeddedContainer: ContainerBackend {
    let core: ContainerCore

    init(core: ContainerCore) { self.core = core }

    var engineName: String { "embedded" }
    var location: String { core.directory }
    var environment: Environment { core.environment }
    var schema: Schema { core.schema }

    func database(_ scope: Database.Scope, as identity: Identity) -> any DatabaseBackend {
        EmbeddedDatabase(core: core, scope: scope, identity: identity)
    }

    /// Syncs and closes the log; later writes fail with internalError. A checkpoint first when
    /// the delta is large enough to slow the next open down (a few changes stay in the log:
    /// replaying them is cheaper than rewriting their tables) or a table's segments lack an index
    /// of its schema (it would be built from every row at each open). Bounded
    /// (`ContainerOptions.closeCheckpointLimit` set): a background checkpoint still writing is
    /// cancelled, and the checkpoint is written only when the rows it would write — the delta
    /// and the tables to rewrite — are within the limit; more is left to the next writable open,
    /// which checkpoints it in the background. Otherwise close waits for a running background
    /// checkpoint and writes its own whatever its size.
    func close() throws(CirrusError) {
        let limit = core.options.closeCheckpointLimit
        if limit != nil { core.cancelCheckpoints() } else { core.waitForCheckpoints() }
        core.writeLock.lock()
        defer { core.writeLock.unlock() }
        var checkpointError: CirrusError?
        let delta = core.store.deltaCount
        let worthIt = delta >= min(core.options.checkpointThreshold, 1000) || !core.rewriteAtCheckpoint.isEmpty
        if !core.options.readOnly, !core.store.isClosed, worthIt,
            limit.map({ delta + core.rowsToRewrite() <= $0 }) ?? true
        {
            do { try core.checkpointHoldingLock() } catch { checkpointError = error }
        }
        defer { core.removeUnreferencedAssets(ignoringPins: true) }  // no save can follow a close
        if checkpointError == nil, !core.options.readOnly, core.stateLock.withLock({ core.subscriptionsUnsaved }) != nil
        {
            do { try core.persistSubscriptions() } catch { checkpointError = error }  // the last try
        }
        if let checkpointError {
            try? core.store.close()  // the checkpoint's error is the one to report
            throw checkpointError
        }
        do {
            try core.store.close()
        } catch {
            throw CirrusError(.internalError, "close failed: \(error)")
        }
    }

    /// `Container.fetchUserAccounts()`: the container's `users.json`, read in-process.
    func userAccounts() async throws(CirrusError) -> [UserAccount] {
        try Container.userAccounts(in: core.users)
    }

    /// `Container.storeUserAccount(_:)`.
    func saveUserAccount(_ account: UserAccount) async throws(CirrusError) -> UserAccount {
        try Container.saveUserAccount(account, in: core.users)
    }

    /// `Container.changeDiscoverability(_:ofUser:)`.
    func setDiscoverability(_ status: DiscoverabilityStatus, ofUser user: String) async throws(CirrusError) {
        try Container.setDiscoverability(status, ofUser: user, in: core.users)
    }

    /// `Container.applySchema(_:)`: checked again against the current schema under the write lock.
    func replaceSchema(_ schema: Schema) async throws(CirrusError) -> Schema {
        try updateSchemaNow { (current) throws(CirrusError) in try Container.schemaToImport(schema, over: current) }
    }

    /// `Container.changeSecurityRoles(_:)`: `body` on the schema under the write lock, committed as
    /// one schema entry when it changed it.
    func updateSchema(
        _ body: @escaping @Sendable (Schema) throws(CirrusError) -> Schema
    ) async throws(CirrusError) -> Schema {
        try updateSchemaNow(body)
    }

    /// ``updateSchema(_:)``, synchronously (the container's role calls).
    func updateSchemaNow(_ body: (Schema) throws(CirrusError) -> Schema) throws(CirrusError) -> Schema {
        if core.options.readOnly { throw CirrusError(.internalError, "the container is open read-only") }
        return try core.withWriteLock { () throws(CirrusError) in
            let s = try body(core.schema)
            if s == core.schema { return s }
            try core.commitHoldingLock([.setSchema(s)], changes: [], newSchema: s)
            return s
        }
    }

    /// `Container.promoteSchemaToProduction()`: ``Container/promoteSchema()``.
    func promoteSchema() async throws(CirrusError) -> Schema { try Container(backend: self).promoteSchema() }
}

extension Container {
    /// The embedded engine's core; on another engine, `what` is refused with serverRejectedRequest.
    func embeddedCore(_ what: String) throws(CirrusError) -> ContainerCore {
        guard let core = embedded else { throw .unsupported(what, on: engineName) }
        return core
    }

    /// The embedded engine's core, nil on another engine.
    var embedded: ContainerCore? { (backend as? EmbeddedContainer)?.core }

    /// Opens (or creates) the container in `directory`, in `environment`: maps the data segments
    /// of the last checkpoint, replays the log written after it, and builds every database's
    /// indexes in bulk. Throws internalError (1) when the log, the cursor secrets or the
    /// subscriptions file cannot be read (or created), or when `directory` holds a bare record
    /// store rather than a container.
    ///
    /// ```swift
    /// let container = try Container.open(at: "/data/places", environment: .production,
    ///                                    options: ContainerOptions(readOnly: true))
    /// ```
    public static func open(
        at directory: String, environment: Environment = .development, options: ContainerOptions = ContainerOptions()
    ) throws(CirrusError) -> Container {
        if environment == .development { sweepResetTrash(directory: directory, options: options) }
        return Container(
            backend: EmbeddedContainer(
                core: try ContainerCore.open(directory: directory, environment: environment, options: options)))
    }

    /// The users that have records or zones in a private database, sorted.
    public var privateDatabaseOwners: [String] {
        guard let core = embedded else { return [] }
        let snap = core.store.snapshot()
        var owners = Set(core.stateLock.withLock { core.tables.keys })
        for z in snap.zones.keys { owners.insert(z.ownerName) }
        owners.remove(ZoneID.defaultOwnerName)
        return owners.sorted()
    }

    /// Rewrites the log to its live state (deletions older than now become unreachable for
    /// change tokens: fetching changes with an older token → changeTokenExpired).
    public func compact() throws(CirrusError) {
        let core = try embeddedCore("compaction")
        core.waitForCheckpoints()
        core.writeLock.lock()
        defer { core.writeLock.unlock() }
        // Compaction is a checkpoint that also forgets deletions (change tokens from before
        // it expire): every live version moves into data segments and the log empties.
        try core.checkpointHoldingLock(raiseHorizon: true)
        core.removeUnreferencedAssets()
    }

    /// Writes a checkpoint now: the records changed since the last one move from the log into
    /// data segments, so the next open maps them instead of replaying (docs/storage-format.md).
    /// Commits also checkpoint by themselves past `ContainerOptions.checkpointThreshold`.
    @discardableResult
    public func checkpoint() throws(CirrusError) -> CheckpointReport {
        let core = try embeddedCore("checkpoints")
        core.waitForCheckpoints()
        core.writeLock.lock()
        defer { core.writeLock.unlock() }
        return try core.checkpointHoldingLock()
    }

    /// Makes every acknowledged write durable.
    public func sync() throws(CirrusError) {
        guard let core = embedded else { return }  // another engine's acknowledged writes are durable
        core.writeLock.lock()
        defer { core.writeLock.unlock() }
        do {
            try core.store.sync()
        } catch {
            throw CirrusError(.internalError, "sync failed: \(error)")
        }
        core.removeUnreferencedAssets()
    }

    /// What opening the log found (torn tail, corruption) and the damaged derived data it rebuilt
    /// (`warnings`: index segments and sections, row hashes, the façade's state — each naming its
    /// file and offset; also logged through `ContainerOptions.logger`).
    public var openReport: OpenReport {
        guard let core = embedded else { return OpenReport() }
        var r = core.store.openReport
        r.warnings += core.indexWarnings.all + core.openWarnings
        return r
    }

    /// Checks every table's indexes against its rows (tests and `verify`).
    public func checkInvariants() throws {
        guard let core = embedded else { return }
        let tables = core.stateLock.withLock { core.tables }
        for (owner, types) in tables {
            for (type, t) in types {
                try t.parts.indexes.checkInvariants()
                guard t.parts.indexes.rowCount == t.liveCount else {
                    throw CirrusError(
                        .internalError,
                        "\(owner)/\(type): indexes hold \(t.parts.indexes.rowCount) rows, the table \(t.liveCount)")
                }
                // Every index entry against the rows: rebuild from the stored rows and compare.
                let rows = t.allRows().compactMap { row in t.record(row).map { (row, $0) } }
                let rebuilt = RecordIndexes(
                    schema: t.parts.schema ?? RecordTypeSchema(name: type, grants: []), rows: rows,
                    nodeSize: core.options.indexNodeSize)
                if let d = t.parts.indexes.differences(from: rebuilt).first {
                    throw CirrusError(.internalError, "\(owner)/\(type): \(d)")
                }
                // Every column value against its row (rows updated in place read their overlay).
                var values: [FieldValue?] = []
                for field in t.parts.indexes.columnFields {
                    guard let column = t.parts.indexes.columnReader(FieldSelection([field])) else { continue }
                    for i in 0..<t.baseCount where !t.parts.baseRemoved.contains(i) && !t.parts.overlaid.contains(i) {
                        guard column.values(i, into: &values),
                            let r = t.record(RowID(truncatingIfNeeded: i))
                        else { continue }
                        if values.first.flatMap({ $0 }) != r[field] {
                            throw CirrusError(
                                .internalError,
                                "\(owner)/\(type): the column of \(field) holds \(values.first.flatMap { $0 }.map { "\($0)" } ?? "nothing") for \(r.recordID.recordName), the row \(r[field].map { "\($0)" } ?? "nothing")"
                            )
                        }
                    }
                }
            }
        }
    }

    // MARK: schema and roles, synchronously

    /// Replaces this environment's schema with `text` (CloudKit's schema language). Add-only:
    /// every existing type and field must still be there with the same type (serverRejectedRequest
    /// otherwise); index options and grants are taken from the text. Unreadable text →
    /// invalidArguments with its line and column.
    @discardableResult
    public func importSchema(_ text: String) throws(CirrusError) -> Schema {
        let core = try embeddedCore(
            "schema imports through the container (use applySchema(_:), which any engine takes)")
        var new = try Self.parseImport(text, environment: core.environment)
        if core.options.readOnly { throw CirrusError(.internalError, "the container is open read-only") }
        core.writeLock.lock()
        defer { core.writeLock.unlock() }
        new = try Self.schemaToImport(new, over: core.schema)
        if new == core.schema { return new }
        try core.commitHoldingLock([.setSchema(new)], changes: [], newSchema: new)
        return new
    }

    /// Copies the development schema to production (this container must be the development
    /// one), with its custom roles and grants; production keeps its own role assignments (those
    /// of roles the development schema no longer has are dropped). Add-only against what production already has. Opens `DIR/production` for writing:
    /// do not promote while a production container on the same directory is open.
    @discardableResult
    public func promoteSchema() throws(CirrusError) -> Schema {
        let core = try embeddedCore(
            "schema promotions through the container (use promoteSchemaToProduction(), which any engine takes)")
        guard core.environment == .development else {
            throw CirrusError(.invalidArguments, "promote from the development container; this one is production")
        }
        let prod: RecordStore
        do {
            prod = try RecordStore.open(
                directory: joinPath(core.directory, Environment.production.rawValue),
                fileSystem: core.options.fileSystem,
                options: RecordStoreOptions(durability: .everyCommit, clock: core.options.clock))
        } catch {
            throw CirrusError(.internalError, "cannot open the production store: \(error)")
        }
        defer { try? prod.close() }  // read-only: nothing to flush, the promotion's result is reported
        // Roles and grants travel with the schema; production keeps its own assignments.
        let current = prod.snapshot().schema
        let schema = try Self.schemaToPromote(core.schema, over: current)
        if current == schema { return schema }
        do {
            try prod.commit([.setSchema(schema)])
        } catch {
            throw CirrusError(.internalError, "cannot write the production schema: \(error)")
        }
        return schema
    }

    /// Creates the custom role `name` (development only: roles are part of the schema and reach
    /// production by promotion). A name that is not `[A-Za-z][A-Za-z0-9_]*` → invalidArguments;
    /// an existing role → invalidArguments.
    ///
    /// ```swift
    /// try container.createRole("Moderator")
    /// try container.grant([.read, .write], on: "Post", to: "Moderator")
    /// try container.assign(user: "_alice", to: "Moderator")
    /// ```
    public func createRole(_ name: String) throws(CirrusError) { try change(.createRole(name)) }

    /// Deletes the custom role `name` with its grants on every type and its assignments
    /// (development only). An unknown role → invalidArguments.
    public func deleteRole(_ name: String) throws(CirrusError) { try change(.deleteRole(name)) }

    /// Grants `permissions` on `recordType` to `role` — a custom role or `_world`, `_icloud`,
    /// `_creator` (development only). An unknown role or type, `Users`, or no permission →
    /// invalidArguments, and nothing changes.
    public func grant(_ permissions: Set<Permission>, on recordType: String, to role: String) throws(CirrusError) {
        try change(.grant(permissions, on: recordType, to: role))
    }

    /// Takes `permissions` on `recordType` away from `role` (development only); a grant left
    /// with no permission is removed. Unknown role or type → invalidArguments.
    public func revoke(_ permissions: Set<Permission>, on recordType: String, from role: String) throws(CirrusError) {
        try change(.revoke(permissions, on: recordType, from: role))
    }

    /// Assigns the user `user` to the custom role `role` in this environment (either
    /// environment: assignments are never promoted). Unknown role, a built-in role or a user
    /// name that is not a record name → invalidArguments.
    public func assign(user: String, to role: String) throws(CirrusError) { try change(.assign(user: user, to: role)) }

    /// Removes the user `user` from the custom role `role` in this environment. Unknown role →
    /// invalidArguments; a user who does not hold it → invalidArguments.
    public func unassign(user: String, from role: String) throws(CirrusError) {
        try change(.unassign(user: user, from: role))
    }

    /// Applies `body` to a copy of the schema under the write lock and commits the result (as
    /// one schema entry) if it changed; `body` throwing changes nothing.
    func change(_ change: SecurityRoleChange) throws(CirrusError) {
        let core = try embeddedCore(
            "security-role changes through the container's synchronous calls (use changeSecurityRoles(_:))")
        if core.options.readOnly { throw CirrusError(.internalError, "the container is open read-only") }
        if change.changesRoles && core.environment == .production { throw Self.productionRoles }
        try core.withWriteLock { () throws(CirrusError) in
            var s = core.schema
            try change.apply(to: &s)
            if s == core.schema { return }
            try core.commitHoldingLock([.setSchema(s)], changes: [], newSchema: s)
        }
    }
}

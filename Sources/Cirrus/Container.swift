// Container: a directory holding one CloudKit container in one environment — its public
// database, every user's private database, its schema — over one record log.
//
// Layout (docs/database.md): DIR/development/ and DIR/production/ are each a RecordStore
// (segments, CURRENT, assets/, cursor-secrets.json). A container opens one environment; the
// schema lives in that environment's log. Schema operations: Container+Schema.swift.

import Indexes
import RecordLog
import RecordModel

/// A CloudKit container opened from a directory.
///
/// ```swift
/// let container = try Container.open(at: "/data/places", environment: .development)
/// let db = container.publicDatabase(as: .user("_alice"))
/// try await db.save(Record(recordType: "Place", recordID: RecordID(recordName: "louvre"), fields: ["name": "Louvre"]))
/// ```
public final class Container: Sendable {
    /// The engine behind the container.
    enum Storage: Sendable {
        /// A container directory: log, segments, Cirrus's own indexes and planner.
        case embedded(ContainerCore)
        /// Another engine (PostgreSQL: `Container.open(postgres:…)` in CirrusPostgres).
        case other(any ContainerBackend)
    }

    let storage: Storage

    init(core: ContainerCore) { storage = .embedded(core) }

    /// A container over another engine (CirrusPostgres's `Container.open(postgres:…)` makes one).
    public init(backend: any ContainerBackend) { storage = .other(backend) }

    /// The embedded engine's core; on another engine, `what` is refused with serverRejectedRequest.
    func embeddedCore(_ what: String) throws(CirrusError) -> ContainerCore {
        switch storage {
        case .embedded(let core): return core
        case .other(let b): throw .unsupported(what, on: b.engineName)
        }
    }

    /// The embedded engine's core, nil on another engine.
    var embedded: ContainerCore? {
        if case .embedded(let core) = storage { return core }
        return nil
    }

    /// The engine behind a container opened on another engine (nil for a container directory).
    public var backend: (any ContainerBackend)? {
        if case .other(let b) = storage { return b }
        return nil
    }

    /// The engine behind the container: `embedded` or `postgresql`.
    public var engineName: String {
        switch storage {
        case .embedded: "embedded"
        case .other(let b): b.engineName
        }
    }

    private func makeDatabase(_ scope: Database.Scope, _ identity: Identity) -> Database {
        switch storage {
        case .embedded(let core): Database(backend: EmbeddedDatabase(core: core, scope: scope, identity: identity))
        case .other(let b): Database(backend: b.database(scope, as: identity))
        }
    }

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
        return Container(core: try ContainerCore.open(directory: directory, environment: environment, options: options))
    }

    /// The container's directory (on another engine: where it lives, e.g. `postgresql
    /// 127.0.0.1:5432/cirrus iCloud.com.example`).
    public var directory: String {
        switch storage {
        case .embedded(let core): core.directory
        case .other(let b): b.location
        }
    }
    /// The environment this container was opened in.
    public var environment: Environment {
        switch storage {
        case .embedded(let core): core.environment
        case .other(let b): b.environment
        }
    }

    /// The public database, anonymously (reads only what the world may read).
    public var publicDatabase: Database { publicDatabase(as: .anonymous) }

    /// The public database on behalf of `identity`.
    public func publicDatabase(as identity: Identity) -> Database {
        makeDatabase(.public, identity)
    }

    /// The private database of `userRecordName`, used on that user's behalf.
    ///
    /// ```swift
    /// let mine = container.privateDatabase(for: "_alice")
    /// ```
    public func privateDatabase(for userRecordName: String) -> Database {
        makeDatabase(.private(owner: userRecordName), .user(userRecordName))
    }

    /// The database with `scope`, on behalf of `identity` (a private database used by anyone
    /// but its owner refuses every call).
    public func database(_ scope: Database.Scope, as identity: Identity) -> Database {
        makeDatabase(scope, identity)
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

    /// Syncs and closes the log; later writes fail with internalError.
    public func close() throws(CirrusError) {
        if case .other(let b) = storage { return b.close() }
        let core = try embeddedCore("closing")
        core.waitForCheckpoints()
        core.writeLock.lock()
        defer { core.writeLock.unlock() }
        // A checkpoint at close when the delta is large enough to slow the next open down (a
        // few changes stay in the log: replaying them is cheaper than rewriting their tables), or
        // when a table's segments lack an index of its schema (it would be built from every row
        // at each open).
        var checkpointError: CirrusError?
        if !core.options.readOnly, !core.store.isClosed,
            core.store.deltaCount >= min(core.options.checkpointThreshold, 1000) || !core.rewriteAtCheckpoint.isEmpty
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

    /// What opening the log found (torn tail, corruption) and the damaged derived data it rebuilt
    /// (`warnings`: index segments and sections, row hashes, the façade's state — each naming its
    /// file and offset; also logged through `ContainerOptions.logger`).
    public var openReport: OpenReport {
        guard let core = embedded else { return OpenReport() }
        var r = core.store.openReport
        r.warnings += core.openWarnings
        return r
    }

    /// Checks every table's indexes against its rows (tests and `verify`).
    public func checkInvariants() throws {
        guard let core = embedded else { return }
        let tables = core.stateLock.withLock { core.tables }
        for (owner, types) in tables {
            for (type, t) in types {
                try t.indexes.checkInvariants()
                guard t.indexes.rowCount == t.liveCount else {
                    throw CirrusError(
                        .internalError,
                        "\(owner)/\(type): indexes hold \(t.indexes.rowCount) rows, the table \(t.liveCount)")
                }
                // Every index entry against the rows: rebuild from the stored rows and compare.
                let rows = t.allRows().compactMap { row in t.record(row).map { (row, $0) } }
                let rebuilt = RecordIndexes(
                    schema: t.schema ?? RecordTypeSchema(name: type, grants: []), rows: rows,
                    nodeSize: core.options.indexNodeSize)
                if let d = t.indexes.differences(from: rebuilt).first {
                    throw CirrusError(.internalError, "\(owner)/\(type): \(d)")
                }
                // Every column value against its row (rows updated in place read their overlay).
                var values: [FieldValue?] = []
                for field in t.indexes.columnFields {
                    guard let column = t.indexes.columnReader(FieldSelection([field])) else { continue }
                    for i in 0..<t.baseCount where !t.baseRemoved.contains(i) && !t.overlaid.contains(i) {
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
}

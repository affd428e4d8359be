// PostgresStore: one tenant's records on PostgreSQL + PostGIS — connection, deadlines, errors,
// and the schema the typed columns follow. Records: PostgresStore+Records.swift; queries:
// PostgresStore+Query.swift; DDL: PostgresStore+Schema.swift; layout: TableLayout.swift.
//
// What it owns: a PostgresClient (postgres-nio's pool) and the task running it, the tenant, the
// schema last applied or read. What it does not: access rules, zones as objects, change
// tokens (the façade's, see docs/scale-out.md "Not done yet"). Subscriptions' tables and
// outbox: PostgresStore+Subscriptions.swift.

import CirrusFacade
import Foundation
import Logging
import NIOConcurrencyHelpers
import PostgresNIO
import RecordModel

/// Records and checked queries of one tenant on PostgreSQL with PostGIS.
///
/// ```swift
/// let tenant = PostgresTenant(containerID: "iCloud.com.example.places", environment: .development,
///                             database: .public)
/// let store = try await PostgresStore.connect(url: "postgres://cirrus@127.0.0.1:5432/cirrus", tenant: tenant)
/// try await store.apply(schema: schema)                 // DDL in one transaction
/// let saved = try await store.save(place)               // change tag, dates set
/// let q = try store.query("Place", "kind == %@", ["cafe"], sortDescriptors: [.field("name", ascending: true)])
/// let page = try await store.records(matching: q, resultsLimit: 50)
/// if let next = page.cursor { _ = try await store.records(continuingFrom: next) }
/// await store.close()
/// ```
public actor PostgresStore {
    /// The tenant whose rows every statement names.
    public nonisolated let tenant: PostgresTenant
    /// `host:port/database`, for messages.
    public nonisolated let address: String
    /// Whether the `citus` extension is installed (tables are then distributed on `tenant`).
    public internal(set) var citus: Bool
    /// The CloudKit schema the tables follow (empty until applied or read from the database).
    public internal(set) var schema: Schema
    /// How the tables are laid out on the server: one node (the default), or hash-partitioned
    /// over foreign tables on workers.
    public nonisolated let layout: Layout

    /// How the container's tables are laid out on the server the store connects to.
    public enum Layout: Sendable, Hashable {
        /// Plain tables (distributed by Citus when the extension is present): the store creates
        /// and evolves them, and upserts with `ON CONFLICT`.
        case singleNode
        /// On a coordinator whose tables are `PARTITION BY HASH (tenant)` with one postgres_fdw
        /// foreign table per worker as partitions (docs/scale-out.md "Multi-node"). The shard DDL
        /// is made outside the store (the tests' support does it): ``PostgresStore/apply(schema:)``
        /// and growing the schema in a save are refused, and writes use `UPDATE` then `INSERT`
        /// instead of `ON CONFLICT` (a partitioned table over foreign tables has no unique index).
        case hashPartitioned
    }

    /// What every write context of this store shares (WriteContext.swift).
    nonisolated var scope: TenantScope {
        TenantScope(
            logger: logger, namespace: tenant.namespace, tenant: tenant.key, publicTenant: tenant.publicKey,
            environment: tenant.environment,
            partitioned: layout == .hashPartitioned)
    }

    let client: PostgresClient
    let runTask: Task<Void, Never>
    /// The statement texts prepared on the pool's sessions (shared with the stores of the same
    /// pool: PreparedSQL.swift).
    let statements: PreparedSQL.Registry
    let clock: @Sendable () -> Timestamp
    let timeout: Duration
    /// The deadlines of the store's running statements (`run`).
    let deadlines = Deadline.Watch()
    let logger: Logger
    var tables: [String: TableLayout] = [:]
    /// When this store last swept its tenant's unreferenced assets (PostgresStore+Assets.swift).
    var lastAssetSweep: ContinuousClock.Instant? = nil
    /// Records written since the tables were last analyzed (PostgresStore+Growth.swift).
    var growth = TableGrowth()

    init(
        client: PostgresClient, runTask: Task<Void, Never>, tenant: PostgresTenant, address: String,
        clock: @escaping @Sendable () -> Timestamp, timeout: Duration, layout: Layout,
        statements: PreparedSQL.Registry = PreparedSQL.Registry()
    ) {
        self.layout = layout
        self.statements = statements
        self.client = client
        self.runTask = runTask
        self.tenant = tenant
        self.address = address
        self.clock = clock
        self.timeout = timeout
        self.logger = Logger(label: "cirrus.postgres")
        self.citus = false
        self.schema = Schema(environment: tenant.environment)
    }

    /// Connects to `url` (`postgres://user[:password]@host[:port]/database`) for `tenant`,
    /// checks that PostGIS is installed, notes whether Citus is, and reads the schema applied
    /// before (if any). Every later call fails after `timeout` without an answer; the server
    /// cancels a statement after 80 % of it (the sessions' `statement_timeout`). `layout` says
    /// how the tables are laid out (``Layout/singleNode`` unless the server is a coordinator of
    /// hash-partitioned foreign tables).
    ///
    /// Throws `invalidArguments` for a malformed URL,
    /// `networkUnavailable` when the server cannot be reached.
    public static func connect(
        url: String, tenant: PostgresTenant, timeout: Duration = .seconds(15),
        clock: @escaping @Sendable () -> Timestamp = { Timestamp(Date()) }, layout: Layout = .singleNode
    ) async throws(CirrusError) -> PostgresStore {
        guard let c = URLComponents(string: url), c.scheme == "postgres" || c.scheme == "postgresql",
            let host = c.host, !host.isEmpty, let user = c.user, !user.isEmpty
        else {
            throw CirrusError(
                .invalidArguments, "expected postgres://user[:password]@host[:port]/database, got \(url)")
        }
        let port = c.port ?? 5432
        let database = String(c.path.drop(while: { $0 == "/" }))
        var config = PostgresClient.Configuration(
            host: host, port: port, username: user, password: c.password, database: database.isEmpty ? user : database,
            tls: .disable)
        config.options.connectTimeout = timeout
        config.options.maximumConnections = 4
        // pg_stat_activity shows which tenant a session serves (PostgreSQL keeps 63 bytes of it).
        // The server gives up on a statement at 80 % of the deadline (statement_timeout), so a
        // statement the store stops waiting for does not run on — and commit — after it: its
        // transaction is rolled back, and the cancellation usually arrives before the deadline.
        // It also bounds a coordinator's wait on a worker (postgres_fdw waits interruptibly).
        let statementTimeout = max(
            1, timeout.components.seconds * 800 + timeout.components.attoseconds / 1_250_000_000_000_000)
        // JIT compilation is off: a store's statements are short, index-bound OLTP queries whose
        // cost estimates (a KNN page's, a large table's) would otherwise trigger compilation that
        // takes longer than the query itself.
        config.options.additionalStartupParameters = [
            ("application_name", "cirrus " + tenant.key), ("statement_timeout", "\(statementTimeout)"),
            ("jit", "off"),
        ]
        let at = "\(host):\(port)/\(database.isEmpty ? user : database)"
        // One direct connection first: an unreachable server or a refused login is reported at
        // once with its cause (the pool would retry in the background until the deadline).
        do {
            var probe = PostgresConnection.Configuration(
                host: host, port: port, username: user, password: c.password,
                database: database.isEmpty ? user : database, tls: .disable)
            probe.options.connectTimeout = Deadline.nanoseconds(timeout)
            let connection = try await PostgresConnection.connect(
                configuration: probe, id: 0, logger: Logger(label: "cirrus.postgres.probe"))
            try await connection.close()
        } catch {
            throw mapError(error, what: "connecting", address: at)
        }
        let client = PostgresClient(configuration: config)
        let runTask = Task { await client.run() }
        let store = PostgresStore(
            client: client, runTask: runTask, tenant: tenant,
            address: at, clock: clock, timeout: timeout, layout: layout)
        do {
            try await store.start()
        } catch {
            await store.close()
            throw error
        }
        return store
    }

    /// Stops the connection pool; later calls fail with `networkFailure`.
    public func close() async {
        runTask.cancel()
        _ = await runTask.value
    }

    /// Reads the schema stored in the database again (another process may have applied or
    /// grown it since this store read it).
    public func reloadSchema() async throws(CirrusError) { try await start() }

    func start() async throws(CirrusError) {
        let namespace = tenant.namespace
        let (extensions, stored, numeric, indexes) = try await run(
            "reading extensions and the stored schema", retryRead: true
        ) { client in
            var extensions: Set<String> = []
            for try await name in try await client.query("SELECT extname FROM pg_extension").decode(String.self) {
                extensions.insert(name)
            }
            var stored: String? = nil
            let table = SQLName.qualified(namespace, "cirrus_schema")
            let exists = try await client.query("SELECT to_regclass(\(table)) IS NOT NULL").decode(Bool.self)
            for try await e in exists where e {
                let rows = try await client.query(PostgresQuery(unsafeSQL: "SELECT schema FROM \(table) WHERE id = 1"))
                for try await s in rows.decode(String.self) { stored = s }
            }
            // Number columns of a table made when numbers were `numeric` (retyped below).
            var numeric = false
            let old = try await client.query(
                """
                SELECT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = \(namespace)
                    AND udt_name IN ('numeric', '_numeric'))
                """)
            for try await e in old.decode(Bool.self) { numeric = e }
            var indexes: Set<String> = []
            for try await n in try await client.query(
                "SELECT indexname FROM pg_indexes WHERE schemaname = \(namespace) AND indexname LIKE 'i\\_%'"
            ).decode(String.self) { indexes.insert(n) }
            return (extensions, stored, numeric, indexes)
        }
        guard extensions.contains("postgis") else {
            throw CirrusError(
                .invalidArguments, "PostGIS is not installed in this database (CREATE EXTENSION postgis)",
                location: address)
        }
        citus = extensions.contains("citus")
        if let stored {
            do {
                setSchema(try JSONDecoder().decode(Schema.self, from: Data(stored.utf8)))
            } catch {
                throw CirrusError(
                    .internalError, "the stored schema of \(tenant.namespace) does not decode: \(error)",
                    location: address)
            }
            // Tables made by an earlier version — numbers as one `numeric` column, B-trees that
            // are not split by database (TableLayout.indexes) — are brought to the current layout
            // (once; a hash-partitioned layout's tables are made outside the store).
            let wanted = Set(tables.values.flatMap { $0.indexes.keys })
            if (numeric || !wanted.isSubset(of: indexes)) && layout == .singleNode { try await update { $0 } }
        }
    }

    func setSchema(_ s: Schema) {
        schema = s
        tables = Dictionary(
            uniqueKeysWithValues: s.recordTypes.values.map {
                ($0.name, TableLayout(namespace: tenant.namespace, publicTenant: tenant.publicKey, schema: $0))
            })
    }

    /// The layout of a record type the schema has.
    func layout(_ recordType: String) throws(CirrusError) -> TableLayout {
        guard let t = tables[recordType] else {
            throw CirrusError(
                .serverRejectedRequest, "the schema of \(tenant.namespace) has no record type \(recordType)",
                location: address)
        }
        return t
    }

    // MARK: - running statements

    /// Runs `body` with the client; fails after the store's timeout, and maps every error to a
    /// `CirrusError` naming `what` and this server. A read (`retryRead`) whose session
    /// turns out to be closed — the pool can hand out a session the server has just ended —
    /// runs again (at most three times in all); writes never run twice (their outcome is reported).
    /// `timeout`: another deadline than the store's (an import's index builds).
    func run<T: Sendable>(
        _ what: String, retryRead: Bool = false, timeout: Duration? = nil,
        _ body: @escaping @Sendable (PostgresClient) async throws -> T
    ) async throws(CirrusError) -> T {
        let client = self.client
        let address = self.address
        let timeout = timeout ?? self.timeout
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await Deadline.race(timeout, watch: deadlines) {
                    try await body(client)
                } onTimeout: {
                    // The statement is not cancelled on the server: a write may still commit
                    // (seen when a worker that hung for longer than the deadline answered again).
                    CirrusError(
                        .networkFailure,
                        "no answer from PostgreSQL within \(timeout) while \(what)"
                            + (retryRead ? "" : " (the request may still be applied on the server)"),
                        location: address)
                }
            } catch {
                if retryRead, attempt < 3, Self.isClosedSession(error) {
                    // The pool learns of a closed session asynchronously: give it a moment.
                    try? await Task.sleep(for: .milliseconds(50 * attempt))
                    continue
                }
                throw Self.mapError(error, what: what, address: address)
            }
        }
    }

    /// The foreign server a postgres_fdw connection error names (`could not connect to server
    /// "shard1"`, `... on server "shard1"`), if any.
    static func foreignServer(_ message: String) -> String? {
        guard let r = message.range(of: "server \""),
            let end = message[r.upperBound...].firstIndex(of: "\"")
        else { return nil }
        return String(message[r.upperBound..<end])
    }

    /// Whether `error` says the session was closed (by the server, or found closed), or a
    /// coordinator's connection to a worker was lost during a statement (postgres_fdw connects
    /// again in the next transaction: to the worker, or to a clear "cannot be reached").
    static func isClosedSession(_ error: any Error) -> Bool {
        guard let p = error as? PSQLError else { return false }
        switch p.code {
        case .serverClosedConnection, .clientClosedConnection, .uncleanShutdown: return true
        case .server:
            let state = p.serverInfo?[.sqlState] ?? ""
            return state.hasPrefix("57P") || (state.hasPrefix("08") && isWorkerStatement(p))
        default: return false
        }
    }

    /// Whether a server error came from a statement postgres_fdw sent a worker (its context is
    /// `remote SQL command: …`).
    static func isWorkerStatement(_ p: PSQLError) -> Bool {
        p.serverInfo?[.locationContext]?.contains("remote SQL command") ?? false
    }

    /// A `CirrusError` for anything a statement threw.
    static func mapError(_ error: any Error, what: String, address: String) -> CirrusError {
        if var e = error as? CirrusError {
            if e.location == nil { e.location = address }
            return e
        }
        if let t = error as? PostgresTransactionError {
            // The transaction was rolled back (or never began): what failed is what matters.
            if let inner = t.closureError ?? t.beginError ?? t.commitError {
                var e = mapError(inner, what: what, address: address)
                if let r = t.rollbackError { e.message += " (the rollback failed too: \(r))" }
                return e
            }
        }
        if let p = error as? PSQLError {
            switch p.code {
            case .server:
                return serverError(p, what: what, address: address)
            case .connectionError:
                return CirrusError(
                    .networkUnavailable,
                    "cannot connect to PostgreSQL while \(what): \(p.underlying.map { "\($0)" } ?? "connection failed")",
                    location: address)
            case .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed:
                return CirrusError(
                    .networkFailure, "the connection to PostgreSQL was lost while \(what) (\(p.code))",
                    location: address)
            default:
                return CirrusError(
                    .internalError, "PostgreSQL client error while \(what): \(p.code)", location: address)
            }
        }
        if error is CancellationError {
            return CirrusError(.networkFailure, "cancelled while \(what)", location: address)
        }
        return CirrusError(
            .networkUnavailable, "cannot reach PostgreSQL while \(what): \(String(describing: error))",
            location: address)
    }

    /// A `CirrusError` for an error the server reported (`PSQLError` of code `.server`), by its
    /// SQLSTATE: a worker that cannot be reached or whose connection was lost (postgres_fdw), the
    /// session's statement timeout, a lost connection, or a refusal (the statement's first line).
    static func serverError(_ p: PSQLError, what: String, address: String) -> CirrusError {
        let message = p.serverInfo?[.message] ?? "error"
        let state = p.serverInfo?[.sqlState] ?? "?"
        let detail = p.serverInfo?[.detail].map { ": " + $0.split(separator: "\n").joined(separator: " ") }
        if state.hasPrefix("08"), let server = Self.foreignServer(message) {
            // postgres_fdw could not reach a worker (`could not connect to server "shard1"`,
            // refused or `timeout expired`: 08001), or found its connection to it gone
            // (`connection to server "shard1" was lost`: 08000): name it, and where it is.
            return CirrusError(
                .networkUnavailable,
                "the worker \(server) holding this tenant's rows cannot be reached from the coordinator while "
                    + "\(what): \(message)\(detail ?? "") (SQLSTATE \(state))",
                location: address)
        }
        if state.hasPrefix("08") || state.hasPrefix("57P"),
            Self.isWorkerStatement(p)
        {
            // A worker's connection failed during a statement postgres_fdw sent it (the
            // message is libpq's or the worker's, and names no server): the coordinator's
            // own session is fine.
            let text = message.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            return CirrusError(
                .networkFailure,
                "the coordinator's connection to the worker holding this tenant's rows was lost while "
                    + "\(what): \(text.joined(separator: " "))\(detail ?? "") (SQLSTATE \(state))",
                location: address)
        }
        if state == "57014", message.contains("statement timeout") {
            // The session's statement_timeout (80 % of the store's deadline): the server
            // cancelled the statement and the transaction was rolled back.
            return CirrusError(
                .networkFailure,
                "no answer from PostgreSQL in time while \(what): \(message) (the session's "
                    + "statement_timeout, SQLSTATE 57014: the server cancelled the statement)",
                location: address)
        }
        if state.hasPrefix("08") || state.hasPrefix("57P") {
            // Connection exceptions, and the server shutting down or terminating the session.
            return CirrusError(
                .networkFailure,
                "the connection to PostgreSQL was lost while \(what): \(message) (SQLSTATE \(state))",
                location: address)
        }
        let statement = p.query.map { " in: " + ($0.sql.split(separator: "\n").first.map(String.init) ?? "") }
        return CirrusError(
            .internalError, "PostgreSQL refused \(what): \(message) (SQLSTATE \(state))\(statement ?? "")",
            location: address)
    }
}

/// A race between work and a deadline that moves with the server's answers: the work loses when
/// the server has not answered for `timeout` — since the work began, or since its last statement
/// was answered (``answered()``). A request of many statements that are each answered in time
/// (400 saves, each a few statements) runs to its end however long it takes together; a server
/// that stops answering (hung, or a statement waiting on a lock) ends it `timeout` after its last
/// answer. The caller gets the first outcome; work that loses keeps running until it ends on its
/// own (closing the store ends whatever waits on the pool).
enum Deadline {
    /// When the work running under a deadline last heard from the server.
    final class Progress: Sendable {
        let last = NIOLockedValueBox(ContinuousClock.now)

        /// Notes an answer now.
        func touch() { last.withLockedValue { $0 = .now } }
    }

    /// `duration` for NIO (a connect timeout), to the nanosecond: a timeout under a second is not
    /// 0 s (an instant failure to connect).
    static func nanoseconds(_ duration: Duration) -> TimeAmount {
        .nanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }

    /// The deadline the current task's work runs under (nil outside ``race(_:_:onTimeout:)``).
    @TaskLocal static var progress: Progress?

    /// Notes that the server answered a statement of the current task's work: its deadline is
    /// `timeout` from now. Does nothing outside ``race(_:_:onTimeout:)``.
    static func answered() { progress?.touch() }

    /// The deadlines of a store's running work, watched by one task, so that a statement costs
    /// no task wake-ups for its deadline (a timer task per statement, started and cancelled
    /// around it, cost two). The watcher looks at least every `tick` while work runs, sleeps to
    /// the earliest deadline when it is nearer, and ends after `linger` with nothing to watch;
    /// the next work starts it again.
    final class Watch: Sendable {
        struct Entry: Sendable {
            var progress: Progress
            var timeout: Duration
            var expire: @Sendable () -> Void
        }

        struct State: Sendable {
            var entries: [UInt64: Entry] = [:]
            var next: UInt64 = 0
            var watching = false
        }

        let state = NIOLockedValueBox(State())
        /// The longest the watcher sleeps while work runs: a deadline fires at most this late.
        static let tick = Duration.milliseconds(50)
        /// How long the watcher waits with nothing to watch before it ends.
        static let linger = Duration.seconds(2)

        /// Watches `progress`: `expire` runs (once, on the watcher) when it has not moved for `timeout`.
        func add(_ progress: Progress, _ timeout: Duration, expire: @escaping @Sendable () -> Void) -> UInt64 {
            let (id, start) = state.withLockedValue { s in
                s.next += 1
                s.entries[s.next] = Entry(progress: progress, timeout: timeout, expire: expire)
                defer { s.watching = true }
                return (s.next, !s.watching)
            }
            if start { Task.detached { await self.watch() } }
            return id
        }

        /// Stops watching work `id` (ended; its deadline no longer matters).
        func remove(_ id: UInt64) { state.withLockedValue { _ = $0.entries.removeValue(forKey: id) } }

        private func watch() async {
            var idleSince: ContinuousClock.Instant? = nil
            while true {
                let now = ContinuousClock.now
                var expired: [Entry] = []
                let wake: ContinuousClock.Instant? = state.withLockedValue { s in
                    var earliest = now + Self.tick
                    for (id, e) in s.entries {
                        let deadline = e.progress.last.withLockedValue { $0 } + e.timeout
                        if deadline <= now {
                            expired.append(e)
                            s.entries[id] = nil
                        } else {
                            earliest = min(earliest, deadline)
                        }
                    }
                    guard s.entries.isEmpty else {
                        idleSince = nil
                        return earliest
                    }
                    let since = idleSince ?? now
                    idleSince = since
                    if now - since >= Self.linger {
                        s.watching = false
                        return nil
                    }
                    return earliest
                }
                for e in expired { e.expire() }
                guard let wake else { return }
                try? await Task.sleep(until: wake, clock: .continuous)
            }
        }
    }

    static func race<T: Sendable>(
        _ timeout: Duration, watch: Watch = Watch(), _ work: @escaping @Sendable () async throws -> T,
        onTimeout: @escaping @Sendable () -> CirrusError
    ) async throws -> T {
        let done = NIOLockedValueBox(false)
        let first: @Sendable () -> Bool = {
            done.withLockedValue { d in
                defer { d = true }
                return !d
            }
        }
        let progress = Progress()
        return try await withCheckedThrowingContinuation { (k: CheckedContinuation<T, any Error>) in
            Task {
                // The deadline counts from when the work begins, not from when it was asked for:
                // a task started late (a busy executor) has not waited on the server meanwhile.
                progress.touch()
                let id = watch.add(progress, timeout) { if first() { k.resume(throwing: onTimeout()) } }
                do {
                    let v = try await Deadline.$progress.withValue(progress) { try await work() }
                    watch.remove(id)
                    if first() { k.resume(returning: v) }
                } catch {
                    watch.remove(id)
                    if first() { k.resume(throwing: error) }
                }
            }
        }
    }
}

// PostgresContainer: the `ContainerBackend` behind `Container.open(postgres:…)` — one connection
// pool per container, a store per tenant sharing it, the container's schema applied as DDL and
// published to every tenant's store (PostgresDatabase.swift has the databases it hands out).

import CirrusFacade
import Crypto
import Logging
import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO
import PredicateSyntax
import QueryChecker
import QueryExecution
import QueryPlanner
import RecordModel

/// A CloudKit container whose databases live on PostgreSQL + PostGIS: the `ContainerBackend` of
/// `Container.open(postgres:…)`. Its own API is what a container directory does through other
/// calls: applying a schema (DDL).
public final class PostgresContainer: ContainerBackend {
    /// The container identifier (e.g. `iCloud.com.example.places`).
    public let containerID: String
    /// The environment opened.
    public let environment: Environment
    /// `postgresql`.
    public var engineName: String { "postgresql" }
    /// `postgresql host:port/database containerID`.
    public var location: String { "postgresql \(root.address) \(containerID)" }

    let root: PostgresStore
    let citus: Bool
    /// Most records one database may hold (nil: no quota).
    public let maximumRecordsPerDatabase: Int?
    /// 32 bytes kept in the server (`cirrus_secrets`); each database's cursor secret is derived
    /// from it and the tenant's key, so every process signs and accepts the same cursors.
    let secret: [UInt8]
    /// This process's notification streams of the container and their LISTEN connection.
    let notifier: PostgresNotifier
    private let state: NIOLockedValueBox<State>

    struct State {
        var schema: Schema
        var version = 0
        /// Each tenant's store and the schema version it has adopted (-1: none yet).
        var stores: [String: (store: PostgresStore, version: Int)] = [:]
    }

    private init(
        containerID: String, environment: Environment, root: PostgresStore, schema: Schema, citus: Bool,
        secret: [UInt8], quota: Int?, notifier: PostgresNotifier
    ) {
        self.maximumRecordsPerDatabase = quota
        self.containerID = containerID
        self.environment = environment
        self.root = root
        self.citus = citus
        self.secret = secret
        self.notifier = notifier
        self.state = NIOLockedValueBox(State(schema: schema, stores: [root.tenant.key: (root, 0)]))
    }

    /// Connects (see `Container.open(postgres:…)`), reads the schema and the container's secret.
    static func open(
        url: String, containerID: String, environment: Environment, timeout: Duration, quota: Int? = nil
    ) async throws(CirrusError) -> PostgresContainer {
        let tenant = PostgresTenant(containerID: containerID, environment: environment, database: .public)
        let root: PostgresStore
        let secret: [UInt8]
        do {
            root = try await PostgresStore.connect(url: url, tenant: tenant, timeout: timeout)
        } catch {
            throw error
        }
        do {
            // Creates what is missing (a new container; tables a newer version added).
            try await root.prepare()
            try await root.prepareZones()
            try await root.prepareSubscriptions()
            try await root.prepareUsers()
            secret = try await root.secret(named: "\(containerID)/\(environment.rawValue)")
        } catch {
            await root.close()
            throw error
        }
        return PostgresContainer(
            containerID: containerID, environment: environment, root: root, schema: await root.schema,
            citus: await root.citus, secret: secret, quota: quota,
            notifier: PostgresNotifier(
                configuration: PostgresNotifier.configuration(url: url, namespace: tenant.namespace, timeout: timeout),
                channel: PostgresStore.channel(tenant.namespace)))
    }

    /// The container's schema, as this process last read or grew it.
    public var schema: Schema { state.withLockedValue { $0.schema } }

    /// Applies `schema` (add-only DDL in one transaction; docs/scale-out.md) and makes it every
    /// database's schema.
    ///
    /// ```swift
    /// try await container.postgres?.apply(schema: try Schema(schemaLanguage: text, environment: .production))
    /// ```
    public func apply(schema: Schema) async throws(CirrusError) {
        do {
            try await root.apply(schema: schema)
        } catch {
            throw error
        }
        publish(await root.schema)
    }

    /// Reads the schema stored in the server again (another process may have grown it).
    public func reloadSchema() async throws(CirrusError) {
        do {
            try await root.reloadSchema()
        } catch {
            throw error
        }
        publish(await root.schema)
    }

    /// The database with `scope` on behalf of `identity`: its tenant's store (made on first use,
    /// sharing the container's connections; it adopts the schema on its first call).
    public func database(_ scope: Database.Scope, as identity: Identity) -> any DatabaseBackend {
        let tenant = PostgresTenant(
            containerID: containerID, environment: environment,
            database: scope == .public ? .public : .private(owner: scope.owner))
        let store = state.withLockedValue { s in
            if let known = s.stores[tenant.key] { return known.store }
            let made = root.sibling(for: tenant)
            s.stores[tenant.key] = (made, -1)
            return made
        }
        let key = SymmetricKey(data: secret)
        let derived = Array(HMAC<SHA256>.authenticationCode(for: Array(tenant.key.utf8), using: key))
        return PostgresDatabase(container: self, store: store, scope: scope, identity: identity, secret: derived)
    }

    /// Stops the container's connections; later calls fail with networkFailure.
    public func close() {
        notifier.close()
        root.runTask.cancel()
    }

    /// Makes `schema` the container's when it differs (a save grew it).
    func publish(_ schema: Schema) {
        state.withLockedValue { s in
            guard s.schema != schema else { return }
            s.schema = schema
            s.version += 1
        }
    }

    /// `store` after it adopted the container's latest schema.
    func current(_ store: PostgresStore) async -> PostgresStore {
        let key = store.tenant.key
        let (schema, version, stale) = state.withLockedValue { s in
            (s.schema, s.version, (s.stores[key]?.version ?? -1) < s.version)
        }
        if stale {
            await store.adopt(schema, citus: citus)
            state.withLockedValue { s in
                if let e = s.stores[key], e.version < version { s.stores[key] = (e.store, version) }
            }
        }
        return store
    }
}

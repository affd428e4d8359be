// PostgresStore+Zones: what a container's tenants share on the server — sibling stores over one
// connection pool, the base tables a new container needs, custom zones (`cirrus_zones`: create,
// list, delete with their records), the schema adopted from the container, and the container's
// secrets (cursor-token keys).

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

extension PostgresStore {
    /// A store for another tenant of the same container, sharing this store's connections,
    /// Citus flag and schema. Closing it would close the shared pool: only the container's
    /// first store is closed.
    nonisolated func sibling(for tenant: PostgresTenant) -> PostgresStore {
        let s = PostgresStore(
            client: client, runTask: runTask, tenant: tenant, address: address, clock: clock, timeout: timeout,
            layout: layout, statements: statements)
        return s
    }

    /// Creates the container's base tables (names, counters, the stored schema) when they are
    /// missing, keeping any schema stored already: a new container answers fetches and
    /// deletions with unknownItem instead of a missing relation. Single-node layout only.
    func prepare() async throws(CirrusError) {
        guard layout == .singleNode else { return }
        try await update { stored in
            // Every container has the Users type, as a container directory does.
            var s = stored
            if s.recordTypes[Schema.usersRecordType] == nil {
                s.recordTypes[Schema.usersRecordType] = RecordTypeSchema(name: Schema.usersRecordType)
            }
            return s
        }
    }

    /// Creates `cirrus_zones` (tenant, zone name, the sequence it was created at) when missing,
    /// under the namespace's DDL lock.
    func prepareZones() async throws(CirrusError) {
        let namespace = tenant.namespace
        let logger = self.logger
        let table = SQLName.qualified(namespace, "cirrus_zones")
        let citus = self.citus && layout == .singleNode
        try await run("preparing the zones of \(namespace)") { client in
            try await client.withTransaction(logger: logger) { conn in
                var lock = PostgresBindings()
                lock.append(namespace)
                let existed = try await Self.tableExists(conn, namespace, "cirrus_zones", logger)
                for (sql, binds) in [
                    ("SELECT pg_advisory_xact_lock(hashtext($1))", lock),
                    ("CREATE SCHEMA IF NOT EXISTS \(SQLName.quote(namespace))", PostgresBindings()),
                    (
                        "CREATE TABLE IF NOT EXISTS \(table) (tenant text NOT NULL, zone_name text COLLATE \"C\" NOT NULL, "
                            + "created_seq bigint NOT NULL DEFAULT 0, PRIMARY KEY (tenant, zone_name))",
                        PostgresBindings()
                    ),
                    // Zones made before change tokens count as created at sequence 0.
                    (
                        "ALTER TABLE \(table) ADD COLUMN IF NOT EXISTS created_seq bigint NOT NULL DEFAULT 0",
                        PostgresBindings()
                    ),
                ] {
                    for try await _ in try await conn.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
                    {}
                }
                // Under Citus the zones are distributed with the other tenant tables (change
                // fetches join them with the names and tombstones of one tenant).
                if citus && !existed {
                    var t = PostgresBindings()
                    t.append(table)
                    t.append(SQLName.qualified(namespace, "cirrus_tenants"))
                    for try await _ in try await conn.query(
                        PostgresQuery(
                            unsafeSQL: "SELECT create_distributed_table($1::regclass, 'tenant', colocate_with => $2)",
                            binds: t), logger: logger)
                    {}
                }
            }
        }
    }

    /// This tenant's custom zones, by name.
    func zoneNames() async throws(CirrusError) -> [String] {
        let table = SQLName.qualified(tenant.namespace, "cirrus_zones")
        let key = tenant.key
        return try await run("listing the zones of \(key)", retryRead: true) { client in
            var b = SQLBuilder()
            let t = b.param(key)
            var out: [String] = []
            let rows = try await client.query(
                PostgresQuery(
                    unsafeSQL: "SELECT zone_name FROM \(table) WHERE tenant = \(t) ORDER BY zone_name", binds: b.binds))
            for try await name in rows.decode(String.self) { out.append(name) }
            return out
        }
    }

    /// Creates the custom zone `name` of this tenant at the tenant's next sequence (nothing when
    /// it exists).
    func createZone(_ name: String) async throws(CirrusError) {
        let table = SQLName.qualified(tenant.namespace, "cirrus_zones")
        let key = tenant.key
        let context = writeContext
        try await run("creating zone \(name) of \(key)") { client in
            try await client.withTransaction(logger: context.logger) { conn in
                let w = context.make(conn)
                var b = SQLBuilder()
                let t = b.param(key)
                let z = b.param(name)
                var exists = false
                for try await _ in try await w.query(
                    "SELECT 1 FROM \(table) WHERE tenant = \(t) AND zone_name = \(z)", b)
                { exists = true }
                if exists { return }
                let seq = try await w.nextSequence()
                try await w.exec(
                    "INSERT INTO \(table) (tenant, zone_name, created_seq) VALUES (\(t), \(z), "
                        + "\(b.param(String(seq)))::bigint) ON CONFLICT DO NOTHING", b)
            }
        }
    }

    /// What makes a write context of this tenant (no record tables) on a connection.
    nonisolated var writeContext: (logger: Logger, make: @Sendable (PostgresConnection) -> WriteContext) {
        let scope = self.scope
        return (
            scope.logger,
            { conn in
                WriteContext(conn: conn, scope: scope, tables: [:], now: Timestamp(millisecondsSince1970: 0), user: nil)
            }
        )
    }

    /// Deletes the custom zone `name`, every record in it and its zone subscriptions (the
    /// records' deletions notify first), in one transaction; false when there is no such zone.
    func deleteZone(_ name: String) async throws(CirrusError) -> Bool {
        let (schema, now) = (self.schema, clock())
        let namespace = tenant.namespace
        let key = tenant.key
        let logger = self.logger
        let tables = self.tables.values.map(\.qualifiedTable).sorted()
        let context = writeContext
        return try await run("deleting zone \(name) of \(key)") { client in
            try await client.withTransaction(logger: logger) { conn in
                var b = SQLBuilder()
                let t = b.param(key)
                let z = b.param(name)
                var existed = false
                for try await _ in try await conn.query(
                    PostgresQuery(
                        unsafeSQL: "DELETE FROM \(SQLName.qualified(namespace, "cirrus_zones")) WHERE tenant = \(t) "
                            + "AND zone_name = \(z) RETURNING 1", binds: b.binds), logger: logger)
                { existed = true }
                guard existed else { return false }
                // The deletion takes a sequence: the zone's old tokens are older than a zone of
                // the same name made later.
                let seq = try await context.make(conn).nextSequence()
                try await Self.zoneDeleted(
                    conn, logger: logger, namespace: namespace, tenant: key, zone: name, seq: seq, tables: tables,
                    schema: schema, now: now)
                var removed = 0
                for table in tables
                    + ["cirrus_names", "cirrus_tombstones", "cirrus_backrefs"].map({ SQLName.qualified(namespace, $0) })
                {
                    let names = table == SQLName.qualified(namespace, "cirrus_names")
                    for try await _ in try await conn.query(
                        PostgresQuery(
                            unsafeSQL: "DELETE FROM \(table) WHERE tenant = \(t) AND zone_name = \(z) RETURNING 1",
                            binds: b.binds),
                        logger: logger)
                    { if names { removed += 1 } }
                }
                try await context.make(conn).countRecords(-removed, RecordID(recordName: "-"))
                return true
            }
        }
    }

    /// Takes `schema` (the container's, grown by another tenant's save) and the Citus flag.
    func adopt(_ schema: Schema, citus: Bool? = nil) {
        if let citus { self.citus = citus }
        if schema != self.schema { setSchema(schema) }
    }

    /// The secret `name`: 32 random bytes made by the first process that asked and kept in
    /// `cirrus_secrets`, so every process reads the same.
    func secret(named name: String) async throws(CirrusError) -> [UInt8] {
        var fresh = [UInt8](repeating: 0, count: 32)
        var rng = SystemRandomNumberGenerator()
        for i in fresh.indices { fresh[i] = UInt8.random(in: 0...255, using: &rng) }
        let namespace = tenant.namespace
        let table = SQLName.qualified(namespace, "cirrus_secrets")
        let key = name
        let hex = SQLText.hex(fresh)
        let logger = self.logger
        let citus = self.citus && layout == .singleNode
        let secret = try await run("reading the secret \(key)") { client in
            try await client.withTransaction(logger: logger) { conn in
                var b = SQLBuilder()
                let k = b.param(key)
                let h = b.param(hex)
                var lock = PostgresBindings()
                lock.append(namespace)
                for try await _ in try await conn.query(
                    PostgresQuery(unsafeSQL: "SELECT pg_advisory_xact_lock(hashtext($1))", binds: lock), logger: logger)
                {}
                let existed = try await Self.tableExists(conn, namespace, "cirrus_secrets", logger)
                for sql in [
                    "CREATE SCHEMA IF NOT EXISTS \(SQLName.quote(namespace))",
                    "CREATE TABLE IF NOT EXISTS \(table) (name text PRIMARY KEY, secret bytea NOT NULL)",
                ] {
                    for try await _ in try await conn.query(PostgresQuery(unsafeSQL: sql), logger: logger) {}
                }
                // Under Citus: one copy on every node (it is the container's, not a tenant's).
                if citus && !existed {
                    var t = PostgresBindings()
                    t.append(table)
                    for try await _ in try await conn.query(
                        PostgresQuery(unsafeSQL: "SELECT create_reference_table($1::regclass)", binds: t),
                        logger: logger)
                    {}
                }
                for try await _ in try await conn.query(
                    PostgresQuery(
                        unsafeSQL: "INSERT INTO \(table) (name, secret) VALUES (\(k), decode(\(h), 'hex')) "
                            + "ON CONFLICT (name) DO NOTHING", binds: b.binds), logger: logger)
                {}
                var c = SQLBuilder()
                let k2 = c.param(key)
                var out: [UInt8] = []
                for try await bytes in try await conn.query(
                    PostgresQuery(unsafeSQL: "SELECT secret FROM \(table) WHERE name = \(k2)", binds: c.binds),
                    logger: logger
                ).decode(ByteBuffer.self) {
                    out = Array(bytes.readableBytesView)
                }
                return out
            }
        }
        guard secret.count == 32 else {
            throw CirrusError(
                .internalError, "the secret \(key) has \(secret.count) bytes, not 32", location: address)
        }
        return secret
    }
}

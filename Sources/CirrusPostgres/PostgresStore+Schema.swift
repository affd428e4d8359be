// Schema changes as DDL, in one transaction: the namespace, the shared tables (tenant counters,
// record names, the stored schema), one table per record type with its typed columns and the
// indexes its options ask for. Evolution is add-only, as in the façade: removing or retyping a
// type or field is refused. Under Citus each new table is distributed on `tenant`
// (`create_distributed_table`, colocated) and the schema table is a reference table.
//
// When a type's searchable fields change, its existing rows' tokens are re-derived from their
// stored records in the same transaction.

import CirrusFacade
import Foundation
import Logging
import PostgresNIO
import RecordModel

extension PostgresStore {
    /// Creates or evolves the tables for `newSchema` (its environment must be the tenant's), in
    /// one transaction, and makes it the store's schema.
    ///
    /// ```swift
    /// var schema = Schema(environment: .development, recordTypes: [
    ///     RecordTypeSchema(name: "Place", fields: [FieldSchema(name: "kind", type: .string, options: [.queryable])]),
    /// ])
    /// try await store.apply(schema: schema)
    /// ```
    ///
    /// Throws `serverRejectedRequest` when a type or field of the
    /// stored schema is missing or retyped in `newSchema`.
    public func apply(schema newSchema: Schema) async throws(CirrusError) {
        guard newSchema.environment == tenant.environment else {
            throw CirrusError(
                .invalidArguments,
                "a \(newSchema.environment.rawValue) schema cannot be applied to the \(tenant.environment.rawValue) tables"
            )
        }
        try await update { _ in newSchema }
    }

    /// Changes the stored schema by `body` (given it under the namespace's lock, so a change
    /// made meanwhile by another process is not lost), as DDL in one transaction; an error
    /// `body` throws is thrown as is, and nothing changes.
    public func update(
        schema body: @escaping @Sendable (Schema) throws -> Schema
    ) async throws(CirrusError) {
        guard layout == .singleNode else {
            throw CirrusError(
                .invalidArguments,
                "the tables of a hash-partitioned layout are created on the workers and the coordinator outside the "
                    + "store (docs/scale-out.md \"Multi-node\")", location: address)
        }
        let namespace = tenant.namespace
        let publicTenant = tenant.publicKey
        let citus = self.citus
        let logger = self.logger
        let address = self.address
        let cached = schema
        let stored = try await run("changing the schema of \(namespace)") { client in
            try await client.withTransaction(logger: logger) { conn in
                try await Self.applyDDL(
                    conn, namespace: namespace, publicTenant: publicTenant, citus: citus, logger: logger,
                    address: address
                ) {
                    old in try body(old ?? cached)
                }
            }
        }
        setSchema(stored)
    }

    /// The DDL of a schema change, on `conn` inside the caller's transaction: takes the
    /// namespace's advisory lock, creates what is missing, reads the stored schema, asks
    /// `makeSchema` for the new one (given the stored one), checks it is add-only, creates and
    /// alters tables, columns and indexes, re-derives rows whose columns changed, stores it.
    static func applyDDL(
        _ conn: PostgresConnection, namespace: String, publicTenant: String, citus: Bool, logger: Logger,
        address: String,
        schema makeSchema: (Schema?) throws -> Schema
    ) async throws -> Schema {
        let ddl = SchemaDDL(conn: conn, namespace: namespace, publicTenant: publicTenant, citus: citus, logger: logger)
        var created = try await ddl.createSharedTables()
        created += try await ddl.createHistoryTables()
        // The stored schema, under the lock: evolution is add-only.
        let old = try await ddl.storedSchema()
        let newSchema = try makeSchema(old)
        if let old { try Self.checkAddOnly(old, newSchema, address: address) }
        let encoded = String(decoding: try JSONEncoder().encode(newSchema), as: UTF8.self)
        for t in newSchema.sortedRecordTypes {
            if let table = try await ddl.evolveTable(t, old: old) { created.append(table) }
        }
        try await ddl.distribute(created)
        var b = PostgresBindings()
        b.append(encoded)
        try await ddl.exec(
            "INSERT INTO \(ddl.schemaTable) (id, schema) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET schema = EXCLUDED.schema",
            b)
        return newSchema
    }

    static func tableExists(
        _ conn: PostgresConnection, _ namespace: String, _ table: String, _ logger: Logger
    )
        async throws -> Bool
    {
        var b = PostgresBindings()
        b.append(SQLName.qualified(namespace, table))
        var found = false
        for try await e in try await conn.query(
            PostgresQuery(unsafeSQL: "SELECT to_regclass($1) IS NOT NULL", binds: b), logger: logger
        ).decode(Bool.self) { found = e }
        return found
    }

    static func columnExists(
        _ conn: PostgresConnection, _ namespace: String, _ table: String, _ column: String, _ logger: Logger
    ) async throws -> Bool {
        var b = PostgresBindings()
        b.append(namespace)
        b.append(table)
        b.append(column)
        var found = false
        for try await _ in try await conn.query(
            PostgresQuery(
                unsafeSQL: "SELECT 1 FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 "
                    + "AND column_name = $3", binds: b), logger: logger)
        { found = true }
        return found
    }

    /// Refuses a schema that drops or retypes what `old` has.
    static func checkAddOnly(_ old: Schema, _ new: Schema, address: String) throws(CirrusError) {
        for t in old.sortedRecordTypes {
            guard let n = new.recordTypes[t.name] else {
                throw CirrusError(
                    .serverRejectedRequest, "record type \(t.name) cannot be removed (schemas are add-only)",
                    location: address)
            }
            for f in t.sortedFields {
                guard let g = n.fields[f.name] else {
                    throw CirrusError(
                        .serverRejectedRequest, "field \(t.name).\(f.name) cannot be removed (schemas are add-only)",
                        location: address)
                }
                if g.type != f.type {
                    throw CirrusError(
                        .serverRejectedRequest,
                        "field \(t.name).\(f.name) cannot change type from \(f.type) to \(g.type)", location: address)
                }
            }
        }
    }

    /// Recomputes the typed columns and tokens of every row of a type (all tenants: the
    /// columns are the container's) from the stored records.
    static func rederive(_ conn: PostgresConnection, _ layout: TableLayout, _ logger: Logger) async throws {
        var rows: [(String, [UInt8])] = []
        for try await (tenant, data) in try await conn.query(
            PostgresQuery(unsafeSQL: "SELECT tenant, data FROM \(layout.qualifiedTable)"), logger: logger
        ).decode((String, ByteBuffer).self) {
            rows.append((tenant, Array(data.readableBytesView)))
        }
        for (tenant, data) in rows {
            let record = try RecordRow.decode(data)
            var b = SQLBuilder()
            let values = try RecordRow.typedValues(record, layout, &b)
            guard !values.isEmpty else { continue }
            let set = values.map { "\($0.0) = \($0.1)" }.joined(separator: ", ")
            let key = RecordRow.keyCondition(tenant: tenant, record.recordID, &b)
            for try await _ in try await conn.query(
                PostgresQuery(unsafeSQL: "UPDATE \(layout.qualifiedTable) SET \(set) WHERE \(key)", binds: b.binds),
                logger: logger)
            {}
        }
    }
}

extension PostgresStore {
    /// Refreshes PostgreSQL's statistics of the container's tables and merges their GIN
    /// indexes' pending lists (`VACUUM ANALYZE`), so that the planner sees their sizes and value
    /// distributions and costs the text and list indexes as what they are — after a bulk load,
    /// before autovacuum gets to them. (Right after a load the rows of a GIN index are in its
    /// pending list, which the planner costs as expensive: token searches were planned as
    /// sequential scans until VACUUM ran.) The base tables (names, tombstones) are vacuumed too.
    public func analyze() async throws(CirrusError) {
        let namespace = tenant.namespace
        let tables =
            self.tables.values.map(\.qualifiedTable).sorted()
            + ["cirrus_names", "cirrus_tombstones"].map { SQLName.qualified(namespace, $0) }
        // Foreign tables (a hash-partitioned layout's shards) cannot be vacuumed: ANALYZE only.
        let command = layout == .singleNode ? "VACUUM (ANALYZE)" : "ANALYZE"
        try await run("vacuuming and analyzing the tables of \(tenant.namespace)") { client in
            // VACUUM cannot run in a transaction: each is a statement of its own.
            for t in tables { try await client.query(PostgresQuery(unsafeSQL: "\(command) \(t)")) }
        }
    }
}

/// The statements of one schema change (`PostgresStore.applyDDL`), in order, on the connection of
/// the caller's transaction: the namespace's advisory lock is taken first and held to the commit.
private struct SchemaDDL {
    /// The connection of the caller's transaction.
    let conn: PostgresConnection
    /// The PostgreSQL schema holding the container environment's tables.
    let namespace: String
    /// The key of the namespace's public database (TableLayout.indexes).
    let publicTenant: String
    /// Whether new tables are distributed by Citus (on `tenant`, colocated).
    let citus: Bool
    /// The logger of every statement.
    let logger: Logger

    /// The stored schema's table (one row, `id = 1`).
    var schemaTable: String { SQLName.qualified(namespace, "cirrus_schema") }

    /// Runs a statement and drains its rows.
    func exec(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) async throws {
        for try await _ in try await conn.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger) {}
    }

    /// Takes the namespace's advisory lock and creates the namespace, the tenants' counters,
    /// the names and the stored schema's table when missing, and the tenants' record counts;
    /// returns the tables created that Citus distributes (the tenants' first).
    func createSharedTables() async throws -> [String] {
        var lockKey = PostgresBindings()
        lockKey.append(namespace)
        try await exec("SELECT pg_advisory_xact_lock(hashtext($1))", lockKey)
        let ns = SQLName.quote(namespace)
        try await exec("CREATE SCHEMA IF NOT EXISTS \(ns)")
        let tenants = SQLName.qualified(namespace, "cirrus_tenants")
        let names = SQLName.qualified(namespace, "cirrus_names")
        var created: [String] = []
        let exists = try await PostgresStore.tableExists(conn, namespace, "cirrus_tenants", logger)
        if !exists {
            try await exec(
                "CREATE TABLE \(tenants) (tenant text PRIMARY KEY, sequence bigint NOT NULL, "
                    + "records bigint NOT NULL DEFAULT 0)")
            try await exec(
                """
                CREATE TABLE \(names) (tenant text NOT NULL, zone_name text COLLATE "C" NOT NULL,
                    zone_owner text COLLATE "C" NOT NULL, record_name text COLLATE "C" NOT NULL,
                    record_type text NOT NULL, seq bigint NOT NULL DEFAULT 0,
                    PRIMARY KEY (tenant, zone_name, zone_owner, record_name))
                """)
            try await exec(
                "CREATE TABLE \(schemaTable) (id int PRIMARY KEY CHECK (id = 1), schema text NOT NULL)")
            created += [tenants, names]
            if citus {
                var t = PostgresBindings()
                t.append(schemaTable)
                try await exec("SELECT create_reference_table($1::regclass)", t)
            }
        }
        // Each tenant's record count (quotas), counted once for namespaces made before it.
        if !(try await PostgresStore.columnExists(conn, namespace, "cirrus_tenants", "records", logger)) {
            try await exec("ALTER TABLE \(tenants) ADD COLUMN records bigint NOT NULL DEFAULT 0")
            try await exec(
                "UPDATE \(tenants) t SET records = (SELECT count(*) FROM \(names) n WHERE n.tenant = t.tenant)")
        }
        return created
    }

    /// Creates what the change history, the deletion cascade and the assets keep, when missing
    /// (added to namespaces made before they existed); returns the tables created.
    func createHistoryTables() async throws -> [String] {
        var created: [String] = []
        let names = SQLName.qualified(namespace, "cirrus_names")
        // Change history (PostgresStore+Changes.swift): the sequence of each live record's last
        // write, and the deletions. Added to namespaces made before they existed (their
        // records count as written at sequence 0).
        let tombstones = SQLName.qualified(namespace, "cirrus_tombstones")
        try await exec("ALTER TABLE \(names) ADD COLUMN IF NOT EXISTS seq bigint NOT NULL DEFAULT 0")
        try await exec(
            "CREATE INDEX IF NOT EXISTS cirrus_names_seq ON \(names) (tenant, zone_name, seq, zone_owner, record_name)")
        if !(try await PostgresStore.tableExists(conn, namespace, "cirrus_tombstones", logger)) {
            try await exec(
                """
                CREATE TABLE \(tombstones) (tenant text NOT NULL, zone_name text COLLATE "C" NOT NULL,
                    zone_owner text COLLATE "C" NOT NULL, record_name text COLLATE "C" NOT NULL,
                    record_type text NOT NULL, seq bigint NOT NULL,
                    PRIMARY KEY (tenant, zone_name, zone_owner, record_name))
                """)
            try await exec(
                "CREATE INDEX cirrus_tombstones_seq ON \(tombstones) (tenant, zone_name, seq, zone_owner, record_name)")
            created.append(tombstones)
        }
        // deleteSelf references (target → source, within one zone), for the deletion cascade.
        if !(try await PostgresStore.tableExists(conn, namespace, "cirrus_backrefs", logger)) {
            let refs = SQLName.qualified(namespace, "cirrus_backrefs")
            try await exec(
                """
                CREATE TABLE \(refs) (tenant text NOT NULL, zone_name text COLLATE "C" NOT NULL,
                    zone_owner text COLLATE "C" NOT NULL, target_name text COLLATE "C" NOT NULL,
                    source_name text COLLATE "C" NOT NULL,
                    PRIMARY KEY (tenant, zone_name, zone_owner, target_name, source_name))
                """)
            try await exec(
                "CREATE INDEX cirrus_backrefs_source ON \(refs) (tenant, zone_name, zone_owner, source_name)")
            created.append(refs)
        }
        // Assets (PostgresStore+Assets.swift): content-addressed per tenant.
        if !(try await PostgresStore.tableExists(conn, namespace, "cirrus_assets", logger)) {
            let assets = SQLName.qualified(namespace, "cirrus_assets")
            try await exec(
                """
                CREATE TABLE \(assets) (tenant text NOT NULL, hash text COLLATE "C" NOT NULL, bytes bytea NOT NULL,
                    stored_at bigint NOT NULL, PRIMARY KEY (tenant, hash))
                """)
            created.append(assets)
        }
        return created
    }

    /// The stored schema (nil: none yet).
    func storedSchema() async throws -> Schema? {
        var old: Schema? = nil
        for try await s in try await conn.query(
            PostgresQuery(unsafeSQL: "SELECT schema FROM \(schemaTable) WHERE id = 1"), logger: logger
        ).decode(String.self) {
            old = try JSONDecoder().decode(Schema.self, from: Data(s.utf8))
        }
        return old
    }

    /// Creates or alters the table of `t` (columns, indexes) and re-derives its rows when its
    /// searchable fields changed since `old`; returns the table when it was created.
    func evolveTable(_ t: RecordTypeSchema, old: Schema?) async throws -> String? {
        let layout = TableLayout(namespace: namespace, publicTenant: publicTenant, schema: t)
        let before = old?.recordTypes[t.name].map {
            TableLayout(namespace: namespace, publicTenant: publicTenant, schema: $0)
        }
        let exists = try await PostgresStore.tableExists(conn, namespace, layout.table, logger)
        if !exists {
            try await exec(layout.createTable)
        }
        // A table of a type with assets made before `asset_refs` existed: its rows get their
        // references below (else the asset sweep would take their assets).
        var refsMissing = false
        if exists && layout.hasAssets {
            refsMissing = !(try await PostgresStore.columnExists(conn, namespace, layout.table, "asset_refs", logger))
        }
        for sql in layout.addColumns { try await exec(sql) }
        if exists { try await retypeNumbers(layout) }
        let wanted = layout.indexes
        var have: Set<String> = []
        var find = PostgresBindings()
        find.append(namespace)
        find.append(layout.table)
        for try await n in try await conn.query(
            PostgresQuery(
                unsafeSQL: "SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = $2 "
                    + "AND indexname LIKE 'i\\_%'", binds: find), logger: logger
        ).decode(String.self) { have.insert(n) }
        for n in have.subtracting(wanted.keys).sorted() {
            try await exec("DROP INDEX \(SQLName.qualified(namespace, n))")
        }
        for (n, sql) in wanted.sorted(by: { $0.key < $1.key }) where !have.contains(n) {
            try await exec(sql)
        }
        // A stored record never holds a field its schema lacked (development grows the schema
        // first, production refuses), and fields are never retyped: new columns start NULL
        // correctly. Only the tokens depend on options, so only a change of the searchable
        // fields re-derives rows.
        if refsMissing || (exists && before.map { $0.searchableFields != layout.searchableFields } == true) {
            try await PostgresStore.rederive(conn, layout, logger)
        }
        return exists ? nil : layout.qualifiedTable
    }

    /// Retypes the number columns of a table made when numbers were one `numeric` column: INT64
    /// fields to `bigint`, DOUBLE fields to `float8` (a rewrite of the table and its indexes, once).
    /// A `numeric` value holds a Double exactly as `float8` does (it was written from the Double's
    /// round-trip digits); an INT64 field's non-integral value — which the store accepted then and
    /// refuses now — has no `bigint` form and becomes NULL (the record's bytes keep it).
    func retypeNumbers(_ layout: TableLayout) async throws {
        var b = PostgresBindings()
        b.append(namespace)
        b.append(layout.table)
        var numeric: Set<String> = []
        for try await name in try await conn.query(
            PostgresQuery(
                unsafeSQL: "SELECT column_name FROM information_schema.columns WHERE table_schema = $1 "
                    + "AND table_name = $2 AND udt_name IN ('numeric', '_numeric')", binds: b), logger: logger
        ).decode(String.self) { numeric.insert(name) }
        let columns = layout.sortedColumns.filter { $0.family == .number && numeric.contains($0.name) }
        guard !columns.isEmpty else { return }
        // Values an INT64 column cannot hold first (the USING clause cannot hold a subquery).
        func bad(_ e: String) -> String {
            "\(e) <> trunc(\(e)) OR \(e) NOT BETWEEN -9223372036854775808 AND 9223372036854775807"
        }
        for c in columns where c.type.isInteger {
            let condition = c.isList ? "EXISTS (SELECT 1 FROM unnest(\(c.sql)) AS e WHERE \(bad("e")))" : bad(c.sql)
            try await exec("UPDATE \(layout.qualifiedTable) SET \(c.sql) = NULL WHERE \(condition)")
        }
        let changes = columns.map { c -> String in
            let type = c.type.sqlElementType + (c.isList ? "[]" : "")
            return "ALTER COLUMN \(c.sql) TYPE \(type) USING \(c.sql)::\(type)"
        }
        try await exec("ALTER TABLE \(layout.qualifiedTable) " + changes.joined(separator: ", "))
        logger.info(
            "retyped number columns of \(layout.qualifiedTable) from numeric: \(columns.map(\.name).joined(separator: ", "))"
        )
    }

    /// Under Citus, distributes the tables `created` on `tenant`, colocated with the first.
    func distribute(_ created: [String]) async throws {
        guard citus else { return }
        for (i, table) in created.enumerated() {
            var t = PostgresBindings()
            t.append(table)
            t.append(created[0])
            let colocate = i == 0 ? "'default'" : "$2"
            try await exec(
                "SELECT create_distributed_table($1::regclass, 'tenant', colocate_with => \(colocate))",
                i == 0
                    ? {
                        var one = PostgresBindings(); one.append(table); return one
                    }() : t)
        }
    }
}

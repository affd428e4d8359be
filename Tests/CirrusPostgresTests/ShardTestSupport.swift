// The multi-node layout the sharded tests run on, standing in for Citus (docs/scale-out.md
// "Multi-node"): a coordinator and two workers from CIRRUS_POSTGRES_SHARDS (three URLs,
// `make test-postgres-shards` brings them up with scripts/postgres-shards.sh, whose postgres_fdw
// servers on the coordinator are `shard0` and `shard1`). The shard DDL is made here, not by the
// store: the schema is applied by a single-node store on each worker (the real tables and their
// indexes), and on the coordinator each of the container's tables except `cirrus_schema` becomes
// `PARTITION BY HASH (tenant)` with partitions `<table>_shard0` / `<table>_shard1`, foreign
// tables over the workers' tables.

import CirrusPostgres
import Foundation
import Logging
import PostgresNIO
import RecordModel
import Testing

enum Shards {
    /// `coordinator worker0 worker1`, from `CIRRUS_POSTGRES_SHARDS`.
    static let urls: [String] =
        ProcessInfo.processInfo.environment["CIRRUS_POSTGRES_SHARDS"]?.split(separator: " ").map(String.init) ?? []

    /// Whether the three servers are configured.
    static var available: Bool { urls.count == 3 }

    static let disabledReason: Comment =
        "CIRRUS_POSTGRES_SHARDS is not set (three URLs: coordinator, worker 0, worker 1): run `make test-postgres-shards`"

    static var coordinator: String { urls[0] }
    static var workers: [String] { Array(urls[1...]) }

    /// The foreign servers of the workers on the coordinator, in `workers` order.
    static let servers = ["shard0", "shard1"]

    static func tenant(_ container: String, _ owner: String) -> PostgresTenant {
        PostgresTenant(containerID: container, environment: .development, database: .private(owner: "_" + owner))
    }

    /// Creates `schema`'s tables for `container`: real tables on both workers, hash-partitioned
    /// foreign tables on the coordinator.
    static func create(_ container: String, _ schema: Schema) async throws {
        let any = tenant(container, "setup")
        for url in workers + [coordinator] {
            let s = try await PostgresStore.connect(url: url, tenant: any)
            try await s.apply(schema: schema)
            await s.close()
        }
        let ns = quote(any.namespace)
        try await withConnection(coordinator) { c in
            var tables: [String] = []
            for try await t in try await c.query(
                "SELECT tablename FROM pg_tables WHERE schemaname = \(any.namespace) AND tablename <> 'cirrus_schema'",
                logger: logger
            ).decode(String.self) { tables.append(t) }
            #expect(tables.count == schema.recordTypes.count + 2, "the tables of \(any.namespace): \(tables)")
            try await exec(c, "BEGIN")
            for t in tables {
                let table = "\(ns).\(quote(t))"
                let template = "\(ns).\(quote(t + "_template"))"
                try await exec(c, "ALTER TABLE \(table) RENAME TO \(quote(t + "_template"))")
                try await exec(
                    c, "CREATE TABLE \(table) (LIKE \(template) INCLUDING DEFAULTS) PARTITION BY HASH (tenant)")
                for (i, server) in servers.enumerated() {
                    try await exec(
                        c,
                        "CREATE FOREIGN TABLE \(ns).\(quote(t + "_" + server)) PARTITION OF \(table) "
                            + "FOR VALUES WITH (MODULUS 2, REMAINDER \(i)) SERVER \(server) "
                            + "OPTIONS (schema_name \(literal(any.namespace)), table_name \(literal(t)))")
                }
                try await exec(c, "DROP TABLE \(template)")
            }
            try await exec(c, "COMMIT")
        }
    }

    /// A hash-partitioned store on the coordinator for `owner`'s private database of `container`.
    static func store(
        _ container: String, _ owner: String, timeout: Duration = .seconds(10)
    ) async throws
        -> PostgresStore
    {
        try await PostgresStore.connect(
            url: coordinator, tenant: tenant(container, owner), timeout: timeout, clock: PG.steppingClock(),
            layout: .hashPartitioned)
    }

    /// The index (0 or 1) of the worker holding `tenant`'s rows, read from the workers themselves.
    static func worker(of tenant: PostgresTenant) async throws -> Int? {
        var found: [Int] = []
        for (i, url) in workers.enumerated() {
            try await withConnection(url) { c in
                let table = "\(quote(tenant.namespace)).cirrus_tenants"
                for try await n in try await c.query(
                    PostgresQuery(
                        unsafeSQL: "SELECT count(*) FROM \(table) WHERE tenant = $1",
                        binds: {
                            var b = PostgresBindings(); b.append(tenant.key); return b
                        }()), logger: logger
                ).decode(Int.self) where n > 0 { found.append(i) }
            }
        }
        #expect(found.count <= 1, "a tenant's rows on one worker only: \(tenant.key) on \(found)")
        return found.first
    }

    /// The Debian cluster (`pg_lsclusters`) listening on `url`'s port.
    static func cluster(of url: String) throws -> String {
        let port = URLComponents(string: url)?.port ?? 5432
        let out = try shell("pg_lsclusters", "-h")
        for line in out.split(separator: "\n") {
            let f = line.split(separator: " ", omittingEmptySubsequences: true)
            if f.count >= 3, f[2] == "\(port)" { return String(f[1]) }
        }
        throw TestFailure("no cluster on port \(port) in pg_lsclusters:\n\(out)")
    }

    /// `pg_ctlcluster 15 NAME stop|start`.
    static func control(_ url: String, _ action: String) throws {
        _ = try shell("pg_ctlcluster", "15", try cluster(of: url), action)
    }

    // MARK: - plumbing

    static let logger = Logger(label: "cirrus.postgres.shards.test")

    struct TestFailure: Error, CustomStringConvertible {
        var description: String
        init(_ d: String) { description = d }
    }

    static func shell(_ args: String...) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = args
        // Output to a file, not a pipe: `pg_ctlcluster start` leaves a server holding it open.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("cirrus-shards-\(UUID().uuidString)")
        FileManager.default.createFile(atPath: file.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: file) }
        let handle = try FileHandle(forWritingTo: file)
        p.standardOutput = handle
        p.standardError = handle
        p.standardInput = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        try handle.close()
        let out = String(decoding: (try? Data(contentsOf: file)) ?? Data(), as: UTF8.self)
        guard p.terminationStatus == 0 else {
            throw TestFailure("\(args.joined(separator: " ")) exited \(p.terminationStatus): \(out)")
        }
        return out
    }

    static func quote(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
    static func literal(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "''") + "'" }

    static func exec(_ c: PostgresConnection, _ sql: String) async throws {
        for try await _ in try await c.query(PostgresQuery(unsafeSQL: sql), logger: logger) {}
    }

    static func withConnection<T>(_ url: String, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        let u = URLComponents(string: url)!
        let config = PostgresConnection.Configuration(
            host: u.host!, port: u.port ?? 5432, username: u.user!, password: u.password,
            database: String(u.path.dropFirst()), tls: .disable)
        let c = try await PostgresConnection.connect(configuration: config, id: 1, logger: logger)
        do {
            let v = try await body(c)
            try await c.close()
            return v
        } catch {
            try? await c.close()
            throw error
        }
    }
}

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

#if canImport(Glibc)
    import Glibc
#endif

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
            #expect(tables.count == schema.recordTypes.count + 5, "the tables of \(any.namespace): \(tables)")
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

    /// Owners `user0`, `user1`, … of `container` chosen so that `perWorker` of them hash to each
    /// worker, in the order found. The coordinator's own partitioning answers
    /// (`satisfies_hash_partition` on `cirrus_tenants`), so no row is written; the tests still
    /// read where each tenant's rows landed with `worker(of:)`. Eight fixed owners left a worker
    /// without a tenant once in 128 containers (the container's name is random).
    static func owners(_ container: String, perWorker: Int) async throws -> [String] {
        let parent = "\(quote(tenant(container, "setup").namespace)).cirrus_tenants"
        var chosen: [[String]] = [[], []]
        try await withConnection(coordinator) { c in
            for n in 0..<1024 where chosen.contains(where: { $0.count < perWorker }) {
                let owner = "user\(n)"
                for try await zero in try await c.query(
                    PostgresQuery(
                        unsafeSQL: "SELECT satisfies_hash_partition('\(parent)'::regclass, 2, 0, $1::text)",
                        binds: {
                            var b = PostgresBindings(); b.append(tenant(container, owner).key); return b
                        }()), logger: logger
                ).decode(Bool.self) {
                    let worker = zero ? 0 : 1
                    if chosen[worker].count < perWorker { chosen[worker].append(owner) }
                }
            }
        }
        guard chosen.allSatisfy({ $0.count == perWorker }) else {
            throw TestFailure("\(perWorker) owners on each worker not found among 1024: \(chosen)")
        }
        return (chosen[0] + chosen[1]).sorted { $0.count != $1.count ? $0.count < $1.count : $0 < $1 }
    }

    /// The Debian cluster (`pg_lsclusters`) listening on `url`'s port.
    static func cluster(of url: String) async throws -> String {
        let port = URLComponents(string: url)?.port ?? 5432
        let out = try await shell(["pg_lsclusters", "-h"], timeout: .seconds(30))
        for line in out.split(separator: "\n") {
            let f = line.split(separator: " ", omittingEmptySubsequences: true)
            if f.count >= 3, f[2] == "\(port)" { return String(f[1]) }
        }
        throw TestFailure("no cluster on port \(port) in pg_lsclusters:\n\(out)")
    }

    /// The process id of the postmaster listening on `url`'s port (the first line of
    /// `postmaster.pid` in its data directory, as `pg_lsclusters` lists it).
    static func postmaster(of url: String) async throws -> pid_t {
        let port = URLComponents(string: url)?.port ?? 5432
        let out = try await shell(["pg_lsclusters", "-h"], timeout: .seconds(30))
        for line in out.split(separator: "\n") {
            let f = line.split(separator: " ", omittingEmptySubsequences: true)
            guard f.count >= 6, f[2] == "\(port)" else { continue }
            let text = try String(contentsOfFile: "\(f[5])/postmaster.pid", encoding: .utf8)
            if let first = text.split(separator: "\n").first, let pid = pid_t(first), pid > 1 { return pid }
            throw TestFailure("no process id in \(f[5])/postmaster.pid: \(text)")
        }
        throw TestFailure("no cluster on port \(port) in pg_lsclusters:\n\(out)")
    }

    /// `pg_ctlcluster 15 NAME stop|start` (`stop` is pg_ctlcluster's default, fast mode: sessions
    /// are ended, then a shutdown checkpoint), failing after 90 s (`start` waits for the server).
    static func control(_ url: String, _ action: String) async throws {
        _ = try await shell(["pg_ctlcluster", "15", try await cluster(of: url), action], timeout: .seconds(90))
    }

    // MARK: - plumbing

    static let logger = Logger(label: "cirrus.postgres.shards.test")

    struct TestFailure: Error, CustomStringConvertible {
        var description: String
        init(_ d: String) { description = d }
    }

    /// Runs `args` (looked up in PATH) with stdin from /dev/null, stdout and stderr to a file, and
    /// no other descriptor of this process; returns the output, throws when it exits non-zero or
    /// outlives `timeout` (it is then killed).
    ///
    /// Not Foundation's `Process`: on Linux it learns that the child exited from EOF on a socket
    /// pair whose other end the child inherits, and `pg_ctlcluster start` hands that end on to
    /// the server it daemonizes — so the socket never closes, the exited `pg_ctlcluster` is never
    /// reaped and `waitUntilExit()` never returns (the hang of the worker-stop test: a zombie
    /// `pg_ctlcluster` under the test process, the restarted postmaster holding the socket).
    static func shell(_ args: [String], timeout: Duration) async throws -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("cirrus-shards-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, file.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Every other descriptor is closed in the child (glibc ignores one closed meanwhile).
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for fd in open.compactMap({ Int32($0) }) where fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Its own process group, so a timeout kills pg_ctlcluster and what it runs (a server
        // started by pg_ctl is in a session of its own and stays).
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0)
        var argv: [UnsafeMutablePointer<CChar>?] = args.map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, args[0], &actions, &attributes, &argv, environ)
        guard spawned == 0 else { throw TestFailure("cannot run \(args[0]): \(String(cString: strerror(spawned)))") }
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var status: Int32 = 0
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { break }
            if r < 0 && errno != EINTR { throw TestFailure("waitpid \(args[0]): errno \(errno)") }
            if clock.now >= deadline {
                kill(-pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                let out = String(decoding: (try? Data(contentsOf: file)) ?? Data(), as: UTF8.self)
                throw TestFailure("\(args.joined(separator: " ")) did not end within \(timeout), killed: \(out)")
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        let out = String(decoding: (try? Data(contentsOf: file)) ?? Data(), as: UTF8.self)
        // Exited normally (low 7 bits 0) with status 0.
        guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
            throw TestFailure("\(args.joined(separator: " ")) ended with wait status \(status): \(out)")
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

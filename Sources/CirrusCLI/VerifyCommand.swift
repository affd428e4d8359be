// `cirrus verify`: check a store's files read-only.

import ArgumentParser
import Cirrus
import CirrusPostgres
import CirrusShell
import RecordModel

struct Verify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a container without changing it.",
        discussion: """
            For each environment's log (DIR/development, DIR/production): segments, frames, bytes, \
            live records per type and zone, any torn tail or corruption with its segment and byte \
            offset, and a check of every index against its rows. Exit status: 0 clean, 1 damaged or \
            unreadable, 2 usage.

            With --postgres URL, the container on PostgreSQL (--container ID), each environment it has: \
            every name has its row and every row its name, each database's record count, and every \
            row's stored record decodes to its key and type (read-only).

            Examples:
              cirrus verify --db places --json
              cirrus verify --db places --postgres postgres://cirrus@127.0.0.1:5432/cirrus
            """)

    @OptionGroup var store: StoreOptions

    @Flag(help: "Print the report as a JSON object.")
    var json = false

    func run() async throws {
        if let url = store.postgres {
            try finish(await verifyPostgres(url))
            return
        }
        try finish(StoreCommands.verify(db: store.db, json: json))
    }

    /// Every environment the PostgreSQL container has, checked read-only.
    func verifyPostgres(_ url: String) async -> CommandOutput {
        var out = CommandOutput()
        var reports: [(String, JSONValue)] = []
        var clean = true
        var found = false
        for env in [Environment.development, .production] {
            do {
                guard try await PostgresContainer.exists(url: url, containerID: store.containerID, environment: env)
                else {
                    continue
                }
                found = true
                let c = try await store.open(env)
                defer { try? c.close() }
                guard let postgres = c.postgres else { continue }
                let r = try await postgres.verify()
                clean = clean && r.isClean
                out.stdout += json ? "" : "[\(env.rawValue)]\n" + r.text
                reports.append(
                    (
                        env.rawValue,
                        .object([
                            ("namespace", .string(r.namespace)), ("clean", .bool(r.isClean)),
                            ("databases", .integer(Int64(r.tenants))), ("rowsChecked", .integer(Int64(r.rowsChecked))),
                            (
                                "recordsByType",
                                .object(
                                    r.recordsByType.sorted { $0.key < $1.key }.map {
                                        ($0.key, .integer(Int64($0.value)))
                                    })
                            ),
                            ("problems", .array(r.problems.map { .string($0) })),
                        ])
                    ))
            } catch {
                out.stderr += "cirrus verify: \(env.rawValue): \(error)\n"
                clean = false
            }
        }
        if !found && out.stderr.isEmpty {
            out.stderr =
                "cirrus verify: no container \(store.containerID) at \(url) (no development or production tables)\n"
            out.exitCode = 1
            return out
        }
        if json {
            out.stdout =
                JSONValue.object([
                    ("container", .string(store.containerID)), ("clean", .bool(clean)),
                    ("environments", .object(reports)),
                ]).jsonText + "\n"
        }
        out.exitCode = clean ? 0 : 1
        return out
    }
}

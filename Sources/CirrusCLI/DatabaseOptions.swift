// The options that pick a database of a container, shared by import, export and get:
// `--environment`, `--database public|private`, `--as USER`; and where the container is — `--db DIR`,
// or `--postgres URL --container ID` — shared by every command that reads or writes a container's
// records, schema, roles or users.

import ArgumentParser
import Cirrus
import CirrusPostgres
import CirrusShell
import RecordModel

struct DatabaseOptions: ParsableArguments {
    @Option(help: ArgumentHelp("development (default) or production.", valueName: "ENV"))
    var environment: String = "development"

    @Option(help: ArgumentHelp("public (default) or private.", valueName: "DATABASE"))
    var database: String = "public"

    @Option(
        name: .customLong("as"),
        help: ArgumentHelp("Act as this user (user record name); required for --database private.", valueName: "USER"))
    var user: String?

    func validate() throws {
        if Environment(rawValue: environment) == nil {
            throw ValidationError("--environment is development or production")
        }
        if database != "public" && database != "private" { throw ValidationError("--database is public or private") }
        if database == "private" && user == nil { throw ValidationError("--database private needs --as USER") }
    }

    func target(zone: String?) -> DatabaseTarget {
        DatabaseTarget(
            environment: Environment(rawValue: environment) ?? .development, database: database, user: user, zone: zone)
    }
}

/// Where the container is: `--db DIR`, its directory (created by `import` when missing); with
/// `--postgres URL` and `--container ID`, the container kept on PostgreSQL + PostGIS
/// (docs/scale-out.md) instead of DIR's files — the container `cirrus serve --db DIR --postgres
/// URL --container ID` serves. DIR still names the container's directory (its credentials).
struct StoreOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The container directory.", valueName: "DIR"))
    var db: String

    @Option(
        help: ArgumentHelp(
            "Work on the container on PostgreSQL + PostGIS (postgres://user[:password]@host[:port]/database) "
                + "instead of DIR's files.",
            valueName: "URL"))
    var postgres: String?

    @Option(
        name: .customLong("container"),
        help: ArgumentHelp(
            "With --postgres: the container identifier (as `cirrus serve --container`).", valueName: "ID"))
    var containerID = "iCloud.local.cirrus"

    /// The container on PostgreSQL in `environment` (the caller checked `postgres` is set).
    func open(_ environment: Environment) async throws -> Container {
        try await Container.open(postgres: postgres ?? "", containerID: containerID, environment: environment)
    }
}

extension StoreOptions {
    /// Runs `body` on the PostgreSQL container in `environment`, closing it after; a container
    /// that cannot be opened is `cirrus COMMAND: …` and exit 1.
    func withContainer(
        _ environment: Environment, command: String, _ body: (Container) async -> CommandOutput
    ) async -> CommandOutput {
        let c: Container
        do {
            c = try await open(environment)
        } catch {
            return CommandOutput(stderr: "cirrus \(command): \(error)\n", exitCode: 1)
        }
        let out = await body(c)
        try? c.close()
        return out
    }

    /// Runs `body` on the database `target` names, of the PostgreSQL container in its environment.
    func withDatabase(
        _ target: DatabaseTarget, command: String, _ body: (Database) async -> CommandOutput
    ) async -> CommandOutput {
        let scope: Database.Scope
        switch target.scope() {
        case .success(let s): scope = s
        case .failure(let e): return CommandOutput(stderr: "cirrus \(command): \(e)\n", exitCode: 2)
        }
        return await withContainer(target.environment, command: command) { c in
            await body(c.database(scope, as: target.identity))
        }
    }
}

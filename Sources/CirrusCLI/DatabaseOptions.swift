// The options that pick a database of a container, shared by import, export and get:
// `--environment`, `--database public|private`, `--as USER`.

import ArgumentParser
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

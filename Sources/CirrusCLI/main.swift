// The `cirrus` command line: ArgumentParser front end over CirrusShell.
//
// Exit codes: 0 ok, 1 rejected / not found / damaged, 2 usage error. Errors go to standard error.

import ArgumentParser
import Foundation

struct CirrusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cirrus",
        abstract: "Cirrus — a CloudKit-compatible predicate query engine.",
        discussion: """
            Every command takes --db DIR (a container directory) where it needs one; --json prints \
            JSON. Exit status: 0 ok, 1 rejected / not found / damaged, 2 usage. Errors go to standard error.

            Examples (each command's --help has more):
              cirrus check "kind == 'cafe' AND population > 100"
              cirrus query --db DIR --type Place "kind == 'museum'" --sort -population
              cirrus query --db DIR --type Place --sort location@48.8584,2.2945
              cirrus explain --db DIR --type Place "population > 1000" --limit 10
              cirrus import --db DIR places.jsonl.gz
              cirrus export --db DIR --type Place > places.jsonl
              cirrus get --db DIR --type Place louvre --json
              cirrus schema --db DIR --export > schema.ckdb
              cirrus role create --db DIR Moderator && cirrus role grant --db DIR Moderator read --type Post
              cirrus reset --db DIR --environment development
              cirrus users add --db DIR _bob --email bob@example.com --discoverable
              cirrus verify --db DIR || cirrus repair --db DIR
              cirrus coredata schema --dry-run Model.xcdatamodeld
              cirrus token create --db DIR && cirrus serve --db DIR --port 8080
              cirrus repl                  (the demo database; `help` at the prompt)
            """,
        subcommands: [
            Check.self, QueryCommand.self, ExplainCommand.self, Import.self, Export.self, Get.self, SchemaCommand.self,
            Verify.self, Repair.self, RoleCommand.self, ResetCommand.self, UsersCommand.self, ReplCommand.self,
            CoreDataCommand.self,
            ServeCommand.self,
            TokenCommand.self,
            KeyCommand.self,
        ])
}

/// Writes to standard error.
func printError(_ text: String) {
    FileHandle.standardError.write(Data((text.hasSuffix("\n") ? text : text + "\n").utf8))
}

/// Runs an async subcommand (`get`). Generic, so that `run()` resolves to the async
/// requirement: on the existential it resolved to ParsableCommand's synchronous `run()`, which
/// prints the help text.
func runAsync<C: AsyncParsableCommand>(_ command: inout C) async throws { try await command.run() }

do {
    var command = try CirrusCommand.parseAsRoot()
    if var asyncCommand = command as? any AsyncParsableCommand {
        try await runAsync(&asyncCommand)
    } else {
        try command.run()
    }
} catch {
    let code = CirrusCommand.exitCode(for: error)
    if code == .validationFailure {
        printError(CirrusCommand.fullMessage(for: error))
        exit(2)
    }
    CirrusCommand.exit(withError: error)
}

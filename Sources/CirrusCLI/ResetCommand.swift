// `cirrus reset`: reset a container's development environment (asks on a terminal, --yes otherwise).

import ArgumentParser
import Cirrus
import CirrusPostgres
import CirrusShell
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

struct ResetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset",
        abstract: "Reset the development environment: delete its schema, records, zones and subscriptions.",
        discussion: """
            Everything of the development environment goes — the schema (a new one grows from the next \
            save), every record, zone, subscription, asset and change of every database — in one atomic \
            step: a kill leaves it reset or as it was. Production is never touched and cannot be reset. \
            No development container (or `cirrus serve`) may be open on DIR. On a terminal it asks you \
            to type the directory's name; elsewhere pass --yes. Exit status: 0 ok, 1 refused or failed, 2 usage.

            Examples:
              cirrus reset --db places --environment development
              cirrus reset --db places --environment development --yes
              cirrus reset --db places --postgres postgres://cirrus@127.0.0.1:5432/cirrus --environment development --yes

            With --postgres URL, the development namespace of the container on PostgreSQL \
            (--container ID) is dropped in one transaction (refused while another process uses it); \
            the confirmation word is then the container identifier.
            """)

    @OptionGroup var store: StoreOptions

    @Option(help: ArgumentHelp("development (the only environment that can be reset).", valueName: "ENV"))
    var environment: String

    @Flag(help: "Do not ask for confirmation.")
    var yes = false

    func run() async throws {
        let word = store.postgres != nil ? store.containerID : ResetCommands.confirmationWord(db: store.db)
        if environment == "development", !yes {
            guard isatty(0) == 1 else {
                throw ValidationError("standard input is not a terminal: pass --yes to reset without confirmation")
            }
            FileHandle.standardError.write(
                Data(
                    (store.postgres != nil
                        ? "This deletes the development schema and every record, zone, subscription and change of "
                            + "the development environment of \(word) on PostgreSQL. Production is not touched.\n"
                            + "Type \(word) to confirm: "
                        : ResetCommands.warning(db: store.db)).utf8))
            let answer = readLine(strippingNewline: true) ?? ""
            guard answer == word else {
                printError("cirrus reset: not confirmed; nothing was changed")
                throw ExitCode(1)
            }
        }
        var out = ResetCommands.run(db: store.db, environment: environment, checkOnly: store.postgres != nil)
        if let url = store.postgres, out.exitCode == 0 {
            do {
                try await Container.resetDevelopment(postgres: url, containerID: store.containerID)
                out = CommandOutput(
                    stdout:
                        "reset the development environment of \(store.containerID) on PostgreSQL (production untouched)\n"
                )
            } catch {
                out = CommandOutput(stderr: "cirrus reset: \(error)\n", exitCode: 1)
            }
        }
        if out.exitCode == 2 {
            throw ValidationError(
                out.stderr.trimmingCharacters(in: .newlines).replacingOccurrences(of: "cirrus reset: ", with: ""))
        }
        try finish(out)
    }
}

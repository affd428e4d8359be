// `cirrus reset`: reset a container's development environment (asks on a terminal, --yes otherwise).

import ArgumentParser
import CirrusShell
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

struct ResetCommand: ParsableCommand {
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
            """)

    @Option(help: ArgumentHelp("The container directory.", valueName: "DIR"))
    var db: String

    @Option(help: ArgumentHelp("development (the only environment that can be reset).", valueName: "ENV"))
    var environment: String

    @Flag(help: "Do not ask for confirmation.")
    var yes = false

    func run() throws {
        if environment == "development", !yes {
            guard isatty(0) == 1 else {
                throw ValidationError("standard input is not a terminal: pass --yes to reset without confirmation")
            }
            FileHandle.standardError.write(Data(ResetCommands.warning(db: db).utf8))
            let answer = readLine(strippingNewline: true) ?? ""
            guard answer == ResetCommands.confirmationWord(db: db) else {
                printError("cirrus reset: not confirmed; nothing was changed")
                throw ExitCode(1)
            }
        }
        let out = ResetCommands.run(db: db, environment: environment)
        if out.exitCode == 2 {
            throw ValidationError(
                out.stderr.trimmingCharacters(in: .newlines).replacingOccurrences(of: "cirrus reset: ", with: ""))
        }
        try finish(out)
    }
}

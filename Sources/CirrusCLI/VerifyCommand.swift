// `cirrus verify`: check a store's files read-only.

import ArgumentParser
import CirrusShell

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a container without changing it.",
        discussion: """
            For each environment's log (DIR/development, DIR/production): segments, frames, bytes, \
            live records per type and zone, any torn tail or corruption with its segment and byte \
            offset, and a check of every index against its rows. Exit status: 0 clean, 1 damaged or \
            unreadable, 2 usage.

            Example:
              cirrus verify --db places --json
            """)

    @Option(help: ArgumentHelp("The container directory.", valueName: "DIR"))
    var db: String

    @Flag(help: "Print the report as a JSON object.")
    var json = false

    func run() throws {
        try finish(StoreCommands.verify(db: db, json: json))
    }
}

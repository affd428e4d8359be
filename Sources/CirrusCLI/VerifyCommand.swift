// `cirrus verify`: check a store's files read-only.

import ArgumentParser
import CirrusShell

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a store without changing it.",
        discussion: """
            Reports segments, frames, bytes, live records per type and zone, and any torn tail or \
            corruption with its segment and byte offset. Exit status: 0 clean, 1 damaged or \
            unreadable, 2 usage.

            Example:
              cirrus verify --db places.db --json
            """)

    @Option(help: ArgumentHelp("The store directory.", valueName: "DIR"))
    var db: String

    @Flag(help: "Print the report as a JSON object.")
    var json = false

    func run() throws {
        try finish(StoreCommands.verify(db: db, json: json))
    }
}

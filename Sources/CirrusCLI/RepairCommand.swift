// `cirrus repair`: salvage a damaged container into a verified one, keeping every replaced file.

import ArgumentParser
import Cirrus
import CirrusServer
import CirrusShell

struct Repair: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Salvage a damaged container into a verified one; nothing is deleted.",
        discussion: """
            For each environment (or --environment's): every record whose bytes pass their checksums \
            is kept unchanged; a lost or damaged CURRENT is rebuilt from the segments; indexes and \
            other derived data are rebuilt; the JSON files beside the store (cursor secrets, \
            subscriptions, users, tokens and keys) keep every entry that still reads. Damaged and \
            replaced files are moved under DIR/ENV/damaged/<time>/ (DIR/damaged/ for the container's \
            own files) with a REPORT.txt. Prints what was lost: counts, record names or the ids they \
            lie between. The container must not be open (close `cirrus serve` first). Exit status: \
            0 nothing lost, 1 something lost or the repair could not run, 2 usage.

            Example:
              cirrus verify --db places || cirrus repair --db places
            """)

    @Option(help: ArgumentHelp("The container directory.", valueName: "DIR"))
    var db: String

    @Option(help: ArgumentHelp("Repair only this environment: development or production.", valueName: "ENV"))
    var environment: String?

    @Flag(help: "Print the report as a JSON object.")
    var json = false

    func run() throws {
        let db = self.db
        try finish(
            RepairCommands.repair(db: db, environment: environment, json: json) { options throws(CirrusError) in
                try Credentials.repair(directory: db, options: options).map { [$0] } ?? []
            })
    }
}

// `cirrus get`: print one record.

import ArgumentParser
import CirrusShell
import RecordModel

struct Get: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print one record.",
        discussion: """
            Exit status: 0 found, 1 not found or the store cannot be read, 2 usage.

            Example:
              cirrus get --db places.db --type Place louvre --json
            """)

    @Option(help: ArgumentHelp("The store directory.", valueName: "DIR"))
    var db: String

    @Option(name: .customLong("type"), help: ArgumentHelp("The record type.", valueName: "TYPE"))
    var recordType: String

    @Option(help: ArgumentHelp("The zone name (default: the default zone).", valueName: "ZONE"))
    var zone: String?

    @Argument(help: "The record name.")
    var recordName: String

    @Flag(help: "Print the record as Web Services JSON.")
    var json = false

    func run() throws {
        let z = zone.map { ZoneID(zoneName: $0) } ?? .default
        try finish(StoreCommands.get(db: db, type: recordType, recordName: recordName, zone: z, json: json))
    }
}

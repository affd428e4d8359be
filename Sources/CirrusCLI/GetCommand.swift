// `cirrus get`: print one record.

import ArgumentParser
import CirrusShell
import RecordModel

struct Get: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print one record.",
        discussion: """
            Fetches through the database API, so access rules apply (a private database needs \
            --as its owner). Exit status: 0 found, 1 not found, not allowed or the container cannot \
            be read, 2 usage.

            Example:
              cirrus get --db places --type Place louvre --json
              cirrus get --db notes --database private --as _alice --zone Work --type Note n1
              cirrus get --db places --postgres postgres://cirrus@127.0.0.1:5432/cirrus --type Place louvre
            """)

    @OptionGroup var store: StoreOptions

    @Option(name: .customLong("type"), help: ArgumentHelp("The record type.", valueName: "TYPE"))
    var recordType: String

    @Option(help: ArgumentHelp("The zone name (default: the default zone).", valueName: "ZONE"))
    var zone: String?

    @Argument(help: "The record name.")
    var recordName: String

    @Flag(help: "Print the record as Web Services JSON.")
    var json = false

    @OptionGroup var target: DatabaseOptions

    func run() async throws {
        let z = zone.map { ZoneID(zoneName: $0) } ?? .default
        if store.postgres != nil {
            let (type, name, json) = (recordType, recordName, json)
            try finish(
                await store.withDatabase(target.target(zone: nil), command: "get") { db in
                    await StoreCommands.get(db, type: type, recordName: name, zone: z, json: json)
                })
            return
        }
        try finish(
            await StoreCommands.get(
                db: store.db, type: recordType, recordName: recordName, zone: z, json: json,
                target: target.target(zone: nil))
        )
    }
}

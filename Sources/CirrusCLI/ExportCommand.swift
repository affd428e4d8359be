// `cirrus export`: write a store's live records as Web Services JSON Lines.

import ArgumentParser
import CirrusShell
import Foundation

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Export records as Web Services JSON Lines (the format import reads).",
        discussion: """
            Writes the records of one database (default: public) one per line to standard output, in \
            commit order. Exit status: 0 ok, 1 the store cannot be read, 2 usage.

            Example:
              cirrus export --db places --type Place > places.jsonl
            """)

    @Option(help: ArgumentHelp("The container directory.", valueName: "DIR"))
    var db: String

    @Option(name: .customLong("type"), help: ArgumentHelp("Only records of this type.", valueName: "TYPE"))
    var recordType: String?

    @OptionGroup var target: DatabaseOptions

    @Option(help: ArgumentHelp("Export only this zone.", valueName: "ZONE"))
    var zone: String?

    func run() throws {
        var buffer = ""
        let stdout = FileHandle.standardOutput
        let out = StoreCommands.export(db: db, type: recordType, target: target.target(zone: zone)) { line in
            buffer += line
            if buffer.utf8.count >= 1 << 20 {
                stdout.write(Data(buffer.utf8))
                buffer = ""
            }
        }
        stdout.write(Data(buffer.utf8))
        try finish(out)
    }
}

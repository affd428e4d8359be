// `cirrus export`: write a store's live records as Web Services JSON Lines.

import ArgumentParser
import Cirrus
import CirrusPostgres
import CirrusShell
import Foundation
import RecordModel

struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Export records as Web Services JSON Lines (the format import reads).",
        discussion: """
            Writes the records of one database (default: public) one per line to standard output, in \
            commit order. Exit status: 0 ok, 1 the store cannot be read, 2 usage.

            With --postgres URL the records of the container on PostgreSQL + PostGIS (--container ID), \
            in commit order; importing them again (cirrus import --postgres) keeps every field and \
            system field.

            Examples:
              cirrus export --db places --type Place > places.jsonl
              cirrus export --db places --postgres postgres://cirrus@127.0.0.1:5432/cirrus > places.jsonl
            """)

    @OptionGroup var store: StoreOptions

    @Option(name: .customLong("type"), help: ArgumentHelp("Only records of this type.", valueName: "TYPE"))
    var recordType: String?

    @OptionGroup var target: DatabaseOptions

    @Option(help: ArgumentHelp("Export only this zone.", valueName: "ZONE"))
    var zone: String?

    func run() async throws {
        if store.postgres != nil {
            try finish(await exportPostgres())
            return
        }
        var buffer = ""
        let stdout = FileHandle.standardOutput
        let out = StoreCommands.export(db: store.db, type: recordType, target: target.target(zone: zone)) { line in
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

extension Export {
    /// The records of the PostgreSQL container's database, written to standard output.
    func exportPostgres() async -> CommandOutput {
        let t = target.target(zone: zone)
        let scope: Database.Scope
        switch t.scope() {
        case .success(let s): scope = s
        case .failure(let e): return CommandOutput(stderr: "cirrus export: \(e)\n", exitCode: 2)
        }
        let (type, zone) = (recordType, self.zone.map { ZoneID(zoneName: $0) })
        return await store.withContainer(t.environment, command: "export") { c in
            guard let postgres = c.postgres else {
                return CommandOutput(stderr: "cirrus export: not a PostgreSQL container\n", exitCode: 1)
            }
            let stdout = FileHandle.standardOutput
            var buffer = ""
            do {
                let n = try await postgres.exportRecords(from: scope, type: type, zone: zone) { line in
                    buffer += line
                    if buffer.utf8.count >= 1 << 20 {
                        stdout.write(Data(buffer.utf8))
                        buffer = ""
                    }
                }
                stdout.write(Data(buffer.utf8))
                return CommandOutput(stderr: "exported \(n) records\n")
            } catch {
                stdout.write(Data(buffer.utf8))
                return CommandOutput(stderr: "cirrus export: \(error)\n", exitCode: 1)
            }
        }
    }
}

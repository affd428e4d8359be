// `cirrus schema`: print, import or promote a container's schema (CloudKit's schema language).

import ArgumentParser
import CirrusShell
import RecordModel

struct SchemaCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Print, import or promote a container's schema.",
        discussion: """
            --export (the default) prints the schema in CloudKit's schema language, the format \
            `cktool export-schema` writes. --import FILE replaces it with FILE's schema: types and \
            fields may be added, never removed or retyped; index options and grants are FILE's. \
            --promote copies the development schema to production. Exit status: 0 ok, 1 rejected \
            or unreadable, 2 usage.

            Examples:
              cirrus schema --db places --export > schema.ckdb
              cirrus schema --db places --import schema.ckdb
              cirrus schema --db places --promote
              cirrus schema --db places --postgres postgres://cirrus@127.0.0.1:5432/cirrus --import schema.ckdb
            """)

    @OptionGroup var store: StoreOptions

    @Flag(help: "Print the schema (the default).")
    var export = false

    @Option(name: .customLong("import"), help: ArgumentHelp("Import this schema file.", valueName: "FILE"))
    var importFile: String?

    @Flag(help: "Copy the development schema to production.")
    var promote = false

    @Option(help: ArgumentHelp("development or production.", valueName: "ENV"))
    var environment: String = "development"

    func validate() throws {
        if [export, importFile != nil, promote].filter({ $0 }).count > 1 {
            throw ValidationError("give one of --export, --import FILE, --promote")
        }
        if Environment(rawValue: environment) == nil {
            throw ValidationError("--environment is development or production")
        }
    }

    func run() async throws {
        let env = Environment(rawValue: environment) ?? .development
        let action: SchemaCommands.Action = importFile.map { .importFile($0) } ?? (promote ? .promote : .export)
        if store.postgres != nil {
            // Promotion runs on the development container (it copies development's schema).
            try finish(
                await store.withContainer(promote ? .development : env, command: "schema") { c in
                    await ContainerCommands.schema(c, action: action)
                })
            return
        }
        try finish(SchemaCommands.run(db: store.db, action: action, environment: env))
    }
}

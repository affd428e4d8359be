// `cirrus coredata schema MODEL`: Core Data's CloudKit mirroring of a model (CirrusShell.CoreDataCommands).

import ArgumentParser
import CirrusShell

struct CoreDataCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coredata",
        abstract: "Core Data's CloudKit mirroring: the schema a Core Data model produces.",
        subcommands: [CoreDataSchema.self])
}

struct CoreDataSchema: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Check a Core Data model against CloudKit mirroring's rules and print or import its schema.",
        discussion: """
            MODEL is an .xcdatamodeld directory (its current version), an .xcdatamodel directory or \
            its contents file. Every rule the model breaks is reported with the entity, attribute or \
            relationship and the line of the model file (exit 1). Otherwise --dry-run prints the \
            CloudKit schema that mirroring creates (CD_ record types, CDMR for many-to-many), in the \
            language `cirrus schema --import` reads, and --db DIR adds it to the container's \
            development schema, as initializeCloudKitSchema does. Rules and mapping: docs/coredata.md.

            Examples:
              cirrus coredata schema --dry-run Blog.xcdatamodeld
              cirrus coredata schema --db blog Blog.xcdatamodeld
            """)

    @Argument(help: ArgumentHelp("The Core Data model.", valueName: "MODEL"))
    var model: String

    @Flag(help: "Check and print the schema; touch no container.")
    var dryRun = false

    @Option(help: ArgumentHelp("Import the schema into this container's development environment.", valueName: "DIR"))
    var db: String?

    func validate() throws {
        if dryRun == (db != nil) { throw ValidationError("give one of --dry-run and --db DIR") }
    }

    func run() throws {
        try finish(CoreDataCommands.schema(model: model, db: db, dryRun: dryRun))
    }
}

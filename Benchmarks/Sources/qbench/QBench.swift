// qbench: the command line. Each suite is a subcommand; later suites (parse, ingest, SQLite
// comparisons, …) are added beside `indexes`.

import ArgumentParser

@main
struct QBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "qbench",
        abstract: "Cirrus performance suites on deterministic generated data.",
        subcommands: [IndexesSuite.self])
}

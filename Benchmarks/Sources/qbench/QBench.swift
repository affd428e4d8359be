// qbench: the command line. The default subcommand compares Cirrus with SQLite (Compare.swift);
// `indexes` measures the Indexes module alone; `codec` the record codec alone; `calibrate` measures
// the planner's operator costs; `generate` writes the generated places as JSON Lines.

import ArgumentParser

@main
struct QBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "qbench",
        abstract: "Cirrus performance suites on deterministic generated data, side by side with SQLite.",
        subcommands: [Compare.self, Generate.self, IndexesSuite.self, CodecSuite.self, Probe.self, Calibrate.self],
        defaultSubcommand: Compare.self)
}

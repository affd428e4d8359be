// The `cirrus` command line: ArgumentParser front end over CirrusShell.
//
// Exit codes: 0 ok, 1 rejected / not found / damaged, 2 usage error. Errors go to standard error.

import ArgumentParser
import Foundation

struct CirrusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cirrus",
        abstract: "Cirrus — a CloudKit-compatible predicate query engine.",
        discussion: """
            Examples:
              cirrus check "kind == 'cafe' AND distanceToLocation:fromLocation:(location, %@) < 5" \\
                  --arg '{"type": "LOCATION", "value": {"latitude": 48.8584, "longitude": 2.2945}}'
            """,
        subcommands: [Check.self, Import.self, Export.self, Verify.self, Get.self, SchemaCommand.self])
}

/// Writes to standard error.
func printError(_ text: String) {
    FileHandle.standardError.write(Data((text.hasSuffix("\n") ? text : text + "\n").utf8))
}

do {
    var command = try CirrusCommand.parseAsRoot()
    if var async = command as? any AsyncParsableCommand {
        try await async.run()
    } else {
        try command.run()
    }
} catch {
    let code = CirrusCommand.exitCode(for: error)
    if code == .validationFailure {
        printError(CirrusCommand.fullMessage(for: error))
        exit(2)
    }
    CirrusCommand.exit(withError: error)
}

// `cirrus import`: load Web Services JSON Lines (gzip accepted) or property lists into a store.

import ArgumentParser
import CirrusShell
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import records into a container.",
        discussion: """
            Each FILE is JSON Lines of Web Services records ({"recordName", "recordType", "fields": \
            {name: {"type", "value"}}}), optionally gzip-compressed, or a property list (XML or \
            binary) holding an array of such records, into one database (default: public) as the \
            container's administrator: system fields in the input are kept, custom zones created, and \
            the schema grows (development) or must already declare every type and field \
            (production). A bad record is reported with its line and \
            reason and the rest goes on. Exit status: 0 all imported, 1 some rejected or failed, 2 usage.

            Example:
              cirrus import --db places places.jsonl.gz
            """)

    @Option(help: ArgumentHelp("The container directory (created if missing).", valueName: "DIR"))
    var db: String

    @Argument(help: "Files to import.")
    var files: [String]

    @OptionGroup var target: DatabaseOptions

    @Option(
        help: ArgumentHelp(
            "Put records that name no zone into this zone (created if needed; private databases only).",
            valueName: "ZONE"))
    var zone: String?

    func validate() throws {
        if files.isEmpty { throw ValidationError("give at least one FILE to import") }
    }

    func run() throws {
        // Progress (records/s, ETA) only on a terminal: redirected output stays clean.
        let tty = isatty(1) != 0 && isatty(2) != 0
        let progress: (@Sendable (String) -> Void)? =
            tty ? { @Sendable line in printError("\r" + line + "\u{1B}[K", newline: false) } : nil
        let out = StoreCommands.importFiles(db: db, files: files, target: target.target(zone: zone), progress: progress)
        if tty { printError("", newline: true) }
        try finish(out)
    }
}

/// Writes a command's output and exits with its status.
func finish(_ out: CommandOutput) throws {
    if !out.stdout.isEmpty { FileHandle.standardOutput.write(Data(out.stdout.utf8)) }
    if !out.stderr.isEmpty { FileHandle.standardError.write(Data(out.stderr.utf8)) }
    if out.exitCode != 0 { throw ExitCode(out.exitCode) }
}

/// Writes to standard error, with or without a newline.
func printError(_ text: String, newline: Bool) {
    FileHandle.standardError.write(Data((newline ? text + "\n" : text).utf8))
}

// `cirrus import`: load Web Services JSON Lines (gzip accepted) or property lists into a store.

import ArgumentParser
import Cirrus
import CirrusIO
import CirrusPostgres
import CirrusShell
import Foundation
import RecordLog
import RecordModel

#if canImport(Glibc)
    import Glibc
#endif

struct Import: AsyncParsableCommand {
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

            With --postgres URL the records go into the container on PostgreSQL + PostGIS \
            (--container ID): one transaction, new records through COPY (docs/scale-out.md).

            Examples:
              cirrus import --db places places.jsonl.gz
              cirrus import --db places --postgres postgres://cirrus@127.0.0.1:5432/cirrus places.jsonl
            """)

    @OptionGroup var store: StoreOptions

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

    func run() async throws {
        // Progress (records/s, ETA) only on a terminal: redirected output stays clean.
        let tty = isatty(1) != 0 && isatty(2) != 0
        let progress: (@Sendable (String) -> Void)? =
            tty ? { @Sendable line in printError("\r" + line + "\u{1B}[K", newline: false) } : nil
        let out =
            store.postgres != nil
            ? await importPostgres(progress: progress)
            : StoreCommands.importFiles(
                db: store.db, files: files, target: target.target(zone: zone), progress: progress)
        if tty { printError("", newline: true) }
        try finish(out)
    }
}

extension Import {
    /// The import into the PostgreSQL container: each file one transaction (COPY), reported as
    /// the directory's import reports.
    func importPostgres(progress: (@Sendable (String) -> Void)?) async -> CommandOutput {
        let t = target.target(zone: zone)
        let scope: Database.Scope
        switch t.scope() {
        case .success(let s): scope = s
        case .failure(let e): return CommandOutput(stderr: "cirrus import: \(e)\n", exitCode: 2)
        }
        let files = self.files
        return await store.withContainer(t.environment, command: "import") { c in
            guard let postgres = c.postgres else {
                return CommandOutput(stderr: "cirrus import: not PostgreSQL\n", exitCode: 1)
            }
            var out = CommandOutput()
            var total = ImportSummary()
            var rejections: [String] = []
            var o = ImportOptions()
            o.batchSize = 4096
            if let progress {
                o.progress = { s in
                    progress(
                        String(
                            format: "%ld records, %.1f MB, %.0f records/s", s.records, Double(s.bytes) / 1e6,
                            s.recordsPerSecond))
                }
            }
            do {
                for file in files {
                    let s = try await postgres.importFile(
                        file, into: scope, zone: t.zone.map { ZoneID(zoneName: $0) }, options: o)
                    total.add(s.summary, options: o)
                    rejections += s.rejections
                }
            } catch {
                return CommandOutput(
                    stderr: "cirrus import: \(error) (nothing of this file was imported)\n", exitCode: 1)
            }
            for r in rejections.prefix(o.maximumReportedRejections) { out.stderr += "rejected \(r)\n" }
            if total.rejected > min(rejections.count, o.maximumReportedRejections) {
                out.stderr += "… \(total.rejected - min(rejections.count, o.maximumReportedRejections)) more rejected\n"
            }
            out.stdout = String(
                format: "imported %ld records (%ld rejected), %ld bytes in %.2f s, %.0f records/s\n", total.records,
                total.rejected, total.bytes, total.seconds, total.recordsPerSecond)
            out.exitCode = total.rejected > 0 ? 1 : 0
            return out
        }
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

// RepairCommands: the logic of `cirrus repair --db DIR [--environment ENV] [--json]` — each
// environment of a container repaired (`Container.repair`), plus the container's own files that the
// caller names (the CLI adds the server's `web-services.json`), rendered as text or JSON.
//
// Exit codes: 0 nothing lost (or nothing to repair), 1 something lost or the repair could not run
// (another process has the container open, it is not a container), 2 usage.

import Cirrus
import CirrusIO
import Foundation
import RecordLog
import RecordModel

/// `cirrus repair`.
///
/// ```swift
/// let out = RepairCommands.repair(db: "places", environment: nil, json: false)
/// print(out.stdout, terminator: "")    // [development] … status: repaired, nothing lost
/// ```
public enum RepairCommands {
    /// Repairs `environment` (`development`, `production`, or nil for every environment the
    /// container has) of the container `db`, then the container's own files: users (in
    /// `Container.repair`) and whatever `containerFiles` repairs.
    public static func repair(
        db: String, environment: String?, json: Bool, fileSystem: any FileSystem = POSIXFileSystem(),
        containerFiles: (ContainerOptions) throws(CirrusError) -> [SideFileRepair] = { _ in [] }
    ) -> CommandOutput {
        var envs: [Environment]
        if let environment {
            guard let e = Environment(rawValue: environment) else {
                return CommandOutput(
                    stderr: "cirrus repair: --environment \(environment): expected development or production\n",
                    exitCode: 2)
            }
            envs = [e]
        } else {
            envs = [.development, .production].filter { fileSystem.exists(joinPath(db, $0.rawValue)) }
        }
        guard fileSystem.exists(db), !envs.isEmpty else {
            return CommandOutput(
                stderr: "cirrus repair: \(db) is not a Cirrus container (no development/ or production/ store)\n",
                exitCode: 1)
        }
        let options = ContainerOptions(fileSystem: fileSystem)
        var out = CommandOutput()
        var reports: [(String, JSONValue)] = []
        var lost = false
        for env in envs {
            do {
                let r = try Container.repair(at: db, environment: env, options: options)
                lost = lost || r.lostSomething
                out.stdout += json ? "" : r.lines.joined(separator: "\n") + "\n"
                reports.append((env.rawValue, reportJSON(r)))
            } catch {
                out.stderr += "cirrus repair: \(error)\n"
                out.exitCode = 1
                return out
            }
        }
        var files: [SideFileRepair] = []
        do { files = try containerFiles(options) } catch {
            out.stderr += "cirrus repair: \(error)\n"
            out.exitCode = 1
            return out
        }
        for f in files {
            lost = lost || f.lost != 0
            if !json { out.stdout += "[container]\n" + (f.lost == 0 ? "repaired: " : "LOST: ") + "\(f)\n" }
        }
        if json {
            out.stdout =
                JSONValue.object([
                    ("container", .string(db)), ("lost", .bool(lost)), ("environments", .object(reports)),
                    ("files", .array(files.map(fileJSON))),
                ]).jsonText + "\n"
        }
        out.exitCode = lost ? 1 : 0
        return out
    }

    static func reportJSON(_ r: ContainerRepairReport) -> JSONValue {
        let s = r.store
        return .object([
            ("clean", .bool(s.wasClean)), ("records", .integer(Int64(s.records))),
            ("recovered", .integer(Int64(s.recovered))), ("recordsLost", .integer(Int64(s.recordsLost))),
            ("lost", .bool(r.lostSomething)), ("manifestRebuilt", .bool(s.manifestRebuilt)),
            ("changeTokensExpired", .bool(s.changeTokensExpired)), ("schemaRebuilt", .bool(r.schemaRebuilt)),
            (
                "losses",
                .array(
                    s.losses.map { l in
                        .object([
                            ("file", .string(l.file)), ("offset", .integer(Int64(l.offset))),
                            ("bytes", .integer(Int64(l.length))), ("what", .string(l.what.rawValue)),
                            ("reason", .string(l.reason)), ("records", l.records.map { .integer(Int64($0)) } ?? .null),
                            ("names", .array(l.names.map { .string($0) })),
                            ("after", l.after.map { .string($0) } ?? .null),
                            ("before", l.before.map { .string($0) } ?? .null),
                        ])
                    })
            ),
            ("rebuilt", .array((s.rebuilt + r.rebuilt).map { .string($0) })),
            ("files", .array(r.files.map(fileJSON))),
            ("keptIn", s.keptIn.map { .string($0) } ?? .null), ("kept", .array(s.kept.map { .string($0) })),
        ])
    }

    static func fileJSON(_ f: SideFileRepair) -> JSONValue {
        .object([
            ("file", .string(f.path)), ("reason", .string(f.reason)), ("kept", .integer(Int64(f.kept))),
            ("lost", f.lost.map { .integer(Int64($0)) } ?? .null), ("consequence", .string(f.consequence)),
            ("keptIn", .string(f.keptIn)),
        ])
    }
}

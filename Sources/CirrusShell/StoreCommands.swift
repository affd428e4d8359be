// StoreCommands: the logic of `cirrus import`, `export`, `verify` and `get` on a container
// directory (DIR/development, DIR/production), as functions that return their output and exit
// code, so the CLI is a thin layer and tests call these directly. Also the one place where
// open/verify reports are rendered to text and JSON. `cirrus schema`: SchemaCommands.swift.
//
// Exit codes: 0 ok, 1 rejected records / not found / damaged store, 2 usage (the CLI's).

import Cirrus
import CirrusIO
import Foundation
import RecordLog
import RecordModel

/// What a command printed and how it ended: the result of every `…Commands` function, which
/// the CLI writes out and exits with.
///
/// ```swift
/// let out = StoreCommands.verify(db: "places", json: false)
/// print(out.stdout, terminator: "")  // [development] store …: … status: clean
/// exit(out.exitCode)                 // 1 when damaged or unreadable
/// ```
public struct CommandOutput: Sendable, Hashable {
    /// The output proper (a report, a table, JSON).
    public var stdout = ""
    /// Errors (`cirrus COMMAND: …`), rejected records and summaries (`exported 12 records`).
    public var stderr = ""
    /// 0 ok, 1 rejected / not found / damaged, 2 usage.
    public var exitCode: Int32 = 0

    /// An output; by default empty, exit code 0.
    public init(stdout: String = "", stderr: String = "", exitCode: Int32 = 0) {
        self.stdout = stdout
        self.stderr = stderr
        self.exitCode = exitCode
    }
}

/// Which database of a container a command works on: `--environment`, `--database`, `--as`.
///
/// ```swift
/// let t = DatabaseTarget(environment: .development, database: "private", user: "_alice")
/// ```
public struct DatabaseTarget: Sendable, Hashable {
    /// The container's environment (`--environment`): its `development/` or `production/` store.
    public var environment: Environment
    /// `"public"` or `"private"` (`--database`).
    public var database: String
    /// The user the command acts as (`--as`); required for a private database.
    public var user: String?
    /// `--zone`: export only this zone; import records without a zone into it.
    public var zone: String?

    /// A target; by default the public database of the development environment, anonymous,
    /// every zone. The `database` string is validated by `scope()`, not here.
    public init(
        environment: Environment = .development, database: String = "public", user: String? = nil, zone: String? = nil
    ) {
        self.environment = environment
        self.database = database
        self.user = user
        self.zone = zone
    }

    var zoneID: ZoneID? { zone.map { ZoneID(zoneName: $0) } }

    /// The database scope, or a usage message.
    public func scope() -> Result<Database.Scope, ShellError> {
        switch database {
        case "public": return .success(.public)
        case "private":
            guard let user else {
                return .failure(ShellError("--database private needs --as USER (the database's owner)"))
            }
            return .success(.private(owner: user))
        default: return .failure(ShellError("--database is public or private, not \"\(database)\""))
        }
    }

    /// The identity calls are made on behalf of.
    public var identity: Identity { user.map { .user($0) } ?? .anonymous }
}

/// Store commands as a library. `db` is always a container directory (see docs/database.md).
///
/// ```swift
/// // The demo's private note (DemoDatabase builds it): the builder's database, zone Travel.
/// let target = DatabaseTarget(database: "private", user: "_demo")
/// let out = await StoreCommands.get(db: demoPath, type: "Note", recordName: "packing",
///                                   zone: ZoneID(zoneName: "Travel"), json: false, target: target)
/// print(out.exitCode == 0 ? out.stdout : out.stderr)
/// ```
public enum StoreCommands {
    /// `cirrus verify --db DIR [--json]`: read-only check of every environment's log in the
    /// container, then of its indexes; exit 1 when damaged or unreadable.
    public static func verify(db: String, json: Bool, fileSystem: any FileSystem = POSIXFileSystem()) -> CommandOutput {
        var out = CommandOutput()
        let envs = [Environment.development, .production].filter { fileSystem.exists(joinPath(db, $0.rawValue)) }
        if envs.isEmpty {
            out.stderr = "cirrus verify: \(db) is not a Cirrus container (no development/ or production/ store)\n"
            out.exitCode = 1
            return out
        }
        var reports: [(String, JSONValue)] = []
        var damaged = false
        for env in envs {
            let dir = joinPath(db, env.rawValue)
            do {
                let v = try RecordStore.verify(directory: dir, fileSystem: fileSystem)
                damaged = damaged || v.isDamaged
                var text = verifyText(dir, v)
                var j = verifyJSON(dir, v)
                if !v.isDamaged {
                    let problem = checkIndexes(db, env, fileSystem)
                    text = text.replacingOccurrences(
                        of: "status: clean\n",
                        with: problem.map { "indexes: \($0)\nstatus: DAMAGED\n" } ?? "indexes: ok\nstatus: clean\n")
                    if case .object(var m) = j {
                        m.append(("indexes", .string(problem ?? "ok")))
                        if problem != nil { m = m.map { $0.0 == "clean" ? ("clean", .bool(false)) : $0 } }
                        j = .object(m)
                    }
                    if problem != nil { damaged = true }
                }
                out.stdout += json ? "" : "[\(env.rawValue)]\n" + text
                reports.append((env.rawValue, j))
            } catch {
                out.stderr += "cirrus verify: \(env.rawValue): \(error)\n"
                damaged = true
            }
        }
        if json {
            out.stdout =
                JSONValue.object([
                    ("container", .string(db)), ("clean", .bool(!damaged)), ("environments", .object(reports)),
                ]).jsonText + "\n"
        }
        out.exitCode = damaged ? 1 : 0
        return out
    }

    /// Opens the container read-only and checks every index against its rows; nil when fine.
    static func checkIndexes(_ db: String, _ env: Environment, _ fs: any FileSystem) -> String? {
        do {
            let c = try Container.open(
                at: db, environment: env, options: ContainerOptions(fileSystem: fs, readOnly: true))
            try c.checkInvariants()
            return nil
        } catch {
            return "\(error)"
        }
    }

    static func openContainer(
        _ db: String, _ target: DatabaseTarget, readOnly: Bool, fileSystem: any FileSystem,
        durability: Durability = .everyCommit
    ) throws -> Container {
        try Container.open(
            at: db, environment: target.environment,
            options: ContainerOptions(fileSystem: fileSystem, durability: durability, readOnly: readOnly))
    }

    /// `cirrus get --db DIR --type T RECORDNAME [--zone Z] [--database D --as USER] [--json]`:
    /// fetches through the database API, so access rules apply.
    public static func get(
        db: String, type: String, recordName: String, zone: ZoneID = .default, json: Bool,
        target: DatabaseTarget = DatabaseTarget(),
        fileSystem: any FileSystem = POSIXFileSystem()
    ) async -> CommandOutput {
        let scope: Database.Scope
        switch target.scope() {
        case .success(let s): scope = s
        case .failure(let e):
            return CommandOutput(stderr: "cirrus get: \(e)\n", exitCode: 2)
        }
        do {
            let c = try openContainer(db, target, readOnly: true, fileSystem: fileSystem)
            return await get(
                c.database(scope, as: target.identity), type: type, recordName: recordName, zone: zone, json: json)
        } catch {
            return CommandOutput(stderr: "cirrus get: \(error)\n", exitCode: 1)
        }
    }

    /// ``get(db:type:recordName:zone:json:target:fileSystem:)`` on a database of a container the
    /// caller opened (a directory's, or PostgreSQL's: `cirrus get --postgres`).
    public static func get(
        _ database: Database, type: String, recordName: String, zone: ZoneID = .default, json: Bool
    ) async -> CommandOutput {
        var out = CommandOutput()
        let where_ = zone.isDefaultZone ? "" : " in zone \(zone.zoneName)"
        do {
            let r = try await database.record(for: RecordID(recordName: recordName, zoneID: zone))
            guard r.recordType == type else {
                out.stderr =
                    "cirrus get: no \(type) record named \"\(recordName)\"\(where_) (it is a \(r.recordType))\n"
                out.exitCode = 1
                return out
            }
            out.stdout = json ? r.webServicesJSON.jsonText + "\n" : recordText(r)
        } catch  where error.code == .unknownItem {
            out.stderr = "cirrus get: no \(type) record named \"\(recordName)\"\(where_)\n"
            out.exitCode = 1
        } catch {
            out.stderr = "cirrus get: \(error)\n"
            out.exitCode = 1
        }
        return out
    }

    /// `cirrus export --db DIR [--type T] [--database D --as USER]`: JSON Lines through `write`;
    /// the summary goes to stderr.
    public static func export(
        db: String, type: String?, target: DatabaseTarget = DatabaseTarget(),
        fileSystem: any FileSystem = POSIXFileSystem(),
        write: (String) -> Void
    ) -> CommandOutput {
        var out = CommandOutput()
        let scope: Database.Scope
        switch target.scope() {
        case .success(let s): scope = s
        case .failure(let e): return CommandOutput(stderr: "cirrus export: \(e)\n", exitCode: 2)
        }
        do {
            let c = try openContainer(db, target, readOnly: true, fileSystem: fileSystem)
            let n = try c.exportRecords(from: scope, type: type, zone: target.zoneID, write: write)
            out.stderr = "exported \(n) records\n"
        } catch {
            out.stderr = "cirrus export: \(error)\n"
            out.exitCode = 1
        }
        return out
    }

    /// `cirrus import --db DIR FILE… [--database D --as USER] [--environment E]`: imports as the
    /// container's administrator with `.batched` durability and a final sync; `progress` gets a
    /// status line now and then; exit 1 if any record was rejected.
    public static func importFiles(
        db: String, files: [String], target: DatabaseTarget = DatabaseTarget(),
        fileSystem: any FileSystem = POSIXFileSystem(),
        progress: (@Sendable (String) -> Void)? = nil
    ) -> CommandOutput {
        var out = CommandOutput()
        let scope: Database.Scope
        switch target.scope() {
        case .success(let s): scope = s
        case .failure(let e): return CommandOutput(stderr: "cirrus import: \(e)\n", exitCode: 2)
        }
        do {
            let c = try openContainer(
                db, target, readOnly: false, fileSystem: fileSystem,
                durability: .batched(milliseconds: 200, bytes: 16 << 20))
            var total = ImportSummary()
            for file in files {
                var o = ImportOptions()
                o.batchSize = 4096  // records planned per batch of the bulk load
                if let progress {
                    // Only for the ETA: no size, no ETA (the import itself reports errors).
                    let total = (try? fileSystem.size(file)) ?? 0
                    o.progress = { s in
                        // ETA from the bytes still to read at the rate so far (compressed input: unknown).
                        let rate = s.seconds > 0 ? Double(s.bytes) / s.seconds : 0
                        let left =
                            total > s.bytes && rate > 0
                            ? String(format: ", ETA %.0f s", Double(total - s.bytes) / rate) : ""
                        progress(
                            String(
                                format: "%@: %ld records, %.1f MB, %.0f records/s%@", file, s.records,
                                Double(s.bytes) / 1e6, s.recordsPerSecond, left))
                    }
                }
                let s = try c.importFile(file, into: scope, zone: target.zoneID, options: o)
                total.add(s, options: o)
            }
            try c.close()
            for r in total.rejections { out.stderr += "rejected \(r)\n" }
            if total.rejected > total.rejections.count {
                out.stderr += "… \(total.rejected - total.rejections.count) more rejected\n"
            }
            out.stdout = String(
                format: "imported %ld records (%ld rejected), %ld bytes in %.2f s, %.0f records/s\n", total.records,
                total.rejected,
                total.bytes, total.seconds, total.recordsPerSecond)
            out.exitCode = total.rejected > 0 ? 1 : 0
        } catch {
            out.stderr += "cirrus import: \(error)\n"
            out.exitCode = 1
        }
        return out
    }

    // MARK: rendering

    /// Human-readable verify report.
    public static func verifyText(_ db: String, _ v: VerifyReport) -> String {
        let o = v.open
        var s =
            "store \(db): \(o.segments.count) segments, \(o.frames) frames, \(o.bytes) bytes, last sequence "
            + "\(v.lastSequence)\n"
        for seg in o.segments {
            s +=
                "  \(Manifest.segmentFileName(seg.number))  \(seg.bytes) bytes  \(seg.frames) frames  \(seg.batches) "
                + "batches\(seg.compacted ? "  compacted" : "")\n"
        }
        s += "live records: \(v.liveRecords) in \(v.recordsByZone.count) zones (\(v.zones) created zones)\n"
        for (t, n) in v.recordsByType.sorted(by: { compareUTF8($0.key, $1.key) < 0 }) { s += "  type \(t): \(n)\n" }
        for (z, n) in v.recordsByZone.sorted(by: { $0.key < $1.key }) {
            s += "  zone \(z.zoneName) (\(z.ownerName)): \(n)\n"
        }
        if let t = o.tornTail {
            s +=
                "torn tail: \(Manifest.segmentFileName(t.segment)) at byte \(t.offset): \(t.bytesDropped) bytes, "
                + "\(t.framesDropped) frames of an unfinished batch (a writable open truncates it)\n"
        }
        for c in o.corruptions { s += "corruption: \(c)\n" }
        for w in o.warnings { s += "damaged derived data: \(w)\n" }
        s += v.isDamaged ? "status: DAMAGED\n" : "status: clean\n"
        return s
    }

    /// Machine-readable verify report.
    public static func verifyJSON(_ db: String, _ v: VerifyReport) -> JSONValue {
        let o = v.open
        var m: [(String, JSONValue)] = [
            ("store", .string(db)), ("clean", .bool(!v.isDamaged)),
            (
                "segments",
                .array(
                    o.segments.map { seg in
                        .object([
                            ("file", .string(Manifest.segmentFileName(seg.number))),
                            ("bytes", .integer(Int64(seg.bytes))),
                            ("frames", .integer(Int64(seg.frames))), ("batches", .integer(Int64(seg.batches))),
                            ("compacted", .bool(seg.compacted)),
                        ])
                    })
            ), ("frames", .integer(Int64(o.frames))), ("bytes", .integer(Int64(o.bytes))),
            ("lastSequence", .integer(Int64(bitPattern: v.lastSequence))),
            ("liveRecords", .integer(Int64(v.liveRecords))),
            (
                "recordsByType",
                .object(
                    v.recordsByType.sorted { compareUTF8($0.key, $1.key) < 0 }.map {
                        ($0.key, .integer(Int64($0.value)))
                    })
            ),
            (
                "recordsByZone",
                .array(
                    v.recordsByZone.sorted { $0.key < $1.key }.map { (z, n) in
                        .object([
                            ("zoneName", .string(z.zoneName)), ("ownerRecordName", .string(z.ownerName)),
                            ("records", .integer(Int64(n))),
                        ])
                    })
            ),
        ]
        if let t = o.tornTail {
            m.append(
                (
                    "tornTail",
                    .object([
                        ("file", .string(Manifest.segmentFileName(t.segment))), ("offset", .integer(Int64(t.offset))),
                        ("bytes", .integer(Int64(t.bytesDropped))), ("frames", .integer(Int64(t.framesDropped))),
                    ])
                ))
        }
        m.append(
            (
                "corruptions",
                .array(
                    o.corruptions.map { c in
                        .object([
                            ("file", .string(c.file ?? (c.segment == 0 ? "" : Manifest.segmentFileName(c.segment)))),
                            ("offset", .integer(Int64(c.offset))),
                            ("bytes", .integer(Int64(c.length))), ("reason", .string(c.reason)),
                            ("framesDropped", .integer(Int64(c.framesDropped))),
                        ])
                    })
            ))
        m.append(
            (
                "derivedDamage",
                .array(
                    o.warnings.map { w in
                        .object([
                            ("file", .string(w.path)), ("offset", .integer(Int64(w.offset))),
                            ("reason", .string(w.reason)), ("consequence", .string(w.consequence)),
                        ])
                    })
            ))
        return .object(m)
    }

    /// Human-readable record.
    public static func recordText(_ r: Record) -> String {
        var t = "\(r.recordType) \(r.recordID.recordName)"
        if !r.recordID.zoneID.isDefaultZone { t += " in zone \(r.recordID.zoneID.zoneName)" }
        if let tag = r.recordChangeTag { t += "  (change tag \(tag))" }
        t += "\n"
        if let d = r.creationDate {
            t += "  created \(d)\(r.creatorUserRecordID.map { " by \($0.recordName)" } ?? "")\n"
        }
        if let d = r.modificationDate {
            t += "  modified \(d)\(r.lastModifiedUserRecordID.map { " by \($0.recordName)" } ?? "")\n"
        }
        for name in r.fields.keys.sorted(by: { compareUTF8($0, $1) < 0 }) {
            guard let v = r.fields[name] else { continue }
            t += "  \(name) \(v.typeName == "EMPTY_LIST" ? "LIST" : v.typeName) = \(v.webServicesJSONValue.jsonText)\n"
        }
        return t
    }
}

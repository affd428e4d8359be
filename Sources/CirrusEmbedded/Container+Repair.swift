// Container+Repair: `cirrus repair` — one environment of a container brought back to a verified
// state from what its files still hold (docs/storage-format.md, "Damage and repair").
//
// Order: the record store (`RecordStore.repair`: rows, log, manifest, state — whatever cannot be
// derived); then the JSON files beside it — cursor secrets and subscriptions (the environment's),
// users (the container's) — salvaged element by element (`JSONValue.salvage`) when they do not
// read; then a schema rebuilt from the records if the store lost it; then the container opened
// writable, which rebuilds every index from the rows, and a checkpoint that writes them; last, a
// verification of everything. Damaged files are kept under `damaged/<stamp>/` with a report: the
// store's under `DIR/ENV/damaged/`, the container's own under `DIR/damaged/`. Nothing is deleted.

import CirrusFacade
import CirrusIO
import Foundation
import RecordLog
import RecordModel

/// What `Container.repair` did to a JSON file beside the store.
public struct SideFileRepair: Sendable, Hashable, CustomStringConvertible {
    /// The file.
    public var path: String
    /// What was wrong with it.
    public var reason: String
    /// Entries read back and kept.
    public var kept: Int
    /// Entries lost (dropped or cut off), when known.
    public var lost: Int?
    /// What the loss means for clients.
    public var consequence: String
    /// Where the damaged file was kept.
    public var keptIn: String

    /// One line: the file, what was wrong, what was kept and lost.
    public var description: String {
        "\(path): \(reason); \(kept) entries kept, \(lost.map(String.init) ?? "an unknown number of") lost — "
            + "\(consequence) (the damaged file is kept in \(keptIn))"
    }
}

/// What `Container.repair` did to one environment of a container.
public struct ContainerRepairReport: Sendable, Hashable {
    /// The environment repaired.
    public var environment: Environment
    /// The record store's repair.
    public var store: RepairReport
    /// The JSON files beside the store that were damaged.
    public var files: [SideFileRepair] = []
    /// True when the store's schema was lost and rebuilt from the records.
    public var schemaRebuilt = false
    /// Derived data the open found damaged and rebuilt (index segments and sections).
    public var rebuilt: [String] = []

    /// Whether anything was lost: records, log entries, change history, or entries of the files.
    public var lostSomething: Bool { store.lostSomething || files.contains { $0.lost != 0 } || schemaRebuilt }

    /// The report as lines of text.
    public var lines: [String] {
        var out = ["[\(environment.rawValue)]"] + store.lines
        if schemaRebuilt {
            out.append(
                "LOST: the schema; rebuilt from the records (every field with default index options and no custom grants: "
                    + "re-apply yours with `cirrus schema import`)")
        }
        for f in files { out.append((f.lost == 0 ? "repaired: " : "LOST: ") + f.description) }
        for r in rebuilt { out.append("rebuilt: \(r)") }
        if store.wasClean && files.isEmpty && !schemaRebuilt && rebuilt.isEmpty {
            out.append("status: sound, nothing to repair")
        } else {
            out.append(
                lostSomething ? "status: repaired, with losses (listed above)" : "status: repaired, nothing lost")
        }
        return out
    }
}

extension Container {
    /// Repairs one environment of the container in `directory` (see the file header): salvages
    /// every record whose bytes check out, rebuilds what is derived, keeps every damaged or
    /// replaced file under `damaged/`, and reports what was lost. The environment must not be
    /// open anywhere (its LOCK is taken; a held lock refuses with internalError and changes
    /// nothing).
    ///
    /// ```swift
    /// let report = try Container.repair(at: "/data/places", environment: .development)
    /// for line in report.lines { print(line) }
    /// ```
    public static func repair(
        at directory: String, environment: Environment = .development, options: ContainerOptions = ContainerOptions()
    ) throws(CirrusError) -> ContainerRepairReport {
        let fs = options.fileSystem
        let storeDir = joinPath(directory, environment.rawValue)
        guard !fs.exists(joinPath(directory, Manifest.fileName)) else {
            throw CirrusError(
                .internalError, "\(directory) is a bare record store, not a container (see docs/database.md)")
        }
        guard fs.exists(storeDir) else {
            throw CirrusError(.internalError, "\(directory) has no \(environment.rawValue) environment to repair")
        }
        var report: ContainerRepairReport
        do {
            let store = try RecordStore.repair(directory: storeDir, fileSystem: fs, clock: options.clock) {
                $0.map { ContainerCore.sectionEncoder($0) }
            }
            report = ContainerRepairReport(environment: environment, store: store)
        } catch {
            if case .locked = error {
                throw CirrusError(
                    .internalError,
                    "\(directory) (\(environment.rawValue)) is open in another process: close it (and `cirrus serve`) "
                        + "first; nothing was changed")
            }
            throw CirrusError(.internalError, "cannot repair \(directory) (\(environment.rawValue)): \(error)")
        }
        let repairer = SideFileRepairer(fs: fs, clock: options.clock)
        report.files += try repairer.cursorSecrets(joinPath(storeDir, "cursor-secrets.json"))
        report.files += try repairer.subscriptions(joinPath(storeDir, "subscriptions.json"))
        report.files += try repairer.users(joinPath(directory, UserDirectory.fileName))
        report.schemaRebuilt = try rebuildSchemaIfLost(storeDir, options: options)
        if report.store.wasClean && report.files.isEmpty && !report.schemaRebuilt {
            // Sound files: only derived data the façade reads (index sections) could be damaged.
            var ro = options
            ro.readOnly = true
            ro.indexesOnFirstUse = false  // their damage is what this open looks for
            let warnings = try Container.open(at: directory, environment: environment, options: ro).openReport.warnings
            if warnings.isEmpty { return report }
        }

        // Open writable: indexes mapped, or rebuilt from the rows where missing or damaged (and
        // subscriptions that no longer check dropped), then a checkpoint writes what was rebuilt
        // and the façade's state; then everything verifies.
        var opening = options
        opening.readOnly = false
        opening.dropsInvalidSubscriptions = true
        let c = try Container.open(at: directory, environment: environment, options: opening)
        report.rebuilt = c.openReport.warnings.map(\.description)
        if let core = c.embedded, let dropped = core.droppedSubscriptions, dropped.count > 0 {
            report.files.append(
                SideFileRepair(
                    path: core.subscriptionsPath, reason: "subscriptions that no longer check", kept: dropped.kept,
                    lost: dropped.count, consequence: "those subscriptions no longer notify", keptIn: "(not kept)"))
        }
        try c.checkpoint()
        try c.close()
        try verifyRepaired(directory, environment, options)
        return report
    }

    /// Repairs a JSON file of the container's (`cirrus repair` uses it for the server's
    /// `web-services.json`): when `path` does not read as `clean` wants it, its elements are
    /// salvaged, the damaged file is kept under `damaged/` beside it, and what was read back is
    /// written. `clean` returns the sound value, how many entries it holds and how many it
    /// dropped (nil: nothing usable). Nil when the file is missing or sound.
    public static func repairJSONFile(
        at path: String, options: ContainerOptions = ContainerOptions(), consequence: String,
        clean: (JSONValue) -> (JSONValue, kept: Int, dropped: Int)?
    ) throws(CirrusError) -> SideFileRepair? {
        try SideFileRepairer(fs: options.fileSystem, clock: options.clock).repair(
            path, consequence: consequence, clean: clean
        ).first
    }

    /// A store whose schema was lost (its state segment) and that holds records gets one built
    /// from them, as development's just-in-time schema would have grown it.
    static func rebuildSchemaIfLost(_ storeDir: String, options: ContainerOptions) throws(CirrusError) -> Bool {
        do {
            let store = try RecordStore.open(
                directory: storeDir, fileSystem: options.fileSystem, options: RecordStoreOptions(clock: options.clock))
            defer { try? store.close() }  // closing a store that committed nothing has nothing to report
            let snap = store.snapshot()
            guard snap.schema == nil, snap.recordCount > 0 else { return false }
            var types: [String: RecordTypeSchema] = [:]
            try snap.forEachRecord { stored in
                let r = stored.record
                var t = types[r.recordType] ?? RecordTypeSchema(name: r.recordType)
                for (name, v) in r.fields where t.fields[name] == nil {
                    if let ft = v.fieldType {
                        t.fields[name] = FieldSchema(name: name, type: ft, options: .automatic(for: ft))
                    }
                }
                types[r.recordType] = t
            }
            var schema = Schema(
                environment: storeDir.hasSuffix(Environment.production.rawValue) ? .production : .development)
            for (name, t) in types { schema.recordTypes[name] = t }
            if schema.recordTypes[Schema.usersRecordType] == nil {
                schema.recordTypes[Schema.usersRecordType] = RecordTypeSchema(name: Schema.usersRecordType)
            }
            try store.commit([.setSchema(schema)])
            try store.close()
            return true
        } catch {
            throw CirrusError(.internalError, "cannot rebuild the schema of \(storeDir): \(error)")
        }
    }

    /// The repaired environment verifies: every block and row of its files, and it opens without
    /// a warning. (`cirrus verify` also compares every index entry with the rows.)
    static func verifyRepaired(
        _ directory: String, _ environment: Environment, _ options: ContainerOptions
    ) throws(CirrusError) {
        let storeDir = joinPath(directory, environment.rawValue)
        let problem: String?
        do {
            let v = try RecordStore.verify(directory: storeDir, fileSystem: options.fileSystem)
            var ro = options
            ro.readOnly = true
            ro.indexesOnFirstUse = false  // their damage is what this open looks for
            let warnings = try Container.open(at: directory, environment: environment, options: ro).openReport.warnings
            problem =
                (v.open.corruptions.map(\.description) + v.open.warnings.map(\.description)
                + warnings.map(\.description)).first
        } catch {
            problem = "\(error)"
        }
        if let problem { throw CirrusError(.internalError, "the repaired \(storeDir) does not verify: \(problem)") }
    }
}

/// Reads back what it can of the JSON files beside a store.
struct SideFileRepairer {
    let fs: any FileSystem
    let clock: any LogClock

    /// `cursor-secrets.json`: `{owner: [32 bytes]}`.
    func cursorSecrets(_ path: String) throws(CirrusError) -> [SideFileRepair] {
        try repair(path, consequence: "cursors issued before the repair can no longer be resumed (they fail as stale)")
        {
            json in
            guard case .object(let members) = json else { return nil }
            let kept = members.filter { _, v in
                guard case .array(let bytes) = v, bytes.count == 32 else { return false }
                return bytes.allSatisfy { ($0.int64Value ?? -1) >= 0 && ($0.int64Value ?? 256) < 256 }
            }
            return (.object(kept), kept.count, members.count - kept.count)
        }
    }

    /// `subscriptions.json`: an array of subscriptions (each checked again when the container
    /// opens; those that no longer check are dropped then).
    func subscriptions(_ path: String) throws(CirrusError) -> [SideFileRepair] {
        try repair(path, consequence: "the lost subscriptions no longer notify; save them again") { json in
            guard case .array(let items) = json else { return nil }
            let kept = items.filter { $0["owner"]?.stringValue != nil && $0["id"]?.stringValue != nil }
            return (.array(kept), kept.count, items.count - kept.count)
        }
    }

    /// `users.json`: `{"version": 1, "users": [...]}`.
    func users(_ path: String) throws(CirrusError) -> [SideFileRepair] {
        try repair(path, consequence: "the lost users must be added again (`cirrus users add`)") { json in
            guard json["version"]?.int64Value == 1, case .array(let items)? = json["users"] else { return nil }
            let kept = items.filter { u in
                (try? JSONDecoder().decode(UserDirectory.File.User.self, from: Data(u.jsonText.utf8))) != nil
            }
            return (.object([("version", .integer(1)), ("users", .array(kept))]), kept.count, items.count - kept.count)
        }
    }

    /// When `path` exists and does not parse as JSON the way `clean` wants it: salvages its
    /// elements, keeps the damaged file under `damaged/`, writes what was read back. `clean`
    /// returns the sound value, how many entries it holds and how many it dropped; nil when
    /// nothing can be used. Entries lost with the text that did not parse are not counted: the
    /// loss is then "an unknown number".
    func repair(
        _ path: String, consequence: String, clean: (JSONValue) -> (JSONValue, kept: Int, dropped: Int)?
    ) throws(CirrusError) -> [SideFileRepair] {
        guard fs.exists(path) else { return [] }
        let bytes: [UInt8]
        do { bytes = try fs.read(path) } catch { throw CirrusError(.internalError, "cannot read \(path): \(error)") }
        let reason: String
        do {
            let json = try JSONValue.parse(String(decoding: bytes, as: UTF8.self))
            if let (_, _, dropped) = clean(json), dropped == 0 { return [] }
            reason = "entries of the wrong shape"
        } catch {
            reason = "\(error)"
        }
        var value: JSONValue = .null
        var kept = 0
        var lost: Int?
        if let (salvaged, cut) = JSONValue.salvage(bytes), let (v, n, dropped) = clean(salvaged) {
            value = v
            kept = n
            lost = cut > 0 ? nil : dropped
        }
        let dir = parentDirectory(of: path)
        let name = String(path.split(separator: "/").last ?? "")
        let keptIn: String
        do {
            keptIn = try RecordStore.keepDamagedFiles(
                [(name, "damaged: \(reason)")], in: dir, fileSystem: fs, clock: clock,
                title: "A JSON file `cirrus repair` rewrote from what it could read (nothing was deleted):")
            if value == .null {
                try fs.remove(path)
            } else {
                try fs.writeAtomically(path, Array(value.jsonText.utf8))
            }
        } catch {
            throw CirrusError(.internalError, "cannot repair \(path): \(error)")
        }
        return [
            SideFileRepair(path: path, reason: reason, kept: kept, lost: lost, consequence: consequence, keptIn: keptIn)
        ]
    }

}

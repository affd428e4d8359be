// StoreCommands: the logic of `cirrus import`, `export`, `verify` and `get`, as functions that return
// their output and exit code, so the CLI is a thin layer and tests call these directly. Also
// the one place where open/verify reports are rendered to text and JSON.
//
// Exit codes: 0 ok, 1 rejected records / not found / damaged store, 2 usage (the CLI's).

import Foundation
import RecordLog
import RecordModel

/// The result of a store command.
public struct CommandOutput: Sendable, Hashable {
    public var stdout = ""
    public var stderr = ""
    /// 0 ok, 1 rejected / not found / damaged, 2 usage.
    public var exitCode: Int32 = 0
}

/// Store commands as a library.
public enum StoreCommands {
    /// `cirrus verify --db DIR [--json]`: read-only check; exit 1 when damaged or unreadable.
    public static func verify(db: String, json: Bool, fileSystem: any FileSystem = POSIXFileSystem()) -> CommandOutput {
        var out = CommandOutput()
        do {
            let v = try RecordStore.verify(directory: db, fileSystem: fileSystem)
            out.stdout = json ? verifyJSON(db, v).jsonText + "\n" : verifyText(db, v)
            out.exitCode = v.isDamaged ? 1 : 0
        } catch {
            out.stderr = "cirrus verify: \(error)\n"
            out.exitCode = 1
        }
        return out
    }

    /// `cirrus get --db DIR --type T RECORDNAME [--zone Z] [--json]`.
    public static func get(
        db: String, type: String, recordName: String, zone: ZoneID = .default, json: Bool,
        fileSystem: any FileSystem = POSIXFileSystem()
    ) -> CommandOutput {
        var out = CommandOutput()
        do {
            let store = try RecordStore.open(directory: db, fileSystem: fileSystem, options: RecordStoreOptions(readOnly: true))
            guard let s = store.record(RecordID(recordName: recordName, zoneID: zone)), s.record.recordType == type else {
                out.stderr = "cirrus get: no \(type) record named \"\(recordName)\"\(zone.isDefaultZone ? "" : " in zone \(zone.zoneName)")\n"
                out.exitCode = 1
                return out
            }
            out.stdout = json ? s.record.webServicesJSON.jsonText + "\n" : recordText(s)
        } catch {
            out.stderr = "cirrus get: \(error)\n"
            out.exitCode = 1
        }
        return out
    }

    /// `cirrus export --db DIR [--type T]`: JSON Lines through `write`; the summary goes to stderr.
    public static func export(db: String, type: String?, fileSystem: any FileSystem = POSIXFileSystem(), write: (String) -> Void) -> CommandOutput {
        var out = CommandOutput()
        do {
            let store = try RecordStore.open(directory: db, fileSystem: fileSystem, options: RecordStoreOptions(readOnly: true))
            let n = RecordTransfer.exportJSONLines(store.snapshot(), type: type, write: write)
            out.stderr = "exported \(n) records\n"
        } catch {
            out.stderr = "cirrus export: \(error)\n"
            out.exitCode = 1
        }
        return out
    }

    /// `cirrus import --db DIR FILE…`: imports with `.batched` durability and a final sync;
    /// `progress` gets a status line now and then; exit 1 if any record was rejected.
    public static func importFiles(
        db: String, files: [String], fileSystem: any FileSystem = POSIXFileSystem(), progress: (@Sendable (String) -> Void)? = nil
    ) -> CommandOutput {
        var out = CommandOutput()
        do {
            let store = try RecordStore.open(
                directory: db, fileSystem: fileSystem,
                options: RecordStoreOptions(durability: .batched(milliseconds: 200, bytes: 16 << 20)))
            var total = ImportSummary()
            for file in files {
                var o = ImportOptions()
                if let progress {
                    o.progress = { s in
                        progress(String(format: "%@: %d records, %.1f MB, %.0f records/s", file, s.records, Double(s.bytes) / 1e6, s.recordsPerSecond))
                    }
                }
                let s = try RecordTransfer.importFile(file, into: store, options: o)
                total.add(s)
            }
            try store.close()
            for r in total.rejections { out.stderr += "rejected \(r)\n" }
            if total.rejected > total.rejections.count { out.stderr += "… \(total.rejected - total.rejections.count) more rejected\n" }
            out.stdout = String(
                format: "imported %d records (%d rejected), %d bytes in %.2f s, %.0f records/s\n", total.records, total.rejected,
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
        var s = "store \(db): \(o.segments.count) segments, \(o.frames) frames, \(o.bytes) bytes, last sequence \(v.lastSequence)\n"
        for seg in o.segments {
            s += "  \(Manifest.segmentFileName(seg.number))  \(seg.bytes) bytes  \(seg.frames) frames  \(seg.batches) batches\(seg.compacted ? "  compacted" : "")\n"
        }
        s += "live records: \(v.liveRecords) in \(v.recordsByZone.count) zones (\(v.zones) created zones)\n"
        for (t, n) in v.recordsByType.sorted(by: { compareUTF8($0.key, $1.key) < 0 }) { s += "  type \(t): \(n)\n" }
        for (z, n) in v.recordsByZone.sorted(by: { $0.key < $1.key }) { s += "  zone \(z.zoneName) (\(z.ownerName)): \(n)\n" }
        if let t = o.tornTail {
            s += "torn tail: \(Manifest.segmentFileName(t.segment)) at byte \(t.offset): \(t.bytesDropped) bytes, \(t.framesDropped) frames of an unfinished batch (a writable open truncates it)\n"
        }
        for c in o.corruptions { s += "corruption: \(c)\n" }
        s += v.isDamaged ? "status: DAMAGED\n" : "status: clean\n"
        return s
    }

    /// Machine-readable verify report.
    public static func verifyJSON(_ db: String, _ v: VerifyReport) -> JSONValue {
        let o = v.open
        var m: [(String, JSONValue)] = [
            ("store", .string(db)), ("clean", .bool(!v.isDamaged)), ("segments", .array(o.segments.map { seg in
                .object([
                    ("file", .string(Manifest.segmentFileName(seg.number))), ("bytes", .integer(Int64(seg.bytes))),
                    ("frames", .integer(Int64(seg.frames))), ("batches", .integer(Int64(seg.batches))), ("compacted", .bool(seg.compacted)),
                ])
            })), ("frames", .integer(Int64(o.frames))), ("bytes", .integer(Int64(o.bytes))),
            ("lastSequence", .integer(Int64(bitPattern: v.lastSequence))), ("liveRecords", .integer(Int64(v.liveRecords))),
            ("recordsByType", .object(v.recordsByType.sorted { compareUTF8($0.key, $1.key) < 0 }.map { ($0.key, .integer(Int64($0.value))) })),
            ("recordsByZone", .array(v.recordsByZone.sorted { $0.key < $1.key }.map { (z, n) in
                .object([("zoneName", .string(z.zoneName)), ("ownerRecordName", .string(z.ownerName)), ("records", .integer(Int64(n)))])
            })),
        ]
        if let t = o.tornTail {
            m.append(("tornTail", .object([
                ("file", .string(Manifest.segmentFileName(t.segment))), ("offset", .integer(Int64(t.offset))),
                ("bytes", .integer(Int64(t.bytesDropped))), ("frames", .integer(Int64(t.framesDropped))),
            ])))
        }
        m.append(("corruptions", .array(o.corruptions.map { c in
            .object([
                ("file", .string(Manifest.segmentFileName(c.segment))), ("offset", .integer(Int64(c.offset))),
                ("bytes", .integer(Int64(c.length))), ("reason", .string(c.reason)), ("framesDropped", .integer(Int64(c.framesDropped))),
            ])
        })))
        return .object(m)
    }

    /// Human-readable record.
    public static func recordText(_ s: StoredRecord) -> String {
        let r = s.record
        var t = "\(r.recordType) \(r.recordID.recordName)"
        if !r.recordID.zoneID.isDefaultZone { t += " in zone \(r.recordID.zoneID.zoneName)" }
        t += "  (sequence \(s.sequence)"
        if let tag = r.recordChangeTag { t += ", change tag \(tag)" }
        t += ")\n"
        if let d = r.creationDate { t += "  created \(d)\(r.creatorUserRecordID.map { " by \($0.recordName)" } ?? "")\n" }
        if let d = r.modificationDate { t += "  modified \(d)\(r.lastModifiedUserRecordID.map { " by \($0.recordName)" } ?? "")\n" }
        for name in r.fields.keys.sorted(by: { compareUTF8($0, $1) < 0 }) {
            guard let v = r.fields[name] else { continue }
            t += "  \(name) \(v.typeName == "EMPTY_LIST" ? "LIST" : v.typeName) = \(v.webServicesJSONValue.jsonText)\n"
        }
        return t
    }
}

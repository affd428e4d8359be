// The `cirrus` command line with `--postgres URL --container ID` (issue 52): the built binary is
// run against the test cluster — import (COPY, one transaction), export (lossless: a container
// imported from an export exports the same bytes), query, explain, get, schema, role, users,
// verify and reset — and each command's answer is checked against the data the test wrote. The
// directory forms of these commands are tested in CirrusShellTests (transcripts).

import Cirrus
import CirrusIO
import CirrusPostgres
import CirrusTestSupport
import Foundation
import RecordLog
import RecordModel
import Testing

/// The cirrus binary, next to the test bundle in the build products directory.
enum CLI {
    static let cirrus: String? = {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<3 {
            let p = dir.appendingPathComponent("cirrus").path
            if FileManager.default.isExecutableFile(atPath: p) { return p }
            dir = dir.deletingLastPathComponent()
        }
        return ProcessInfo.processInfo.environment["CIRRUS_BINARY"]
    }()
}

@Suite(.enabled(if: PG.available && CLI.cirrus != nil, PG.disabledReason))
struct PostgresCLITests {

    struct Run {
        var stdout: String
        var stderr: String
        var status: Int32
    }

    /// Runs `cirrus ARGS` and waits for it (standard input closed).
    static func run(_ args: [String]) throws -> Run {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try #require(CLI.cirrus))
        p.arguments = args
        let out = Pipe()
        let err = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = FileHandle.nullDevice
        try p.run()
        // Read both pipes to the end before waiting: a full pipe would block the child.
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return Run(
            stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self),
            status: p.terminationStatus)
    }

    /// Places with every kind of value the import writes (strings, numbers, a location, a list, a
    /// date) and the system fields an export carries, so that a lossless round trip shows.
    static func places(_ n: Int) -> [Record] {
        var rng = SeededRandom(seed: 52)
        let kinds = ["cafe", "museum", "park", "bar"]
        return (0..<n).map { i in
            var r = Record(
                recordType: "Place", recordID: RecordID(recordName: String(format: "p%04d", i)),
                fields: [
                    "name": .string("place \(i) é"), "kind": .string(kinds[i % kinds.count]),
                    "population": .int64(Int64(rng.below(100_000))),
                    "location": .location(
                        Location(
                            latitude: 48 + Double(rng.below(1000)) / 1000, longitude: 2 + Double(rng.below(1000)) / 1000
                        )),
                    "tags": .list([.string("t\(i % 3)"), .string("all")]),
                    "opened": .date(Timestamp(millisecondsSince1970: 1_600_000_000_000 + Int64(i) * 1000)),
                ])
            r.creationDate = Timestamp(millisecondsSince1970: 1_700_000_000_000 + Int64(i))
            r.modificationDate = Timestamp(millisecondsSince1970: 1_700_000_500_000 + Int64(i))
            r.recordChangeTag = "tag\(i)"
            r.creatorUserRecordID = RecordID(recordName: "_importer")
            return r
        }
    }

    static func jsonLines(_ records: [Record]) -> String {
        records.map { $0.webServicesJSON.jsonText + "\n" }.joined()
    }

    @Test func everyRecordCommandWorksOnPostgres() throws {
        let url = try #require(PG.url)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cirrus-cli-pg-\(UUID())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let id = PG.freshContainer("cli")
        let pg = ["--db", dir, "--postgres", url, "--container", id]
        let records = Self.places(300)
        let file = dir + "/places.jsonl"
        // One bad line (a record without a type) is rejected with its line; the rest goes in.
        try
            (Self.jsonLines(Array(records[..<150])) + "{\"recordName\": \"bad\"}\n"
            + Self.jsonLines(Array(records[150...])))
            .write(toFile: file, atomically: true, encoding: .utf8)

        let imported = try Self.run(["import"] + pg + [file])
        #expect(imported.status == 1, "\(imported.stderr)")
        #expect(imported.stdout.hasPrefix("imported 300 records (1 rejected)"), "\(imported.stdout)")
        #expect(imported.stderr.contains("places.jsonl:151"), "\(imported.stderr)")

        // Export: every record, system fields as imported.
        let exported = try Self.run(["export"] + pg)
        #expect(exported.status == 0, "\(exported.stderr)")
        #expect(exported.stderr == "exported 300 records\n")
        var back: [Record] = []
        _ = try RecordTransfer.readRecords(Array(exported.stdout.utf8), name: "export") { batch in
            back += batch.map(\.record)
            return []
        }
        #expect(back.count == 300)
        let byName = Dictionary(uniqueKeysWithValues: back.map { ($0.recordID.recordName, $0) })
        for r in records {
            let b = try #require(byName[r.recordID.recordName])
            #expect(
                b.fields == r.fields && b.creationDate == r.creationDate && b.modificationDate == r.modificationDate)
            #expect(b.recordChangeTag == r.recordChangeTag && b.creatorUserRecordID == r.creatorUserRecordID)
        }
        // Lossless: the export imported into another container exports the same bytes.
        try exported.stdout.write(toFile: dir + "/export.jsonl", atomically: true, encoding: .utf8)
        let copy = ["--db", dir, "--postgres", url, "--container", PG.freshContainer("clicopy")]
        #expect(try Self.run(["import"] + copy + [dir + "/export.jsonl"]).status == 0)
        #expect(try Self.run(["export"] + copy).stdout == exported.stdout)
        // Importing again updates the records in place (nothing rejected, nothing doubled).
        #expect(
            try Self.run(["import"] + pg + [dir + "/export.jsonl"]).stdout.hasPrefix(
                "imported 300 records (0 rejected)"))

        // Query: the first page of museums by population, as the data says.
        let q = try Self.run(
            ["query"] + pg + ["--type", "Place", "kind == 'museum'", "--sort", "-population", "--limit", "5", "--json"])
        #expect(q.status == 0, "\(q.stderr)")
        let museums = records.filter { $0["kind"] == .string("museum") }.sorted {
            guard case .int64(let a)? = $0["population"], case .int64(let b)? = $1["population"] else { return false }
            return a != b ? a > b : $0.recordID.recordName < $1.recordID.recordName
        }
        let names = museums.prefix(5).map { "\"recordName\":\"\($0.recordID.recordName)\"" }
        var at = q.stdout.startIndex
        for n in names {
            let r = try #require(q.stdout.range(of: n, range: at..<q.stdout.endIndex), "\(n) in order in \(q.stdout)")
            at = r.upperBound
        }
        #expect(q.stdout.contains("\"cursor\":\""))
        // Nearest first and a radius through the same command.
        let near = try Self.run(["query"] + pg + ["--type", "Place", "--sort", "location@48.5,2.5", "--limit", "3"])
        #expect(near.status == 0 && near.stdout.contains("3 records"), "\(near.stdout)\(near.stderr)")
        let explain = try Self.run(["explain"] + pg + ["--type", "Place", "kind == 'cafe'", "--limit", "3"])
        #expect(explain.status == 0 && explain.stdout.contains("r_Place"), "\(explain.stdout)\(explain.stderr)")
        let rejected = try Self.run(["query"] + pg + ["--type", "Place", "kind == 'cafe' OR kind == 'bar'"])
        #expect(rejected.status == 1)
        let get = try Self.run(["get"] + pg + ["--type", "Place", "p0007"])
        #expect(get.status == 0 && get.stdout.hasPrefix("Place p0007"), "\(get.stdout)\(get.stderr)")
        #expect(try Self.run(["get"] + pg + ["--type", "Place", "nope"]).status == 1)

        // Schema, roles, users.
        let schema = try Self.run(["schema"] + pg + ["--export"])
        #expect(schema.status == 0 && schema.stdout.contains("RECORD TYPE Place"), "\(schema.stdout)\(schema.stderr)")
        #expect(try Self.run(["role", "create"] + pg + ["Moderator"]).status == 0)
        #expect(try Self.run(["role", "grant"] + pg + ["Moderator", "read,write", "--type", "Place"]).status == 0)
        #expect(try Self.run(["role", "assign"] + pg + ["Moderator", "_alice"]).status == 0)
        let roles = try Self.run(["role", "list"] + pg + ["--json"])
        #expect(roles.stdout.contains("Moderator") && roles.stdout.contains("_alice"), "\(roles.stdout)")
        let added = try Self.run(
            ["users", "add"] + pg + [
                "_alice", "--email", "alice@example.com", "--given-name", "Alice", "--discoverable",
            ])
        #expect(added.status == 0, "\(added.stderr)")
        let found = try Self.run(["users", "lookup"] + pg + ["--email", "ALICE@example.com"])
        #expect(found.status == 0 && found.stdout.contains("_alice (Alice)"), "\(found.stdout)\(found.stderr)")
        #expect(try Self.run(["users", "set-discoverable"] + pg + ["_alice", "no"]).status == 0)
        #expect(try Self.run(["users", "lookup"] + pg + ["--email", "alice@example.com"]).status == 1)
        #expect(try Self.run(["users", "list"] + pg + ["--json"]).stdout.contains("alice@example.com"))

        // Verify, then reset development: nothing left to verify.
        let verify = try Self.run(["verify"] + pg)
        #expect(verify.status == 0 && verify.stdout.contains("status: clean"), "\(verify.stdout)\(verify.stderr)")
        #expect(verify.stdout.contains("type Place: 300"), "\(verify.stdout)")
        let reset = try Self.run(["reset"] + pg + ["--environment", "development", "--yes"])
        #expect(reset.status == 0, "\(reset.stderr)")
        #expect(try Self.run(["verify"] + pg).status == 1)
        // The users outlive the reset.
        #expect(try Self.run(["users", "list"] + pg).stdout.contains("_alice"))
    }

    @Test func aPrivateDatabaseImportCreatesItsZones() throws {
        let url = try #require(PG.url)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cirrus-cli-pgz-\(UUID())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let pg = ["--db", dir, "--postgres", url, "--container", PG.freshContainer("clizone")]
        let notes = (0..<20).map { i in
            Record(
                recordType: "Note",
                recordID: RecordID(recordName: "n\(i)", zoneID: ZoneID(zoneName: i % 2 == 0 ? "Work" : "Home")),
                fields: ["title": .string("note \(i)")])
        }
        try Self.jsonLines(notes).write(toFile: dir + "/notes.jsonl", atomically: true, encoding: .utf8)
        let target = ["--database", "private", "--as", "_bob"]
        let imported = try Self.run(["import"] + pg + target + [dir + "/notes.jsonl"])
        #expect(imported.status == 0, "\(imported.stderr)")
        let work = try Self.run(["export"] + pg + target + ["--zone", "Work"])
        #expect(work.stderr == "exported 10 records\n", "\(work.stderr)")
        let get = try Self.run(["get"] + pg + target + ["--zone", "Home", "--type", "Note", "n3"])
        #expect(get.status == 0 && get.stdout.contains("note 3"), "\(get.stdout)\(get.stderr)")
        // The public database has no custom zones: such records are rejected there.
        let pub = try Self.run(["import"] + pg + [dir + "/notes.jsonl"])
        #expect(
            pub.status == 1 && pub.stdout.hasPrefix("imported 0 records (20 rejected)"), "\(pub.stdout)\(pub.stderr)")
    }
}

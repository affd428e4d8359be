// `cirrus reset` on a real directory (POSIX: the rename of a directory tree, rmdir): development
// emptied, production's files byte for byte, and the refusals — production, another
// environment, a missing directory, an open development container — that change nothing.

import Cirrus
import CirrusIO
import CirrusShell
import Foundation
import RecordLog
import RecordModel
import Testing

@Suite struct ResetCommandsTests {
    /// Every file under `dir` with its bytes (POSIX).
    func files(_ dir: String) throws -> [String: [UInt8]] {
        var out: [String: [UInt8]] = [:]
        let fs = POSIXFileSystem()
        for name in try fs.list(dir) {
            let p = dir + "/" + name
            var isDir: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: p, isDirectory: &isDir)
            if isDir.boolValue { out.merge(try files(p)) { a, _ in a } } else { out[p] = try fs.read(p) }
        }
        return out
    }

    @Test func resetOnDisk() async throws {
        let dir = NSTemporaryDirectory() + "cirrus-reset-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let dev = try Container.open(at: dir)
        let zone = try await dev.privateDatabase(for: "_alice").save(zone: ZoneID(zoneName: "Trips"))
        try await dev.privateDatabase(for: "_alice").save(
            Record(recordType: "Trip", recordID: RecordID(recordName: "t", zoneID: zone), fields: ["days": 3]))
        try await dev.publicDatabase(as: .user("_alice")).save(
            Record(recordType: "Place", recordID: RecordID(recordName: "p"), fields: ["name": "Louvre"]))
        try dev.promoteSchema()
        // Open: the reset is refused and nothing changes.
        let refused = ResetCommands.run(db: dir, environment: "development")
        #expect(refused.exitCode == 1 && refused.stderr.contains("is open"), "\(refused)")
        #expect(dev.publicDatabase.querySnapshot(recordType: "Place")!.rowCount == 1)
        try dev.close()
        let production = try files(dir + "/production")
        #expect(!production.isEmpty)

        let out = ResetCommands.run(db: dir, environment: "development")
        #expect(out.exitCode == 0, "\(out)")
        #expect(out.stdout == "reset the development environment of \(dir) (production untouched)\n")
        #expect(try files(dir + "/production") == production)
        #expect(!FileManager.default.fileExists(atPath: dir + "/development.reset"))
        let fresh = try Container.open(at: dir)
        #expect(fresh.schema.recordTypes.keys.sorted() == ["Users"])
        #expect(fresh.privateDatabaseOwners.isEmpty)
        try fresh.close()
        let prod = try Container.open(at: dir, environment: .production)
        #expect(prod.schema.recordTypes["Place"] != nil)
        try prod.close()
    }

    @Test func onlyDevelopmentCanBeReset() throws {
        let dir = NSTemporaryDirectory() + "cirrus-reset-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let c = try Container.open(at: dir)
        try c.close()
        let before = try files(dir)
        let production = ResetCommands.run(db: dir, environment: "production")
        #expect(production.exitCode == 2 && production.stderr.contains("production is never reset"))
        let other = ResetCommands.run(db: dir, environment: "staging")
        #expect(other.exitCode == 2 && other.stderr.contains("--environment staging: expected development"))
        let missing = ResetCommands.run(db: dir + "-missing", environment: "development")
        #expect(missing.exitCode == 1 && missing.stderr.contains("no such container directory"))
        #expect(try files(dir) == before)
        #expect(ResetCommands.confirmationWord(db: "/data/places/") == "places")
        #expect(ResetCommands.warning(db: "/data/places").hasSuffix("Type places to confirm: "))
    }
}

// Kill test of `cirrus reset`: the real command, SIGKILLed at random moments (before, during and
// after its rename), on a container on disk with records in both environments. After each kill
// development opens either exactly as it was or reset — never in between — production's files
// are byte for byte what they were, and the opening leaves no half-removed tree behind.

import Cirrus
import CirrusIO
import CirrusTestSupport
import Foundation
import RecordLog
import RecordModel
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct ResetKillTests {
    /// The cirrus binary, next to the test bundle in the build products directory.
    static func cirrusPath() -> String? {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<3 {
            let p = dir.appendingPathComponent("cirrus").path
            if FileManager.default.isExecutableFile(atPath: p) { return p }
            dir = dir.deletingLastPathComponent()
        }
        return ProcessInfo.processInfo.environment["CIRRUS_BINARY"]
    }

    static func files(_ dir: String) throws -> [String: [UInt8]] {
        var out: [String: [UInt8]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: dir) {
            let p = dir + "/" + name
            var isDir: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: p, isDirectory: &isDir)
            if isDir.boolValue { out.merge(try files(p)) { a, _ in a } } else { out[p] = try POSIXFileSystem().read(p) }
        }
        return out
    }

    @Test func aKilledResetLeavesDevelopmentResetOrAsItWas() async throws {
        guard let cirrus = Self.cirrusPath() else {
            Issue.record("cirrus not found next to \(CommandLine.arguments[0]); run `swift build` first")
            return
        }
        let seed = TestSeed.next()
        var g = SeededRandom(seed: seed)
        var outcomes: [String: Int] = [:]
        let rounds = 12
        for round in 0..<rounds {
            let dir = NSTemporaryDirectory() + "cirrus-resetkill-\(getpid())-\(round)"
            try? FileManager.default.removeItem(atPath: dir)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let dev = try Container.open(at: dir)
            let db = dev.publicDatabase(as: .user("_alice"))
            for batch in 0..<5 {
                let records = (0..<80).map {
                    Record(
                        recordType: "Place", recordID: RecordID(recordName: "p\(batch)-\($0)"),
                        fields: ["n": .int64(Int64($0))])
                }
                _ = try await db.modifyRecords(saving: records, deleting: [])
            }
            try dev.checkpoint()
            try dev.promoteSchema()
            try dev.close()
            let production = try Self.files(dir + "/production")
            let p = Process()
            p.executableURL = URL(fileURLWithPath: cirrus)
            p.arguments = ["reset", "--db", dir, "--environment", "development", "--yes"]
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            usleep(UInt32(g.below(60_000)))
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            #expect(try Self.files(dir + "/production") == production, "seed \(seed) round \(round)")
            let c = try Container.open(at: dir)
            let rows = c.publicDatabase.querySnapshot(recordType: "Place")!.rowCount
            let types = c.schema.recordTypes.keys.sorted()
            let state =
                rows == 400 && types == ["Place", "Users"]
                ? "as it was" : rows == 0 && types == ["Users"] ? "reset" : "rows \(rows) types \(types)"
            #expect(state == "as it was" || state == "reset", "seed \(seed) round \(round): \(state)")
            #expect(!FileManager.default.fileExists(atPath: dir + "/development.reset"), "seed \(seed) round \(round)")
            try c.checkInvariants()
            try c.close()
            outcomes[state, default: 0] += 1
        }
        print("ResetKillTests seed \(seed): \(outcomes)")
        #expect(outcomes.values.reduce(0, +) == rounds)
    }
}

// The damage matrix (docs/storage-format.md, "The damage matrix"): every kind of file a container
// keeps × truncated, one byte flipped, a zero-filled 4 KiB page, deleted, an unknown extra file →
// its documented outcome at open — opens (derived data rebuilt), opens with a named loss, or
// refuses naming the file — and then `Container.repair` keeps every record the damage did not
// touch, unchanged, names what it lost, and leaves a container that verifies and opens clean.
// One named test per cell, as LevelDB's and SQLite's corruption tests are named.
// (web-services.json, the server's tokens and keys: Tests/CirrusServerTests/DamageMatrixTokenTests.)

import CirrusIO
import CirrusTestSupport
import Foundation
import RecordLog
import RecordModel
import Testing

@testable import CirrusEmbedded
@testable import CirrusFacade

@Suite struct DamageMatrixTests {
    enum FileKind: String, Sendable {
        case manifest, logMiddle, logTail, rowsSegment, indexSegment, stateSegment
        case cursorSecrets, subscriptions, users
    }

    enum Damage: String, Sendable { case truncated, flippedByte, zeroPage, deleted, extraFile }

    /// What opening the damaged container does.
    enum Outcome: Sendable {
        /// Opens as if nothing happened (a stray file is ignored or removed as a leftover).
        case opens
        /// Opens, rebuilds derived data (or replaces cursor secrets) and warns naming the file.
        case opensWithWarning
        /// Opens, but something is gone that the open cannot know about (said in the docs).
        case opensWithSilentLoss
        /// Opens; the damage lies in bytes the open does not read — `verify` names it.
        case opensVerifyNamesIt
        /// Refuses, naming the file.
        case refuses
    }

    static let store = "/c/development"
    static let places = TableKey(owner: ZoneID.defaultOwnerName, recordType: "Place")

    func place(_ i: Int) -> Record {
        rec(
            String(format: "p%04d", i), "Place",
            ["n": .int64(Int64(i)), "name": .string("place \(i) " + String(repeating: "harbour ", count: 20))])
    }

    func note(_ i: Int) -> Record {
        rec("note\(i)", "Note", zone: ZoneID(zoneName: "Z"), ["title": .string("note \(i)")])
    }

    func options(_ env: TestEnv, readOnly: Bool = false) -> ContainerOptions {
        var o = env.options(readOnly: readOnly)
        o.durability = .everyCommit
        o.logger = LogCollector().logger()
        return o
    }

    /// 400 places (rows over several 64 KiB blocks) and 20 notes in _alice's zone Z checkpointed;
    /// a role, a subscription and a user; then 60 places in two batches in the log (over 8 KiB, so
    /// its middle lies between sound frames). Returns the
    /// records by name.
    func populated(_ env: TestEnv) async throws -> [String: Record] {
        let c = try Container.open(at: env.dir, options: options(env))
        let pub = c.publicDatabase(as: .user("_u"))
        let alice = c.privateDatabase(for: "_alice")
        _ = try await alice.save(zone: ZoneID(zoneName: "Z"))
        var all: [Record] = []
        for chunk in stride(from: 0, to: 400, by: 200) {
            let batch = (chunk..<(chunk + 200)).map(place)
            _ = try await pub.modifyRecords(saving: batch, deleting: [])
            all += batch
        }
        let notes = (0..<20).map(note)
        _ = try await alice.modifyRecords(saving: notes, deleting: [])
        try c.createRole("Moderator")
        _ = try await alice.save(
            Subscription(id: "s1", recordType: "Note", predicate: "title == %@", arguments: ["x"], firesOn: [.creation])
        )
        _ = try c.saveUserAccount(
            UserAccount(userRecordName: "_bob", emailAddress: "bob@example.com", name: UserNameComponents()))
        try c.checkpoint()
        for batch in [400..<430, 430..<460] {
            let more = batch.map(place)
            _ = try await pub.modifyRecords(saving: more, deleting: [])
            all += more
        }
        try c.close()
        return Dictionary(uniqueKeysWithValues: (all + notes).map { ($0.recordID.recordName, $0) })
    }

    func manifest(_ env: TestEnv) throws -> Manifest {
        try Manifest.decode(try #require(env.fs.contents(Self.store + "/CURRENT"))).get()
    }

    /// The file of `kind` in the populated container.
    func path(_ kind: FileKind, _ env: TestEnv) throws -> String {
        let m = try manifest(env)
        let cp = try #require(m.checkpoint)
        let layer = try #require(cp.tables[Self.places]?.last)
        switch kind {
        case .manifest: return Self.store + "/CURRENT"
        case .logMiddle, .logTail: return Self.store + "/" + Manifest.segmentFileName(try #require(m.segments.last))
        case .rowsSegment: return Self.store + "/" + DataSegmentFormat.fileName(layer.rows)
        case .indexSegment: return Self.store + "/" + DataSegmentFormat.fileName(try #require(layer.indexes))
        case .stateSegment: return Self.store + "/" + DataSegmentFormat.fileName(cp.state)
        case .cursorSecrets: return Self.store + "/cursor-secrets.json"
        case .subscriptions: return Self.store + "/subscriptions.json"
        case .users: return "/c/users.json"
        }
    }

    /// Where a one-byte or one-page damage goes: the middle of the file — for the log, inside
    /// its first batch (the middle) or its last frame (the tail); for a JSON file, on the first
    /// bracket, quote or colon at or after the middle (a damaged letter inside a string would
    /// still be JSON: these files carry no checksum, so that cannot be seen).
    func target(_ kind: FileKind, _ bytes: [UInt8]) -> Int {
        switch kind {
        case .logMiddle: return LogFormat.segmentHeaderSize + 40
        case .logTail: return bytes.count - 5
        case .cursorSecrets, .subscriptions, .users:
            let structural = Set("{}[]\":,".utf8)
            return (bytes.count / 2..<bytes.count).first { structural.contains(bytes[$0]) } ?? bytes.count / 2
        default: return bytes.count / 2
        }
    }

    func damage(_ kind: FileKind, _ damage: Damage, _ env: TestEnv) throws -> String {
        let p = try path(kind, env)
        let bytes = try #require(env.fs.contents(p))
        switch damage {
        case .truncated:
            env.fs.damageTruncate(p, to: kind == .logTail ? bytes.count - 7 : bytes.count * 6 / 10)
        case .flippedByte:
            env.fs.flipBit(p, atByte: target(kind, bytes), bit: 1)
        case .zeroPage:
            let start = kind == .logTail ? max(0, bytes.count - 4096) : target(kind, bytes) / 4096 * 4096
            var b = bytes
            for i in start..<min(start + 4096, b.count) { b[i] = 0 }
            env.fs.overwrite(p, with: b)
        case .deleted:
            try env.fs.remove(p)
        case .extraFile:
            let name: String
            switch kind {
            case .manifest: name = "CURRENT.tmp"
            case .logMiddle, .logTail: name = Manifest.segmentFileName((try manifest(env).segments.last ?? 0) + 7)
            case .rowsSegment, .indexSegment, .stateSegment: name = DataSegmentFormat.fileName(900)
            case .cursorSecrets, .subscriptions, .users: name = "notes.txt"
            }
            env.fs.overwrite(parentDirectory(of: p) + "/" + name, with: Array("junk".utf8))
        }
        return p
    }

    /// Damages `kind` by `damage`, checks the open against `expected`, then repairs and checks
    /// that every record not named lost is there unchanged and that the container is sound.
    func check(_ kind: FileKind, _ damage: Damage, _ expected: Outcome, lost: Bool = false) async throws {
        let env = TestEnv()
        let model = try await populated(env)
        let file = try self.damage(kind, damage, env)
        let label = "\(kind.rawValue) \(damage.rawValue)"

        // The open (read-only: what `cirrus query` and `verify` see; nothing written).
        let opened = Result { try Container.open(at: env.dir, options: options(env, readOnly: true)) }
        switch (expected, opened) {
        case (.refuses, .failure(let e)):
            #expect("\(e)".contains(file.split(separator: "/").last.map(String.init) ?? file), "\(label): \(e)")
        case (.refuses, .success):
            Issue.record("\(label): opened, expected a refusal naming \(file)")
        case (_, .failure(let e)):
            Issue.record("\(label): refused: \(e)")
        case (.opensWithWarning, .success(let c)):
            #expect(c.openReport.warnings.contains { $0.path == file }, "\(label): \(c.openReport.warnings)")
        case (.opensVerifyNamesIt, .success):
            let v = try RecordStore.verify(directory: Self.store, fileSystem: env.fs)
            #expect("\(v.open.corruptions)".contains(file), "\(label): verify says \(v.open.corruptions)")
        case (.opens, .success(let c)), (.opensWithSilentLoss, .success(let c)):
            #expect(c.openReport.warnings.isEmpty && c.openReport.corruptions.isEmpty, "\(label)")
        }
        if kind == .users, damage != .deleted, damage != .extraFile, case .success(let c) = opened {
            // Read only by discovery: the call fails naming the file.
            #expect(throws: CirrusError.self, "\(label)") { _ = try c.userAccounts() }
        }

        let report = try Container.repair(at: env.dir, environment: .development, options: options(env))
        #expect(report.lostSomething == lost, "\(label): \(report.lines.joined(separator: "\n"))")
        try checkRepaired(env, model, report, label, silentLoss: expected == .opensWithSilentLoss)
    }

    func checkRepaired(
        _ env: TestEnv, _ model: [String: Record], _ report: ContainerRepairReport, _ label: String,
        silentLoss: Bool
    ) throws {
        let c = try Container.open(at: env.dir, options: options(env))
        #expect(c.openReport.isClean, "\(label): \(c.openReport.warnings) \(c.openReport.corruptions)")
        let named = Set(report.store.losses.flatMap(\.names))
        let unnamed =
            report.store.losses.contains { $0.what == .records && $0.names.count < ($0.records ?? 1) }
            || report.store.losses.contains { $0.what == .logEntries }
        var present = 0
        for (name, r) in model {
            let owner = r.recordType == "Note" ? "_alice" : ZoneID.defaultOwnerName
            let id = RecordID(recordName: name, zoneID: ZoneID(zoneName: r.recordID.zoneID.zoneName, ownerName: owner))
            if let got = try c.embedded?.store.record(id)?.record {
                #expect(got.fields == r.fields, "\(label): \(name) changed")
                present += 1
            } else {
                #expect(named.contains(name) || unnamed || silentLoss, "\(label): \(name) lost without a name")
            }
        }
        #expect(c.embedded?.store.snapshot().recordCount == present, "\(label): a record appeared")
        try c.checkInvariants()
        try c.close()
        #expect(try !RecordStore.verify(directory: Self.store, fileSystem: env.fs).isDamaged, "\(label)")
    }

    // MARK: CURRENT (the manifest)

    @Test func manifestTruncated() async throws { try await check(.manifest, .truncated, .refuses) }
    @Test func manifestFlippedByte() async throws { try await check(.manifest, .flippedByte, .refuses) }
    @Test func manifestZeroPage() async throws { try await check(.manifest, .zeroPage, .refuses) }
    @Test func manifestDeleted() async throws { try await check(.manifest, .deleted, .refuses) }
    @Test func manifestExtraFile() async throws { try await check(.manifest, .extraFile, .opens) }

    // MARK: a log segment, damaged in the middle

    /// Cut in the middle: what follows is gone, and a cut log looks like an unfinished write.
    @Test func logMiddleTruncated() async throws { try await check(.logMiddle, .truncated, .opensWithSilentLoss) }
    @Test func logMiddleFlippedByte() async throws {
        try await check(.logMiddle, .flippedByte, .refuses, lost: true)
    }
    @Test func logMiddleZeroPage() async throws { try await check(.logMiddle, .zeroPage, .refuses, lost: true) }
    @Test func logMiddleDeleted() async throws { try await check(.logMiddle, .deleted, .refuses, lost: true) }
    @Test func logMiddleExtraFile() async throws { try await check(.logMiddle, .extraFile, .opens) }

    // MARK: a log segment, damaged at its tail

    /// The last batch looks unfinished (a torn write): dropped at open, like a crash mid-write.
    @Test func logTailTruncated() async throws { try await check(.logTail, .truncated, .opensWithSilentLoss) }
    @Test func logTailFlippedByte() async throws { try await check(.logTail, .flippedByte, .opensWithSilentLoss) }
    @Test func logTailZeroPage() async throws { try await check(.logTail, .zeroPage, .opensWithSilentLoss) }
    @Test func logTailDeleted() async throws { try await check(.logTail, .deleted, .refuses, lost: true) }
    @Test func logTailExtraFile() async throws { try await check(.logTail, .extraFile, .opens) }

    // MARK: a rows segment

    /// The footer, directory and CRC table are gone; the rows are read back whole.
    @Test func rowsSegmentTruncated() async throws { try await check(.rowsSegment, .truncated, .refuses, lost: true) }
    @Test func rowsSegmentFlippedByte() async throws {
        try await check(.rowsSegment, .flippedByte, .opensVerifyNamesIt, lost: true)
    }
    @Test func rowsSegmentZeroPage() async throws {
        try await check(.rowsSegment, .zeroPage, .opensVerifyNamesIt, lost: true)
    }
    @Test func rowsSegmentDeleted() async throws { try await check(.rowsSegment, .deleted, .refuses, lost: true) }
    @Test func rowsSegmentExtraFile() async throws { try await check(.rowsSegment, .extraFile, .opens) }

    // MARK: an index segment (derived: never load-bearing)

    @Test func indexSegmentTruncated() async throws { try await check(.indexSegment, .truncated, .opensWithWarning) }
    @Test func indexSegmentFlippedByte() async throws {
        try await check(.indexSegment, .flippedByte, .opensVerifyNamesIt)
    }
    @Test func indexSegmentZeroPage() async throws { try await check(.indexSegment, .zeroPage, .opensVerifyNamesIt) }
    @Test func indexSegmentDeleted() async throws { try await check(.indexSegment, .deleted, .opensWithWarning) }
    @Test func indexSegmentExtraFile() async throws { try await check(.indexSegment, .extraFile, .opens) }

    // MARK: the state segment (zones, schema with its roles, change history)

    @Test func stateSegmentTruncated() async throws { try await check(.stateSegment, .truncated, .refuses, lost: true) }
    @Test func stateSegmentFlippedByte() async throws {
        try await check(.stateSegment, .flippedByte, .refuses, lost: true)
    }
    @Test func stateSegmentZeroPage() async throws { try await check(.stateSegment, .zeroPage, .refuses, lost: true) }
    @Test func stateSegmentDeleted() async throws { try await check(.stateSegment, .deleted, .refuses, lost: true) }
    @Test func stateSegmentExtraFile() async throws { try await check(.stateSegment, .extraFile, .opens) }

    // MARK: cursor secrets (they only sign cursors)

    @Test func cursorSecretsTruncated() async throws {
        try await check(.cursorSecrets, .truncated, .opensWithWarning, lost: true)
    }
    @Test func cursorSecretsFlippedByte() async throws {
        try await check(.cursorSecrets, .flippedByte, .opensWithWarning, lost: true)
    }
    @Test func cursorSecretsZeroPage() async throws {
        try await check(.cursorSecrets, .zeroPage, .opensWithWarning, lost: true)
    }
    /// Cursors issued before fail as stale; nothing else is lost.
    @Test func cursorSecretsDeleted() async throws { try await check(.cursorSecrets, .deleted, .opensWithSilentLoss) }
    @Test func cursorSecretsExtraFile() async throws { try await check(.cursorSecrets, .extraFile, .opens) }

    // MARK: subscriptions

    @Test func subscriptionsTruncated() async throws {
        try await check(.subscriptions, .truncated, .refuses, lost: true)
    }
    @Test func subscriptionsFlippedByte() async throws {
        try await check(.subscriptions, .flippedByte, .refuses, lost: true)
    }
    @Test func subscriptionsZeroPage() async throws { try await check(.subscriptions, .zeroPage, .refuses, lost: true) }
    @Test func subscriptionsDeleted() async throws { try await check(.subscriptions, .deleted, .opensWithSilentLoss) }
    @Test func subscriptionsExtraFile() async throws { try await check(.subscriptions, .extraFile, .opens) }

    // MARK: users (read by discovery calls, which fail naming the file)

    @Test func usersTruncated() async throws { try await check(.users, .truncated, .opens, lost: true) }
    @Test func usersFlippedByte() async throws { try await check(.users, .flippedByte, .opens, lost: true) }
    @Test func usersZeroPage() async throws { try await check(.users, .zeroPage, .opens, lost: true) }
    @Test func usersDeleted() async throws { try await check(.users, .deleted, .opensWithSilentLoss) }
    @Test func usersExtraFile() async throws { try await check(.users, .extraFile, .opens) }
}

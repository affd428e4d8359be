// Full disks and failing writes, at every write, fsync, rename and file creation of each
// operation that writes — a commit, a checkpoint, a compaction, a bulk import, a reset — with the
// fault-injecting file system (docs/storage-format.md, "Damage and repair"). For each cell:
// - the call fails with an error that names the cause and a path;
// - what it wrote is taken back before it returns (no data segment that no manifest names);
// - a full disk or an I/O error on a write does not stop the container: once the fault is gone
//   the same call succeeds without a reopen (an fsync or rename that fails after a manifest switch
//   may require one, and says so);
// - after a crash, every acknowledged record is there, unchanged, the failed call's records are
//   there all together or not at all, and the container verifies.

import CirrusIO
import CirrusTestSupport
import Foundation
import RecordLog
import RecordModel
import Testing

@testable import CirrusEmbedded
@testable import CirrusFacade

@Suite struct FailingWriteTests {
    enum Operation: String, CaseIterable, Sendable {
        case commit, checkpoint, compaction, bulkImport = "import", reset
    }

    struct Fault: Sendable, CustomStringConvertible {
        var kind: InMemoryFileSystem.FaultKind
        var errno: Int32
        var description: String { "\(errno == 28 ? "ENOSPC" : "EIO") on \(kind)" }
    }

    static let faults = [
        Fault(kind: .write, errno: 28), Fault(kind: .write, errno: 5), Fault(kind: .create, errno: 28),
        Fault(kind: .fsync, errno: 5), Fault(kind: .rename, errno: 5),
    ]

    static let storeDir = "/c/development"

    func place(_ name: String, _ i: Int) -> Record {
        rec(name, "Place", ["n": .int64(Int64(i)), "name": .string("place \(name)")])
    }

    func options(_ env: TestEnv) -> ContainerOptions {
        var o = env.options()
        o.durability = .everyCommit
        o.backgroundCheckpoints = false
        o.logger = LogCollector().logger()
        return o
    }

    /// 30 places checkpointed and 10 more in the log: the acknowledged records, by name.
    func setUp() async throws -> (TestEnv, Container, [String: Record]) {
        var env = TestEnv()
        env.checkpointThreshold = 1_000_000
        let c = try Container.open(at: env.dir, options: options(env))
        let db = c.publicDatabase(as: .user("_u"))
        let first = (0..<30).map { place("p\($0)", $0) }
        _ = try await db.modifyRecords(saving: first, deleting: [])
        try c.checkpoint()
        let more = (30..<40).map { place("p\($0)", $0) }
        _ = try await db.modifyRecords(saving: more, deleting: [])
        return (env, c, Dictionary(uniqueKeysWithValues: (first + more).map { ($0.recordID.recordName, $0) }))
    }

    /// The records `op` writes when it succeeds (all or none of them may be there after a failure).
    func written(_ op: Operation) -> [Record] {
        switch op {
        case .commit: (0..<5).map { place("c\($0)", $0) }
        case .bulkImport: (0..<60).map { place("i\($0)", $0) }
        default: []
        }
    }

    func run(_ op: Operation, _ c: Container, _ env: TestEnv) async throws {
        switch op {
        case .commit:
            let result = try await c.publicDatabase(as: .user("_u")).modifyRecords(saving: written(op), deleting: [])
            for (_, r) in result.saveResults { _ = try r.get() }
        case .checkpoint: try c.checkpoint()
        case .compaction: try c.compact()
        case .bulkImport:
            let rejected = try c.importRecords(bulk: written(op), into: .public)
            #expect(rejected.isEmpty)
        case .reset:
            try c.close()
            try Container.resetDevelopment(at: env.dir, options: options(env))
        }
    }

    /// How many operations of each kind `op` performs.
    func counts(_ op: Operation) async throws -> [InMemoryFileSystem.FaultKind: Int] {
        let (env, c, _) = try await setUp()
        let kinds = InMemoryFileSystem.FaultKind.allCases
        let before = kinds.map { env.fs.count($0) }
        try await run(op, c, env)
        var out: [InMemoryFileSystem.FaultKind: Int] = [:]
        for (i, kind) in kinds.enumerated() { out[kind] = env.fs.count(kind) - before[i] }
        return out
    }

    @Test(arguments: Operation.allCases)
    func everyFailingWriteOf(_ op: Operation) async throws {
        let n = try await counts(op)
        var cells = 0
        var failures = 0
        for fault in Self.faults {
            for k in 0..<(n[fault.kind] ?? 0) {
                cells += 1
                if try await cell(op, fault, k) { failures += 1 }
            }
        }
        #expect(failures > 0, "\(op): no injected fault made it fail")
        print("FailingWriteTests: \(op.rawValue): \(cells) cells (\(n)), \(failures) failed as injected")
    }

    /// One cell: `fault` at the `k`-th operation of its kind in `op`. True when the call failed.
    func cell(_ op: Operation, _ fault: Fault, _ k: Int) async throws -> Bool {
        let (env, c, acknowledged) = try await setUp()
        let label = "\(op.rawValue), \(fault) #\(k)"
        env.fs.fail(fault.kind, errno: fault.errno, after: k)
        var failed = false
        do {
            try await run(op, c, env)
        } catch {
            failed = true
            let text = "\(error)"
            #expect(
                text.contains(fault.errno == 28 ? "No space left on device" : "Input/output error")
                    && text.contains("/c"),
                "\(label): \(text)")
        }
        env.fs.clearFaults()
        if failed, op != .reset {
            let stray = strayFiles(env)
            if try await goesOn(op, c, env, label) { #expect(stray.isEmpty, "\(label): left behind \(stray)") }
        }
        env.fs.crash()
        try await checkAfterCrash(op, env, acknowledged, failed: failed, label)
        return failed
    }

    /// The container takes the same call again once the fault is gone, without a reopen —
    /// except after a failed fsync or rename, which may have left it needing one (and says so).
    func goesOn(_ op: Operation, _ c: Container, _ env: TestEnv, _ label: String) async throws -> Bool {
        do {
            try await run(op, c, env)
            return true
        } catch {
            #expect(
                (fault(label) == .fsync || fault(label) == .rename) && "\(error)".contains("reopened"),
                "\(label): the retry failed: \(error)")
            return false
        }
    }

    func fault(_ label: String) -> InMemoryFileSystem.FaultKind? {
        InMemoryFileSystem.FaultKind.allCases.first { label.contains("on \($0)") }
    }

    /// Data segments that the manifest does not name, and a `CURRENT.tmp`: what a failed call left.
    func strayFiles(_ env: TestEnv) -> [String] {
        guard let bytes = env.fs.contents(Self.storeDir + "/CURRENT"), case .success(let m) = Manifest.decode(bytes)
        else {
            return ["CURRENT (does not read)"]
        }
        let names = (try? env.fs.list(Self.storeDir)) ?? []
        return names.filter { name in
            if let n = DataSegmentFormat.number(fileName: name) { return !m.dataSegments.contains(n) }
            return name == "CURRENT.tmp"
        }
    }

    /// After a crash: the acknowledged records, unchanged; the failed call's all or none; verified.
    func checkAfterCrash(
        _ op: Operation, _ env: TestEnv, _ acknowledged: [String: Record], failed: Bool, _ label: String
    ) async throws {
        let c = try Container.open(at: env.dir, options: options(env))
        let db = c.publicDatabase(as: .user("_u"))
        var got: [String: Record] = [:]
        if db.schema.recordTypes["Place"] != nil {
            let q = RecordQuery(recordType: "Place", predicate: "TRUEPREDICATE")
            let (results, _) = try await db.records(matching: q, resultsLimit: 400)
            for (id, r) in results { got[id.recordName] = try r.get() }
        }
        let wasReset = op == .reset && got.isEmpty
        if !wasReset {
            for (name, r) in acknowledged {
                #expect(got[name]?.fields == r.fields, "\(label): \(name) lost or changed")
            }
        }
        let new = written(op).map(\.recordID.recordName)
        let present = new.filter { got[$0] != nil }
        #expect(present.isEmpty || present.count == new.count, "\(label): \(present.count) of \(new.count) written")
        if !failed && op != .reset { #expect(present.count == new.count, "\(label): an acknowledged write is lost") }
        #expect(got.count == (wasReset ? 0 : acknowledged.count + present.count), "\(label): \(got.count) records")
        try c.checkInvariants()
        try c.close()
        let v = try RecordStore.verify(directory: Self.storeDir, fileSystem: env.fs)
        #expect(!v.isDamaged, "\(label): \(v.open.corruptions) \(v.open.warnings)")
    }
}

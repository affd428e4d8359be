// Model-based tests: random operation sequences — saves with fresh and stale change tags under
// every save policy, creations that collide, batches (atomic or not in custom zones, per item
// in the default zone),
// deletions with deleteSelf cascades, zone creation and deletion, compaction, reopening —
// run against an in-memory model of alice's private database. After every step the database
// must agree with the model: every record (system fields included), the errors of failed items,
// a client replica kept by fetching zone changes, and the query snapshots' rows and indexes
// (IndexConsistency.swift). The seed is printed on failure; replay with CIRRUS_SEED=<seed>.
//
// On both engines: the embedded one (a container on an in-memory file system with a fixed
// clock), and PostgreSQL when CIRRUS_POSTGRES_URL is set (`make test-postgres`), through the
// same `Container`. What only the embedded engine has is checked only there: compaction and
// checkpoints (steps that do nothing on PostgreSQL), the query snapshots' indexes, the
// container's invariants, and modification dates equal to the test's clock (PostgreSQL's store
// reads the wall clock). Reopening is closing and opening the same container on either.

import CirrusPostgres
import CirrusTestSupport
import Foundation
import RecordLog
import RecordModel
import Testing

@testable import CirrusEmbedded
@testable import CirrusFacade

/// The engines the model tests run on.
enum ModelEngine: String, CaseIterable, CustomStringConvertible {
    case embedded, postgres

    var description: String { rawValue }

    /// The PostgreSQL server, from `CIRRUS_POSTGRES_URL`.
    static let postgresURL = ProcessInfo.processInfo.environment["CIRRUS_POSTGRES_URL"]

    /// Every engine this run can reach.
    static var available: [ModelEngine] { postgresURL == nil ? [.embedded] : [.embedded, .postgres] }
}

/// What alice's private database should hold.
struct Model {
    var zones: Set<String> = [ZoneID.defaultZoneName]
    var records: [RecordID: Record] = [:]
    var oldTags: [RecordID: [String]] = [:]

    func inZone(_ z: String) -> [Record] { records.values.filter { $0.recordID.zoneID.zoneName == z } }

    /// The ids a deletion of `id` removes: it and, transitively, records of the zone holding a
    /// deleteSelf reference to a removed one.
    func cascade(_ id: RecordID) -> Set<RecordID> {
        var gone: Set<RecordID> = [id]
        var changed = true
        while changed {
            changed = false
            for r in records.values where !gone.contains(r.recordID) && r.recordID.zoneID == id.zoneID {
                let targets = r.fields.values.flatMap(\.elements).compactMap { v -> RecordID? in
                    if case .reference(let ref) = v, ref.action == .deleteSelf { return ref.recordID }
                    return nil
                }
                if targets.contains(where: gone.contains) {
                    gone.insert(r.recordID)
                    changed = true
                }
            }
        }
        return gone
    }
}

/// One planned item and the error the model expects (nil: success).
enum Item {
    /// A save, its expected error, and the fields the stored record should have on success.
    case save(Record, expect: CirrusError.Code?, fields: [String: FieldValue])
    case delete(RecordID, expect: CirrusError.Code?)
}

struct ModelRun {
    var rng: SeededRandom
    let seed: UInt64
    let engine: ModelEngine
    /// The PostgreSQL container's id (a fresh one per run).
    let containerID: String
    var env = TestEnv()
    var container: Container
    var model = Model()
    var replicas: [String: (token: ChangeToken?, records: [RecordID: Record])] = [:]
    let words = ["apple", "pear", "plum", "fig", "kiwi", "lime"]

    init(seed: UInt64, engine: ModelEngine = .embedded) async throws {
        self.seed = seed
        self.engine = engine
        containerID = "iCloud.test.model.\(seed % 1_000_000_000).\(UInt32.random(in: 0...UInt32.max))"
        rng = SeededRandom(seed: seed)
        env.seed = seed
        // Half the runs checkpoint every few changes, so queries, changes, cascades and
        // reopening run over base ∪ delta with checkpoints interleaved.
        env.checkpointThreshold = [3, 17, 50_000, 50_000][rng.below(4)]
        container = try await Self.open(engine, env, containerID)
    }

    static func open(_ engine: ModelEngine, _ env: TestEnv, _ containerID: String) async throws -> Container {
        switch engine {
        case .embedded: try env.open()
        case .postgres:
            try await Container.open(postgres: try #require(ModelEngine.postgresURL), containerID: containerID)
        }
    }

    var db: Database { container.privateDatabase(for: "_alice") }

    mutating func fields(zone: ZoneID, name: String) -> [String: FieldValue] {
        var f: [String: FieldValue] = ["n": .int64(Int64(rng.below(20)))]
        if rng.chance(0.7) {
            f["title"] = .string((0...rng.below(3)).map { _ in words[rng.below(words.count)] }.joined(separator: " "))
        }
        if rng.chance(0.3) {
            f["tags"] = .list((0..<rng.below(3) + 1).map { _ in .string(words[rng.below(words.count)]) })
        }
        if rng.chance(0.3) {
            f["loc"] = .location(
                Location(latitude: Double(rng.below(170)) - 85, longitude: Double(rng.below(350)) - 175))
        }
        let candidates = model.inZone(zone.zoneName).map(\.recordID).filter { $0.recordName != name }.sorted()
        if !candidates.isEmpty && rng.chance(0.35) {
            f["parent"] = .reference(Reference(recordID: candidates[rng.below(candidates.count)], action: .deleteSelf))
        }
        return f
    }

    mutating func pickZone() -> ZoneID {
        let zs = model.zones.sorted()
        return ZoneID(zoneName: zs[rng.below(zs.count)])
    }

    /// Plans one save or delete in `zone` against `m`, and applies its expected effect to `m`.
    mutating func planItem(zone: ZoneID, _ m: inout Model, deletes: Bool, policy: SavePolicy) -> Item {
        let existing = m.inZone(zone.zoneName).sorted { $0.recordID < $1.recordID }
        if deletes {
            let id =
                existing.isEmpty || rng.chance(0.2)
                ? RecordID(recordName: "r\(rng.below(30))", zoneID: zone) : existing[rng.below(existing.count)].recordID
            guard m.records[id] != nil else { return .delete(id, expect: .unknownItem) }
            for g in m.cascade(id) { m.records[g] = nil }
            return .delete(id, expect: nil)
        }
        /// The fields a save of `given` over `server` stores under the batch's policy.
        func stored(_ given: Record, over server: Record?) -> [String: FieldValue] {
            guard policy == .changedKeys, let server else { return given.fields.dictionary }
            return server.fields.dictionary.merging(given.fields.dictionary) { _, new in new }
        }
        switch rng.below(4) {
        case 0 where !existing.isEmpty:  // fresh update
            let server = existing[rng.below(existing.count)]
            var r = server
            r.fields = RecordFields(fields(zone: zone, name: r.recordID.recordName))
            let f = stored(r, over: server)
            m.records[r.recordID]?.fields = RecordFields(f)  // system fields are filled in from the result
            return .save(r, expect: nil, fields: f)
        case 1 where existing.contains { !(m.oldTags[$0.recordID] ?? []).isEmpty }:  // stale tag
            let withOld = existing.filter { !(m.oldTags[$0.recordID] ?? []).isEmpty }
            let server = withOld[rng.below(withOld.count)]
            var r = server
            let tags = m.oldTags[r.recordID] ?? []
            r.recordChangeTag = tags[rng.below(tags.count)]
            r.fields = RecordFields(fields(zone: zone, name: r.recordID.recordName))
            if policy == .ifServerRecordUnchanged { return .save(r, expect: .serverRecordChanged, fields: [:]) }
            let f = stored(r, over: server)
            m.records[r.recordID]?.fields = RecordFields(f)
            return .save(r, expect: nil, fields: f)
        default:  // create (names collide now and then)
            let name = "r\(rng.below(30))"
            let type = rng.chance(0.5) ? "Note" : "Task"
            let r = Record(
                recordType: type, recordID: RecordID(recordName: name, zoneID: zone),
                fields: RecordFields(fields(zone: zone, name: name)))
            if let old = m.records[r.recordID] {
                if old.recordType != type { return .save(r, expect: .constraintViolation, fields: [:]) }
                if policy == .ifServerRecordUnchanged { return .save(r, expect: .serverRecordChanged, fields: [:]) }
                let f = stored(r, over: old)
                m.records[r.recordID]?.fields = RecordFields(f)
                return .save(r, expect: nil, fields: f)
            }
            m.records[r.recordID] = r
            return .save(r, expect: nil, fields: r.fields.dictionary)
        }
    }

    mutating func step() async throws {
        switch rng.below(20) {
        case 0:
            let z = ZoneID(zoneName: "Z\(rng.below(3))")
            try await db.save(zone: z)
            model.zones.insert(z.zoneName)
        case 1 where model.zones.count > 1:
            let z = pickZone()
            if z.isDefaultZone { return }
            try await db.deleteZone(z)
            model.zones.remove(z.zoneName)
            for r in model.inZone(z.zoneName) { model.records[r.recordID] = nil }
            replicas[z.zoneName] = nil
        case 2:
            try container.close()
            container = try await Self.open(engine, env, containerID)
        case 3:
            let compact = rng.chance(0.3)
            let checkpoint = !compact && rng.chance(0.5)
            guard engine == .embedded else { return }
            if compact { try container.compact() } else if checkpoint { try container.checkpoint() }
        default:
            try await batch()
        }
    }

    mutating func batch() async throws {
        let zone = pickZone()
        let n = rng.chance(0.5) ? 1 : rng.below(5) + 1
        let policy: SavePolicy =
            rng.chance(0.7) ? .ifServerRecordUnchanged : (rng.chance(0.5) ? .changedKeys : .allKeys)
        let atomically = rng.chance(0.8)
        var m = model
        var saves: [Item] = []
        var deletes: [Item] = []
        var names = Set<String>()
        // The database applies a batch's saves, then its deletions: plan them in that order.
        let deleteFlags = (0..<n).map { _ in rng.chance(0.3) }.sorted { !$0 && $1 }
        for isDelete in deleteFlags {
            var trial = m
            let item = planItem(zone: zone, &trial, deletes: isDelete, policy: policy)
            let name: String
            switch item {
            case .save(let r, _, _): name = r.recordID.recordName
            case .delete(let id, _): name = id.recordName
            }
            // One item per record per batch keeps the model's sequential reading exact.
            if !names.insert(name).inserted { continue }
            m = trial
            if isDelete { deletes.append(item) } else { saves.append(item) }
        }
        let items = saves + deletes
        let atomicFail =
            atomically && !zone.isDefaultZone
            && items.contains {
                if case .save(_, let e?, _) = $0 { _ = e; return true };
                if case .delete(_, let e?) = $0 { _ = e; return true }; return false
            }
        env.clock.advance()
        let result = try await db.modifyRecords(
            saving: saves.compactMap {
                if case .save(let r, _, _) = $0 { return r }; return nil
            },
            deleting: deletes.compactMap {
                if case .delete(let id, _) = $0 { return id }; return nil
            }, savePolicy: policy,
            atomically: atomically)
        let outcomes: [Result<Record?, CirrusError>] =
            result.saveResults.map { $0.1.map { Optional($0) } } + result.deleteResults.map { $0.1.map { nil } }
        for (item, got) in zip(items, outcomes) {
            var expected: CirrusError.Code?
            switch item {
            case .save(_, let e, _), .delete(_, let e): expected = e
            }
            if atomicFail && expected == nil { expected = .batchRequestFailed }
            let gotCode: CirrusError.Code? = {
                if case .failure(let e) = got { return e.code }; return nil
            }()
            #expect(gotCode == expected, "seed \(seed): \(item) → \(got)")
        }
        if atomicFail { return }
        // Apply the expected effects with the system fields the database chose.
        for (item, got) in zip(items, outcomes) {
            switch (item, got) {
            case (.save(let r, nil, let fields), .success(let saved?)):
                if let old = model.records[r.recordID]?.recordChangeTag {
                    model.oldTags[r.recordID, default: []].append(old)
                }
                #expect(saved.fields.dictionary == fields, "seed \(seed): \(policy)")
                if engine == .embedded {
                    #expect(
                        saved.modificationDate?.millisecondsSince1970 == env.clock.wallMilliseconds(), "seed \(seed)")
                } else {
                    #expect(saved.modificationDate != nil && saved.recordChangeTag != nil, "seed \(seed)")
                }
                model.records[r.recordID] = saved
            case (.delete(let id, nil), .success):
                for g in model.cascade(id) {
                    model.records[g] = nil
                    model.oldTags[g] = nil
                }
            default: break
            }
        }
    }

    /// Every record of the model is in the database as the model has it; the replicas fetched
    /// through zone changes agree; the snapshots agree with a full scan.
    mutating func verify() async throws {
        let ids = model.records.keys.sorted()
        for chunk in stride(from: 0, to: ids.count, by: 400).map({ Array(ids[$0..<min($0 + 400, ids.count)]) }) {
            for (id, r) in try await db.records(for: chunk) {
                #expect((try? r.get()) == model.records[id], "seed \(seed): \(id.recordName)")
            }
        }
        if engine == .embedded {
            for type in ["Note", "Task"] {
                let expected = model.records.values.filter { $0.recordType == type }
                try IndexConsistency.check(db.querySnapshot(recordType: type)!, against: expected, seed: seed)
            }
            try container.checkInvariants()
        }
        for z in model.zones where z != ZoneID.defaultZoneName {
            var rep = replicas[z] ?? (nil, [:])
            var page: ZoneChanges
            repeat {
                let token = rep.token
                let database = db
                switch await attempt({ try await database.changes(in: ZoneID(zoneName: z), since: token, limit: 3) }) {
                case .success(let p): page = p
                case .failure(let e):
                    #expect(e.code == .changeTokenExpired, "seed \(seed): \(e)")
                    rep = (nil, [:])
                    page = try await db.changes(in: ZoneID(zoneName: z), since: nil, limit: 3)
                }
                for (id, _) in page.deleted { rep.records[id] = nil }
                for r in page.changed { rep.records[r.recordID] = r }
                rep.token = page.token
            } while page.moreComing
            replicas[z] = rep
            let want = Dictionary(uniqueKeysWithValues: model.inZone(z).map { ($0.recordID, $0) })
            #expect(rep.records == want, "seed \(seed): replica of zone \(z)")
        }
    }
}

@Suite struct ModelTests {
    @Test(arguments: ModelEngine.available, 0..<4)
    func randomOperationSequencesAgreeWithTheModel(_ engine: ModelEngine, _ run: Int) async throws {
        let seed = TestSeed.next() &+ UInt64(run)
        var r = try await ModelRun(seed: seed, engine: engine)
        for i in 0..<250 {
            try await r.step()
            if i % 10 == 9 { try await r.verify() }
        }
        try await r.verify()
        try r.container.close()
        if engine == .embedded && r.env.checkpointThreshold < 100 {
            let files = try r.env.fs.list(r.env.dir + "/development")
            #expect(files.contains { $0.hasPrefix("dat-") }, "seed \(seed): checkpoints were due but none was written")
        }
    }
}

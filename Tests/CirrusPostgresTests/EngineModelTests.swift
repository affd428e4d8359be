// Both engines in lockstep: one seeded random sequence of saves (every policy, right, stale and
// missing tags, merging updates), deletions (with and without tags), fetches and paged queries,
// sent to a container directory and to PostgreSQL through the same `Database` API. After every
// step the two must agree: the same error codes per item, the same fields, the same query
// results in the same order. Change tags are each engine's own (a log sequence number, a
// request counter), so each side keeps the tags its engine gave. CIRRUS_SEED replays a run.

import Cirrus
import CirrusPostgres
import CirrusTestSupport
import Foundation
import RecordModel
import Testing

/// A step's outcome with the engine-specific parts (tags, dates) left out.
private enum Outcome: Equatable, CustomStringConvertible {
    case record(String, [String: FieldValue])
    case deleted(String)
    case failed(String, CirrusError.Code)
    case page([String])

    var description: String {
        switch self {
        case .record(let n, let f): "\(n) \(f.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })"
        case .deleted(let n): "deleted \(n)"
        case .failed(let n, let c): "\(n) failed \(c)"
        case .page(let names): "page \(names)"
        }
    }
}

/// One engine's side: its database and the tags it gave (current and earlier ones).
private final class Side {
    let db: Database
    var tags: [String: [String]] = [:]
    /// The change token of each custom zone, and the database's, from the last step.
    var zoneTokens: [String: ChangeToken] = [:]
    var databaseToken: DatabaseChangeToken? = nil
    init(_ db: Database) { self.db = db }

    func remember(_ r: Record) { if let t = r.recordChangeTag { tags[r.recordID.recordName, default: []].append(t) } }
}

@Suite(.serialized) struct EngineModelTests {
    @Test(.enabled(if: PG.available, PG.disabledReason))
    func bothEnginesAgreeStepByStep() async throws {
        let seed = TestSeed.next()
        var rng = SplitMix64(seed: seed)
        let embedded = try await EngineFixture(.embedded)
        let postgres = try await EngineFixture(.postgres)
        let sides = [
            Side(try await embedded.database(.public, as: .user("_a"))),
            Side(try await postgres.database(.public, as: .user("_a"))),
        ]
        let names = (0..<10).map { "r\($0)" }
        var steps = 0
        for step in 0..<160 {
            let name = names[rng.below(names.count)]
            let kind = rng.below(10)
            var fields: [String: FieldValue] = [:]
            if rng.below(3) > 0 { fields["n"] = .int64(Int64(rng.below(20))) }
            if rng.below(2) == 0 { fields["s"] = .string(["alpha", "beta", "gamma"][rng.below(3)]) }
            let tagChoice = rng.below(3)  // 0: the engine's current tag, 1: an earlier one, 2: none
            let limit = 1 + rng.below(4)
            let low = Int64(rng.below(20))
            var outcomes: [[Outcome]] = []
            for side in sides {
                let tags = side.tags[name] ?? []
                let tag: String? =
                    switch tagChoice {
                    case 0: tags.last
                    case 1: tags.dropLast().last ?? "zz9"
                    default: nil
                    }
                var out: [Outcome] = []
                func record(_ r: Result<Record?, CirrusError>, _ n: String) {
                    switch r {
                    case .success(let rec?):
                        side.remember(rec)
                        out.append(.record(n, rec.fields.dictionary))
                    case .success(nil): out.append(.deleted(n))
                    case .failure(let e): out.append(.failed(n, e.code))
                    }
                }
                var rec = Record(recordType: "Item", recordID: RecordID(recordName: name), fields: RecordFields(fields))
                rec.recordChangeTag = tag
                switch kind {
                case 0, 1, 2:
                    let r = try await side.db.modify([.save(rec, .ifServerRecordUnchanged, mergingFields: kind == 2)])
                    record(r[0].1, name)
                case 3:
                    record(
                        await attempt { try await side.db.save(rec, savePolicy: .changedKeys) }.map { Optional($0) },
                        name)
                case 4:
                    record(
                        await attempt { try await side.db.save(rec, savePolicy: .allKeys) }.map { Optional($0) }, name)
                case 5:
                    let r = try await side.db.modify([.delete(RecordID(recordName: name), ifChangeTag: tag)])
                    record(r[0].1, name)
                case 6, 7:
                    for (id, r) in try await side.db.records(
                        for: [name, names[limit]].map { RecordID(recordName: $0) })
                    {
                        record(r.map { Optional($0) }, id.recordName)
                    }
                default:
                    // A query paged to the end (only once the type exists on both).
                    let q = RecordQuery(
                        recordType: "Item", predicate: "n >= %@", arguments: [.value(.int64(low))],
                        sortDescriptors: [.field("n", ascending: kind == 8)])
                    guard side.db.schema.recordTypes["Item"]?.fields["n"] != nil else {
                        out.append(.page(["(no type yet)"]))
                        break
                    }
                    var page = try await side.db.records(matching: q, resultsLimit: limit)
                    var all: [String] = []
                    while true {
                        all += page.matchResults.map(\.0.recordName)
                        guard let c = page.queryCursor else { break }
                        page = try await side.db.records(continuingMatchFrom: c, resultsLimit: limit)
                    }
                    out.append(.page(all))
                }
                outcomes.append(out)
            }
            #expect(
                outcomes[0] == outcomes[1],
                "seed \(seed), step \(step) (kind \(kind), \(name), tag choice \(tagChoice)): embedded \(outcomes[0]) vs postgresql \(outcomes[1])"
            )
            if outcomes[0] != outcomes[1] { break }
            steps += 1
        }
        #expect(steps == 160)
        try await embedded.close()
        try await postgres.close()
    }
}

extension EngineModelTests {
    /// Private databases with custom zones: seeded random batches of 1–4 saves and deletions
    /// spread over the default zone, two custom zones and one that does not exist, atomic or
    /// not, with right, stale and missing tags, some invalid records and some deleteSelf
    /// references (so deletions cascade); now and then a zone is
    /// deleted and created again. After every step both engines must give the same outcome per
    /// item, hold the same records in every zone, and report the same changes since the previous
    /// step's tokens — per zone (paged, `limit` drawn per step) and for the database.
    @Test(.enabled(if: PG.available, PG.disabledReason))
    func bothEnginesAgreeOnZoneBatches() async throws {
        let seed = TestSeed.next()
        var rng = SplitMix64(seed: seed)
        let embedded = try await EngineFixture(.embedded)
        let postgres = try await EngineFixture(.postgres)
        let sides = [
            Side(try await embedded.database(.private(owner: "_a"), as: .user("_a"))),
            Side(try await postgres.database(.private(owner: "_a"), as: .user("_a"))),
        ]
        let zones = [ZoneID.default, ZoneID(zoneName: "Z1"), ZoneID(zoneName: "Z2"), ZoneID(zoneName: "Gone")]
        for side in sides {
            for z in zones[1...2] { try await side.db.save(zone: z) }
        }
        var steps = 0
        for step in 0..<80 {
            var outcomes: [[Outcome]] = []
            let atomically = rng.below(2) == 0
            let dropZone = rng.below(20) == 0
            let limit = 1 + rng.below(4)
            var plan: [(zone: ZoneID, name: String, delete: Bool, tagChoice: Int, fields: [String: FieldValue])] = []
            for _ in 0..<(1 + rng.below(4)) {
                let zone = rng.below(10) == 0 ? zones[3] : zones[rng.below(3)]
                var fields: [String: FieldValue] = ["n": .int64(Int64(rng.below(9)))]
                if rng.below(6) == 0 { fields["1x"] = 1 }  // not a field name: invalidArguments
                if rng.below(4) == 0 {
                    // A deleteSelf reference to a name of the zone (which may not exist: referenceViolation).
                    fields["parent"] = .reference(
                        Reference(recordID: RecordID(recordName: "r\(rng.below(6))", zoneID: zone), action: .deleteSelf)
                    )
                }
                plan.append((zone, "r\(rng.below(6))", rng.below(4) == 0, rng.below(3), fields))
            }
            for side in sides {
                var out: [Outcome] = []
                if dropZone {
                    try await side.db.deleteZone(zones[2])
                    try await side.db.save(zone: zones[2])
                    side.tags = side.tags.filter { !$0.key.hasPrefix("Z2/") }
                }
                var ops: [RecordOperation] = []
                for item in plan {
                    let key = "\(item.zone.zoneName)/\(item.name)"
                    let tags = side.tags[key] ?? []
                    let tag: String? =
                        switch item.tagChoice {
                        case 0: tags.last
                        case 1: tags.dropLast().last ?? "zz9"
                        default: nil
                        }
                    let id = RecordID(recordName: item.name, zoneID: item.zone)
                    if item.delete {
                        ops.append(.delete(id, ifChangeTag: tag))
                    } else {
                        var r = Record(recordType: "Item", recordID: id, fields: RecordFields(item.fields))
                        r.recordChangeTag = tag
                        ops.append(.save(r, .ifServerRecordUnchanged, mergingFields: false))
                    }
                }
                for (i, (id, r)) in try await side.db.modify(ops, atomically: atomically).enumerated() {
                    let key = "\(plan[i].zone.zoneName)/\(id.recordName)"
                    switch r {
                    case .success(let rec?):
                        if let t = rec.recordChangeTag { side.tags[key, default: []].append(t) }
                        out.append(.record(key, rec.fields.dictionary))
                    case .success(nil): out.append(.deleted(key))
                    case .failure(let e): out.append(.failed(key, e.code))
                    }
                }
                // What every zone holds now.
                for z in zones[0...2] {
                    let ids = (0..<6).map { RecordID(recordName: "r\($0)", zoneID: z) }
                    let held = try await side.db.records(for: ids).compactMap { id, r in
                        (try? r.get()).map { "\(z.zoneName)/\(id.recordName)=\($0["n"].map { "\($0)" } ?? "-")" }
                    }
                    out.append(.page(held))
                }
                // The changes since the last step's tokens (a zone made again: its token expired).
                for z in zones[1...2] {
                    var changed: [String] = []
                    var deleted: [String] = []
                    var token = side.zoneTokens[z.zoneName]
                    var pages = 0
                    while pages < 50 {
                        pages += 1
                        let page: ZoneChanges
                        switch await attempt({ try await side.db.changes(in: z, since: token, limit: limit) }) {
                        case .success(let p): page = p
                        case .failure(let e):
                            // Only a zone deleted and made again expires a token here.
                            out.append(.failed("changes \(z.zoneName)", e.code))
                            guard e.code == .changeTokenExpired, token != nil else { throw e }
                            token = nil
                            continue
                        }
                        changed += page.changed.map { "\($0.recordID.recordName)=\($0["n"].map { "\($0)" } ?? "-")" }
                        deleted += page.deleted.map { "deleted \($0.0.recordName)" }
                        token = page.token
                        if !page.moreComing { break }
                    }
                    side.zoneTokens[z.zoneName] = token
                    out.append(.page(["changes \(z.zoneName)"] + changed.sorted() + deleted.sorted()))
                }
                var changedZones: [String] = []
                var pages = 0
                while pages < 50 {
                    pages += 1
                    let page = try await side.db.databaseChanges(since: side.databaseToken, limit: limit)
                    changedZones += page.changed.map(\.zoneName) + page.deleted.map { "deleted \($0.zoneName)" }
                    side.databaseToken = page.token
                    if !page.moreComing { break }
                }
                out.append(.page(["database changes"] + changedZones.sorted()))
                outcomes.append(out)
            }
            #expect(
                outcomes[0] == outcomes[1],
                "seed \(seed), step \(step) (atomically \(atomically), limit \(limit)): embedded \(outcomes[0]) vs postgresql \(outcomes[1])"
            )
            if outcomes[0] != outcomes[1] { break }
            steps += 1
        }
        #expect(steps == 80)
        try await embedded.close()
        try await postgres.close()
    }
}

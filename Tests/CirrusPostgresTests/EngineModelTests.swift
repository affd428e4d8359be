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
                        out.append(.record(n, rec.fields))
                    case .success(nil): out.append(.deleted(n))
                    case .failure(let e): out.append(.failed(n, e.code))
                    }
                }
                var rec = Record(recordType: "Item", recordID: RecordID(recordName: name), fields: fields)
                rec.recordChangeTag = tag
                switch kind {
                case 0, 1, 2:
                    let r = try await side.db.modify([.save(rec, .ifServerRecordUnchanged, mergingFields: kind == 2)])
                    record(r[0].1, name)
                case 3: record(await result { try await side.db.save(rec, savePolicy: .changedKeys) }, name)
                case 4: record(await result { try await side.db.save(rec, savePolicy: .allKeys) }, name)
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

private func result(_ body: () async throws -> Record) async -> Result<Record?, CirrusError> {
    do {
        return .success(try await body())
    } catch let e as CirrusError {
        return .failure(e)
    } catch {
        return .failure(CirrusError(.internalError, "\(error)"))
    }
}

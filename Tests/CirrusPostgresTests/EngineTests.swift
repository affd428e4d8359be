// The storage seam's contract: the same calls on the `Database` façade give the same answers
// and the same errors on both engines — the embedded one (a container directory) and
// PostgreSQL (a PostgresContainer on CIRRUS_POSTGRES_URL; without it only the embedded engine
// runs). Each test builds its expectation from the data it wrote, not from either engine.

import Cirrus
import CirrusPostgres
import CirrusTestSupport
import Foundation
import RecordLog
import RecordModel
import Testing

/// One engine under test, with a fresh container.
enum Engine: String, CustomStringConvertible, CaseIterable {
    case embedded, postgres

    var description: String { rawValue }

    /// Every engine this run can reach.
    static var available: [Engine] { PG.available ? [.embedded, .postgres] : [.embedded] }
}

/// A fresh, empty development container on one engine, through the same `Container` API.
final class EngineFixture: Sendable {
    let engine: Engine
    let container: Container
    let directory: String?

    init(_ engine: Engine) async throws {
        self.engine = engine
        switch engine {
        case .embedded:
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cirrus-engine-\(UUID())").path
            directory = dir
            container = try Container.open(at: dir)
        case .postgres:
            directory = nil
            container = try await Container.open(postgres: PG.url!, containerID: PG.freshContainer("engine"))
        }
    }

    func database(_ scope: Database.Scope, as identity: Identity) async throws -> Database {
        container.database(scope, as: identity)
    }

    func close() async throws {
        try container.close()
        if let directory { try? FileManager.default.removeItem(atPath: directory) }
    }
}

private func place(_ name: String, _ fields: RecordFields) -> Record {
    Record(recordType: "Place", recordID: RecordID(recordName: name), fields: fields)
}

@Suite(.serialized) struct EngineTests {
    @Test(arguments: Engine.available)
    func savePoliciesAndChangeTags(_ engine: Engine) async throws {
        let f = try await EngineFixture(engine)
        let db = try await f.database(.public, as: .user("_alice"))
        let first = try await db.save(place("louvre", ["name": "Louvre", "visitors": 9]))
        let tag = try #require(first.recordChangeTag)
        #expect(first.creatorUserRecordID?.recordName == "_alice")
        // A new record without the server's tag: serverRecordChanged, carrying the server's record.
        let e = try #require(await caught { try await db.save(place("louvre", ["name": "Other"])) })
        #expect(e.code == .serverRecordChanged)
        #expect(e.serverRecord?.recordChangeTag == tag)
        // With the tag: saved, and the tag changes.
        var edited = first
        edited["visitors"] = .int64(10)
        let second = try await db.save(edited)
        #expect(second.recordChangeTag != tag)
        // A stale tag now fails.
        #expect(await code { try await db.save(edited) } == .serverRecordChanged)
        // changedKeys keeps the fields not given; allKeys replaces.
        let merged = try await db.save(place("louvre", ["city": "Paris"]), savePolicy: .changedKeys)
        #expect(merged["name"] == .string("Louvre") && merged["city"] == .string("Paris"))
        let replaced = try await db.save(place("louvre", ["name": "Louvre"]), savePolicy: .allKeys)
        #expect(replaced["city"] == nil && replaced["visitors"] == nil)
        #expect(try await db.record(for: RecordID(recordName: "louvre"))["name"] == .string("Louvre"))
        // Deletion, then unknownItem for fetch and delete.
        try await db.deleteRecord(withID: RecordID(recordName: "louvre"))
        #expect(await code { try await db.record(for: RecordID(recordName: "louvre")) } == .unknownItem)
        #expect(await code { try await db.deleteRecord(withID: RecordID(recordName: "louvre")) } == .unknownItem)
        try await f.close()
    }

    @Test(arguments: Engine.available)
    func perItemRulesAndPartialFailure(_ engine: Engine) async throws {
        let f = try await EngineFixture(engine)
        let db = try await f.database(.public, as: .user("_alice"))
        let a = try await db.save(place("a", ["name": "A", "kind": "park"]))
        let b = try await db.save(place("b", ["name": "B"]))
        var update = place("a", ["kind": "museum"])
        update.recordChangeTag = a.recordChangeTag
        let results = try await db.modify([
            .save(update, .ifServerRecordUnchanged, mergingFields: true),  // Web Services `update`
            .delete(b.recordID, ifChangeTag: "stale"),
            .save(place("c", ["1x": 1]), .ifServerRecordUnchanged, mergingFields: false),  // not a field name
        ])
        #expect(results.map(\.0.recordName) == ["a", "b", "c"])
        let saved = try results[0].1.get()
        #expect(saved?["name"] == .string("A") && saved?["kind"] == .string("museum"))
        if case .failure(let e) = results[1].1 {
            #expect(e.code == .serverRecordChanged)
        } else {
            Issue.record("a deletion with a stale tag succeeded")
        }
        if case .failure(let e) = results[2].1 {
            #expect(e.code == .invalidArguments)
        } else {
            Issue.record("bad field")
        }
        #expect(try await db.record(for: b.recordID)["name"] == .string("B"), "the refused deletion left b")
        // modifyRecords reports partialFailure over the items that failed.
        let r = try await db.modifyRecords(saving: [place("d", ["name": "D"])], deleting: [RecordID(recordName: "zz")])
        let p = try #require(r.partialFailure)
        #expect(p.partialErrors.keys.map(\.recordName) == ["zz"])
        #expect(p.partialErrors[RecordID(recordName: "zz")]?.code == .unknownItem)
        #expect(try r.saveResults[0].1.get()["name"] == .string("D"))
        try await f.close()
    }

    @Test(arguments: Engine.available)
    func accessRules(_ engine: Engine) async throws {
        let f = try await EngineFixture(engine)
        let alice = try await f.database(.private(owner: "_alice"), as: .user("_alice"))
        try await alice.save(place("secret", ["name": "S"]))
        let asBob = try await f.database(.private(owner: "_alice"), as: .user("_bob"))
        #expect(await code { try await asBob.record(for: RecordID(recordName: "secret")) } == .permissionFailure)
        let anonymous = try await f.database(.private(owner: "_alice"), as: .anonymous)
        #expect(await code { try await anonymous.save(place("x", [:])) } == .notAuthenticated)
        let publicAnonymous = try await f.database(.public, as: .anonymous)
        #expect(await code { try await publicAnonymous.save(place("p", ["name": "P"])) } == .notAuthenticated)
        // Bob's private database does not see Alice's records.
        let bob = try await f.database(.private(owner: "_bob"), as: .user("_bob"))
        #expect(await code { try await bob.record(for: RecordID(recordName: "secret")) } == .unknownItem)
        // The default WRITE grant is the creator's: Bob cannot overwrite Alice's public record.
        let alicePublic = try await f.database(.public, as: .user("_alice"))
        let mine = try await alicePublic.save(place("shared", ["name": "Alice's"]))
        let bobPublic = try await f.database(.public, as: .user("_bob"))
        var theirs = mine
        theirs["name"] = "Bob's"
        #expect(await code { try await bobPublic.save(theirs) } == .permissionFailure)
        #expect(await code { try await bobPublic.deleteRecord(withID: mine.recordID) } == .permissionFailure)
        #expect(try await publicAnonymous.record(for: mine.recordID)["name"] == .string("Alice's"))
        try await f.close()
    }

    @Test(arguments: Engine.available)
    func queriesPageWithSignedCursors(_ engine: Engine) async throws {
        let f = try await EngineFixture(engine)
        let db = try await f.database(.public, as: .user("_alice"))
        var rng = SystemRandomNumberGenerator()
        var populations: [String: Int64] = [:]
        var batch: [Record] = []
        for i in 0..<57 {
            let n = Int64.random(in: 0..<20, using: &rng)  // ties: the record name breaks them
            let name = String(format: "p%03d", i)
            populations[name] = n
            batch.append(place(name, ["population": .int64(n), "kind": i % 3 == 0 ? "park" : "cafe"]))
        }
        _ = try await db.modifyRecords(saving: batch, deleting: []).get()
        let query = RecordQuery(
            recordType: "Place", predicate: "population >= %@ AND kind == %@", arguments: [5, "cafe"],
            sortDescriptors: [.field("population", ascending: false)])
        let expected = populations.filter { $0.value >= 5 && Int($0.key.dropFirst())! % 3 != 0 }
            .sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map(\.key)
        var got: [String] = []
        var page = try await db.records(matching: query, resultsLimit: 7)
        while true {
            got += page.matchResults.map(\.0.recordName)
            guard let cursor = page.queryCursor else { break }
            // Through the printable token, as Web Services clients hold it.
            let again = try db.cursor(fromToken: db.token(for: cursor), expecting: query)
            page = try await db.records(continuingMatchFrom: again, resultsLimit: 7)
        }
        #expect(got == expected)
        // A token of another database, a tampered one, a refused predicate.
        let first = try #require(try await db.records(matching: query, resultsLimit: 2).queryCursor)
        let alice = try await f.database(.private(owner: "_alice"), as: .user("_alice"))
        #expect(await code { try alice.cursor(fromToken: db.token(for: first)) } == .invalidArguments)
        #expect(await code { try await alice.records(continuingMatchFrom: first) } == .invalidArguments)
        let bad = RecordQuery(recordType: "Place", predicate: "kind CONTAINS 'caf'")
        #expect(await code { try await db.records(matching: bad) } == .invalidArguments)
        let users = RecordQuery(recordType: "Users", predicate: "TRUEPREDICATE")
        #expect(await code { try await db.records(matching: users) } == .invalidArguments)
        // desiredKeys: only the keys asked for.
        let projected = try await db.records(matching: query, desiredKeys: ["kind"], resultsLimit: 3)
        for (_, r) in projected.matchResults { #expect(try Set(r.get().fields.keys) == ["kind"]) }
        // explain names the engine's plan and runs the first page.
        let e = try await db.explain(query, resultsLimit: 5)
        #expect(e.returned == min(5, expected.count))
        #expect(!e.text.isEmpty)
        switch engine {
        case .embedded: #expect(e.plan != nil)
        case .postgres: #expect(e.plan == nil && e.enginePlan.contains { $0.contains("Limit") })
        }
        try await f.close()
    }

    @Test(arguments: Engine.available)
    func customZonesAndAtomicZoneBatches(_ engine: Engine) async throws {
        let f = try await EngineFixture(engine)
        let db = try await f.database(.private(owner: "_alice"), as: .user("_alice"))
        let trips = ZoneID(zoneName: "Trips")
        let missing = ZoneID(zoneName: "Nowhere")
        #expect(try await db.save(zone: trips) == trips)
        #expect(try await db.save(zone: trips) == trips, "saving an existing zone succeeds")
        #expect(try await db.allZones() == [.default, trips])
        // Items of a custom zone are atomic: one bad item fails them all (batchRequestFailed for the others).
        let r = try await db.modifyRecords(
            saving: [
                place("t1", ["name": "Lyon"]).inZone(trips), place("t2", ["1x": 1]).inZone(trips),
                place("d1", ["name": "Default"]),
            ], deleting: [])
        #expect(r.saveResults.map { (try? $0.1.get()) == nil } == [true, true, false])
        let codes = r.saveResults.map { result -> CirrusError.Code? in
            if case .failure(let e) = result.1 { return e.code }
            return nil
        }
        #expect(codes == [.batchRequestFailed, .invalidArguments, nil])
        #expect(await code { try await db.record(for: RecordID(recordName: "t1", zoneID: trips)) } == .unknownItem)
        // Not atomic: each item on its own.
        let loose = try await db.modifyRecords(
            saving: [place("t1", ["name": "Lyon"]).inZone(trips), place("t2", ["1x": 1]).inZone(trips)], deleting: [],
            atomically: false)
        #expect((try? loose.saveResults[0].1.get()) != nil && (try? loose.saveResults[1].1.get()) == nil)
        // A zone that does not exist: per item, and for queries.
        let e = try #require(await caught { try await db.save(place("x", ["name": "X"]).inZone(missing)) })
        #expect(e.code == .zoneNotFound)
        #expect(
            await code { try await db.record(for: RecordID(recordName: "x", zoneID: missing)) } == .zoneNotFound)
        let q = RecordQuery(recordType: "Place", predicate: "TRUEPREDICATE")
        #expect(await code { try await db.records(matching: q, inZoneWith: missing) } == .zoneNotFound)
        #expect(try await db.records(matching: q, inZoneWith: trips).matchResults.map(\.0.recordName) == ["t1"])
        // The public database has only the default zone.
        let pub = try await f.database(.public, as: .user("_alice"))
        #expect(await code { try await pub.save(zone: trips) } == .badDatabase)
        // Deleting the zone deletes its records; deleting it again → zoneNotFound.
        try await db.deleteZone(trips)
        #expect(try await db.allZones() == [.default])
        #expect(
            await code { try await db.record(for: RecordID(recordName: "t1", zoneID: trips)) } == .zoneNotFound)
        #expect(await code { try await db.deleteZone(trips) } == .zoneNotFound)
        #expect(try await db.record(for: RecordID(recordName: "d1"))["name"] == .string("Default"))
        try await f.close()
    }

    @Test(.enabled(if: PG.available, PG.disabledReason))
    func twoProcessesServeOneContainer() async throws {
        // Two containers opened separately (two pools, as two `cirrus serve` processes) on one
        // PostgreSQL container: a token issued by one continues on the other, and a type one of
        // them created is queryable from the other after it reads the schema again.
        let id = PG.freshContainer("two")
        let first = try await Container.open(postgres: PG.url!, containerID: id)
        let second = try await Container.open(postgres: PG.url!, containerID: id)
        let a = first.publicDatabase(as: .user("_alice"))
        let b = second.publicDatabase(as: .user("_alice"))
        _ = try await a.modifyRecords(
            saving: (0..<9).map { place("p\($0)", ["rank": .int64(Int64($0))]) }, deleting: []
        ).get()
        try await second.postgres?.reloadSchema()
        let q = RecordQuery(
            recordType: "Place", predicate: "rank >= %@", arguments: [2],
            sortDescriptors: [.field("rank", ascending: true)])
        let page = try await a.records(matching: q, resultsLimit: 3)
        let token = a.token(for: try #require(page.queryCursor))
        let resumed = try await b.records(continuingMatchFrom: try b.cursor(fromToken: token, expecting: q))
        #expect(page.matchResults.map(\.0.recordName) == ["p2", "p3", "p4"])
        #expect(resumed.matchResults.map(\.0.recordName) == ["p5", "p6", "p7", "p8"])
        // Another container's secret does not accept it.
        let other = try await Container.open(postgres: PG.url!, containerID: PG.freshContainer("other"))
        #expect(await code { try other.publicDatabase.cursor(fromToken: token) } == .invalidArguments)
        for c in [first, second, other] { try c.close() }
    }

    @Test(arguments: Engine.available)
    func whatEachEngineHolds(_ engine: Engine) async throws {
        let f = try await EngineFixture(engine)
        let db = try await f.database(.private(owner: "_alice"), as: .user("_alice"))
        let zone = ZoneID(zoneName: "Trips")
        try await db.save(zone: zone)
        #expect(try await db.changes(in: zone, since: nil).changed.isEmpty)
        #expect(try await db.storeAsset([1, 2, 3]).size == 3)
        switch engine {
        case .embedded:
            #expect(try db.discoverabilityStatus() == .initialState, "a user never asked")
        case .postgres:
            // Not kept on PostgreSQL yet: refused with serverRejectedRequest naming the engine.
            let e = try #require(await caught { try db.discoverabilityStatus() })
            #expect(e.code == .serverRejectedRequest && e.message.contains("postgresql"))
        }
        #expect(db.engineName == (engine == .embedded ? "embedded" : "postgresql"))
        #expect(f.container.engineName == db.engineName)
        if engine == .postgres {
            // The container-level operations of the embedded engine's files are refused, clearly.
            let e = try #require(await caught { try f.container.checkpoint() })
            #expect(e.code == .serverRejectedRequest && e.message.contains("checkpoints"))
            #expect(await code { try f.container.importSchema("DEFINE SCHEMA") } == .serverRejectedRequest)
            #expect(f.container.directory.hasPrefix("postgresql 127.0.0.1:"))
        }
        try await f.close()
    }
}

extension Record {
    fileprivate func inZone(_ zone: ZoneID) -> Record {
        var r = self
        r.recordID = RecordID(recordName: recordID.recordName, zoneID: zone)
        return r
    }
}

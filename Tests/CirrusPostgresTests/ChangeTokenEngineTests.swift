// Change tokens on both engines: a zone's changes since a token (paged, saves and deletions,
// a record deleted and saved again), the zones of a database changed since a database token
// (a request that touches two zones, zone deletions), and the errors — badDatabase for the
// default zone and the public database, zoneNotFound, changeTokenExpired for a token of another
// zone, of a deleted zone, or bytes that do not decode. Expectations come from the writes made
// here; the order inside one page is not compared (CloudKit does not promise one).

import Cirrus
import CirrusPostgres
import CirrusTestSupport
import RecordModel
import Testing

private func note(_ name: String, _ zone: ZoneID, _ n: Int) -> Record {
    Record(recordType: "Note", recordID: RecordID(recordName: name, zoneID: zone), fields: ["n": .int64(Int64(n))])
}

/// Every page of a zone's changes after `token`, `limit` at a time: the changed names (with
/// their `n`), the deleted names, the final token, and the number of pages.
private func drain(
    _ db: Database, _ zone: ZoneID, since token: ChangeToken?, limit: Int
) async throws -> (changed: [String: Int64], deleted: Set<String>, token: ChangeToken, pages: Int) {
    var changed: [String: Int64] = [:]
    var deleted = Set<String>()
    var token = token
    var pages = 0
    while true {
        let page = try await db.changes(in: zone, since: token, limit: limit)
        pages += 1
        #expect(page.changed.count + page.deleted.count <= limit)
        for r in page.changed {
            #expect(changed[r.recordID.recordName] == nil, "\(r.recordID.recordName) delivered twice")
            if case .int64(let n)? = r["n"] { changed[r.recordID.recordName] = n }
        }
        for (id, type) in page.deleted {
            #expect(type == "Note")
            #expect(deleted.insert(id.recordName).inserted, "\(id.recordName) deleted twice")
        }
        token = page.token
        if !page.moreComing { break }
        #expect(pages < 100)
    }
    return (changed, deleted, token!, pages)
}

@Suite(.serialized) struct ChangeTokenEngineTests {
    @Test(arguments: Engine.available)
    func zoneChangesSinceATokenArePagedAndComplete(_ engine: Engine) async throws {
        let f = try await EngineFixture(engine)
        let db = try await f.database(.private(owner: "_alice"), as: .user("_alice"))
        let zone = try await db.save(zone: ZoneID(zoneName: "Notes"))
        let empty = try await db.changes(in: zone, since: nil)
        #expect(empty.changed.isEmpty && empty.deleted.isEmpty && !empty.moreComing)
        _ = try await db.modifyRecords(saving: (0..<7).map { note("r\($0)", zone, $0) }, deleting: [])
        for limit in [1, 3, 200] {
            let all = try await drain(db, zone, since: nil, limit: limit)
            #expect(all.changed == Dictionary(uniqueKeysWithValues: (0..<7).map { ("r\($0)", Int64($0)) }))
            #expect(all.deleted.isEmpty)
            #expect(all.pages == (limit == 1 ? 7 : limit == 3 ? 3 : 1))
        }
        let t1 = try await drain(db, zone, since: nil, limit: 200).token
        // Nothing since: an empty page and a token that still works.
        let none = try await drain(db, zone, since: t1, limit: 5)
        #expect(none.changed.isEmpty && none.deleted.isEmpty)
        // Changes, deletions, a record deleted then saved again, one saved then deleted.
        var r1 = try await db.record(for: RecordID(recordName: "r1", zoneID: zone))
        r1["n"] = .int64(100)
        _ = try await db.modifyRecords(
            saving: [r1, note("new", zone, 50), note("brief", zone, 60)],
            deleting: [RecordID(recordName: "r2", zoneID: zone), RecordID(recordName: "r3", zoneID: zone)])
        try await db.deleteRecord(withID: RecordID(recordName: "brief", zoneID: zone))
        _ = try await db.save(note("r3", zone, 33))
        for limit in [1, 2, 200] {
            let since = try await drain(db, zone, since: t1, limit: limit)
            #expect(since.changed == ["r1": 100, "new": 50, "r3": 33], "limit \(limit)")
            #expect(since.deleted == ["r2", "brief"], "limit \(limit)")
        }
        // Tokens are per zone; bytes that do not decode are expired, not a crash.
        let other = try await db.save(zone: ZoneID(zoneName: "Other"))
        #expect(await code { try await db.changes(in: other, since: t1) } == .changeTokenExpired)
        #expect(
            await code { try await db.changes(in: zone, since: ChangeToken(data: [1, 2, 3])) } == .changeTokenExpired)
        #expect(await code { try await db.changes(in: zone, since: ChangeToken(data: [])) } == .changeTokenExpired)
        // Where there are no change tokens, and a zone that does not exist.
        #expect(await code { try await db.changes(in: .default, since: nil) } == .badDatabase)
        let pub = try await f.database(.public, as: .user("_alice"))
        #expect(await code { try await pub.changes(in: zone, since: nil) } == .badDatabase)
        #expect(await code { try await pub.databaseChanges(since: nil) } == .badDatabase)
        #expect(await code { try await db.changes(in: ZoneID(zoneName: "Nowhere"), since: nil) } == .zoneNotFound)
        // Another user cannot read alice's history.
        let bob = try await f.database(.private(owner: "_alice"), as: .user("_bob"))
        #expect(await code { try await bob.changes(in: zone, since: nil) } == .permissionFailure)
        // A zone deleted and made again: the old zone's tokens are expired, the new one starts empty.
        let t2 = try await drain(db, zone, since: nil, limit: 200).token
        try await db.deleteZone(zone)
        #expect(await code { try await db.changes(in: zone, since: t2) } == .zoneNotFound)
        _ = try await db.save(zone: zone)
        #expect(await code { try await db.changes(in: zone, since: t2) } == .changeTokenExpired)
        let fresh = try await drain(db, zone, since: nil, limit: 200)
        #expect(fresh.changed.isEmpty && fresh.deleted.isEmpty)
        try await f.close()
    }

    @Test(arguments: Engine.available)
    func databaseChangesNameTheZonesThatChanged(_ engine: Engine) async throws {
        let f = try await EngineFixture(engine)
        let db = try await f.database(.private(owner: "_alice"), as: .user("_alice"))
        let a = try await db.save(zone: ZoneID(zoneName: "A"))
        let b = try await db.save(zone: ZoneID(zoneName: "B"))
        let c = try await db.save(zone: ZoneID(zoneName: "C"))
        func all(
            since token: DatabaseChangeToken?, limit: Int
        ) async throws -> (
            changed: [String], deleted: [String], token: DatabaseChangeToken
        ) {
            var changed: [String] = []
            var deleted: [String] = []
            var token = token
            var pages = 0
            while true {
                let page = try await db.databaseChanges(since: token, limit: limit)
                #expect(page.changed.count <= limit)
                changed += page.changed.map(\.zoneName)
                deleted += page.deleted.map(\.zoneName)
                token = page.token
                pages += 1
                if !page.moreComing || pages > 20 { break }
            }
            return (changed.sorted(), deleted.sorted(), token!)
        }
        for limit in [1, 2, 10] {
            let first = try await all(since: nil, limit: limit)
            #expect(first.changed == ["A", "B", "C"] && first.deleted.isEmpty, "limit \(limit)")
        }
        let t0 = try await all(since: nil, limit: 10).token
        #expect(try await all(since: t0, limit: 10).changed.isEmpty)
        // One request writing in two zones (not atomic: the two zones' items are independent).
        _ = try await db.modifyRecords(saving: [note("x", a, 1), note("y", c, 2)], deleting: [], atomically: false)
        for limit in [1, 10] {
            #expect(try await all(since: t0, limit: limit).changed == ["A", "C"], "limit \(limit)")
        }
        let t1 = try await all(since: t0, limit: 10).token
        try await db.deleteRecord(withID: RecordID(recordName: "x", zoneID: a))
        try await db.deleteZone(b)
        let since = try await all(since: t1, limit: 10)
        #expect(since.changed == ["A"] && since.deleted == ["B"])
        // The deletion is told once.
        #expect(try await all(since: since.token, limit: 10).deleted.isEmpty)
        #expect(
            await code { try await db.databaseChanges(since: DatabaseChangeToken(data: [9, 9])) }
                == .changeTokenExpired)
        // Another database's token is not this one's.
        let carol = try await f.database(.private(owner: "_carol"), as: .user("_carol"))
        _ = try await carol.save(zone: ZoneID(zoneName: "A"))
        #expect(await code { try await carol.databaseChanges(since: t1) } == .changeTokenExpired)
        try await f.close()
    }
}

// The record quota on both engines (ContainerOptions.maximumRecordsPerDatabase for a directory,
// `maximumRecordsPerDatabase:` of Container.open(postgres:…)): a new record past it fails with
// quotaExceeded and writes nothing, an update of an existing record does not count, deletions —
// of a record, of a zone with its records — make room again, and each database counts its own.

import Cirrus
import CirrusPostgres
import CirrusTestSupport
import Foundation
import RecordModel
import Testing

private func note(_ name: String, _ zone: ZoneID = .default) -> Record {
    Record(recordType: "Note", recordID: RecordID(recordName: name, zoneID: zone), fields: ["n": 1])
}

@Suite(.serialized) struct QuotaEngineTests {
    @Test(arguments: Engine.available)
    func aDatabaseHoldsAtMostItsQuota(_ engine: Engine) async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cirrus-quota-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let c: Container =
            switch engine {
            case .embedded: try Container.open(at: dir, options: ContainerOptions(maximumRecordsPerDatabase: 3))
            case .postgres:
                try await Container.open(
                    postgres: PG.url!, containerID: PG.freshContainer("quota"), maximumRecordsPerDatabase: 3)
            }
        let db = c.privateDatabase(for: "_alice")
        let zone = try await db.save(zone: ZoneID(zoneName: "Z"))
        _ = try await db.modifyRecords(saving: [note("a"), note("b"), note("z1", zone)], deleting: [])
        let e = await code { try await db.save(note("c")) }
        #expect(e == .quotaExceeded)
        #expect(await code { try await db.record(for: RecordID(recordName: "c")) } == .unknownItem)
        // An update is not a new record.
        var a = try await db.record(for: RecordID(recordName: "a"))
        a["n"] = 2
        _ = try await db.save(a)
        // In one request, only the items past the quota fail.
        let r = try await db.modifyRecords(saving: [note("d"), note("e")], deleting: [RecordID(recordName: "b")])
        #expect(r.saveResults.map { (try? $0.1.get()) == nil } == [true, true], "saves run before the deletion")
        _ = try await db.save(note("d"))
        #expect(await code { try await db.save(note("e")) } == .quotaExceeded)
        // Deleting the zone frees its record's room; another database has its own quota.
        try await db.deleteZone(zone)
        _ = try await db.save(note("e"))
        #expect(await code { try await db.save(note("f")) } == .quotaExceeded)
        let bob = c.privateDatabase(for: "_bob")
        _ = try await bob.modifyRecords(saving: [note("a"), note("b"), note("c")], deleting: [])
        try c.close()
    }
}

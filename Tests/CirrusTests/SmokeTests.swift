// Smoke tests: the basic round trip of the façade.

import CirrusTestSupport
import RecordLog
import RecordModel
import Testing

@testable import CirrusEmbedded
@testable import CirrusFacade

@Suite struct SmokeTests {
    @Test func saveFetchDeleteReopen() async throws {
        let env = TestEnv()
        var c = try env.open()
        let db = c.privateDatabase(for: "_alice")
        let saved = try await db.save(rec("n1", ["title": "Groceries", "n": 3]))
        #expect(saved.recordChangeTag != nil)
        #expect(saved.creatorUserRecordID?.recordName == "_alice")
        let fetched = try await db.record(for: rid("n1"))
        #expect(fetched == saved)
        let snap = db.querySnapshot(recordType: "Note")!
        #expect(snap.rowCount == 1)
        #expect(snap.allRows().count == 1)
        #expect(snap.schema?.fields["title"]?.options == [.queryable, .sortable, .searchable])
        try c.close()
        c = try env.open()
        let db2 = c.privateDatabase(for: "_alice")
        #expect(try await db2.record(for: rid("n1")) == saved)
        #expect(db2.querySnapshot(recordType: "Note")!.rowCount == 1)
        try await db2.deleteRecord(withID: rid("n1"))
        #expect(await code { try await db2.record(for: rid("n1")) } == .unknownItem)
        #expect(db2.querySnapshot(recordType: "Note")!.rowCount == 0)
        try c.checkInvariants()
    }

    @Test func snapshotContract() async throws {
        let c = try TestEnv().open()
        let db = c.privateDatabase(for: "_alice")
        let z = try await db.save(zone: ZoneID(zoneName: "Z"))
        _ = try await db.modifyRecords(saving: [rec("b"), rec("a"), rec("c", zone: z)], deleting: []).get()
        let before = db.querySnapshot(recordType: "Note")!
        #expect(before.rowCount == 3)
        // Bulk-built rows are in record id order after a reopen; new rows come after.
        let rowA = try #require(before.row(for: rid("a")))
        #expect(before.row(for: RecordID(recordName: "c", zoneID: ZoneID(zoneName: "Z", ownerName: "_alice"))) != nil)
        try await db.deleteRecord(withID: rid("a"))
        let after = db.querySnapshot(recordType: "Note")!
        #expect(after.record(rowA) == nil)
        #expect(after.row(for: rid("a")) == nil)
        #expect(after.allRows().count == 2)
        // The older snapshot is unchanged.
        #expect(before.record(rowA)?.recordID.recordName == "a")
        #expect(before.allRows().count == 3)
        #expect(after.record(99_999) == nil)
        #expect(after.record(after.allRows()[0])?.recordID.zoneID.ownerName == ZoneID.defaultOwnerName)
    }

    @Test func aBareRecordStoreIsNotAContainer() async throws {
        let env = TestEnv()
        let store = try RecordStore.open(directory: env.dir, fileSystem: env.fs)
        try store.close()
        let e = await caught { try Container.open(at: env.dir, options: env.options()) }
        #expect(e?.message.contains("bare record store") == true)
    }
}

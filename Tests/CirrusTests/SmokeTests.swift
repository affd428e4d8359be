// Smoke tests: the basic round trip of the façade.

import RecordModel
import Testing

@testable import Cirrus

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
        let snap = db.querySnapshot(recordType: "Note")
        #expect(snap.rowCount == 1)
        #expect(snap.allRows().count == 1)
        #expect(snap.schema?.fields["title"]?.options == [.queryable, .sortable, .searchable])
        try c.close()
        c = try env.open()
        let db2 = c.privateDatabase(for: "_alice")
        #expect(try await db2.record(for: rid("n1")) == saved)
        #expect(db2.querySnapshot(recordType: "Note").rowCount == 1)
        try await db2.deleteRecord(withID: rid("n1"))
        #expect(await code { try await db2.record(for: rid("n1")) } == .unknownItem)
        #expect(db2.querySnapshot(recordType: "Note").rowCount == 0)
        try c.checkInvariants()
    }
}

// A stored row that does not decode is never left out in silence (RowDamage.swift): a query that
// meets it and a fetch of it fail naming the file and offset, instead of returning fewer records
// or "not found"; the rows around it are read as before; `verify` names it.

import CirrusIO
import CirrusTestSupport
import RecordModel
import Testing

@testable import CirrusEmbedded
@testable import CirrusFacade
@testable import RecordLog

@Suite struct UndecodableRowTests {
    /// 40 places checkpointed; the payload of p17's row made unreadable (its codec version byte).
    func damaged() async throws -> (TestEnv, String) {
        let env = TestEnv()
        let c = try env.open()
        let db = c.publicDatabase(as: .user("_u"))
        _ = try await db.modifyRecords(
            saving: (0..<40).map { rec("p\($0)", "Place", ["n": .int64(Int64($0))]) }, deleting: [])
        try c.checkpoint()
        try c.close()
        let m = try Manifest.decode(try #require(env.fs.contents("/c/development/CURRENT"))).get()
        let layer = try #require(
            m.checkpoint?.tables[TableKey(owner: ZoneID.defaultOwnerName, recordType: "Place")]?.last)
        let path = "/c/development/" + DataSegmentFormat.fileName(layer.rows)
        let seg = try DataSegment.open(path, fileSystem: env.fs)
        let rows = try RowSection(segment: seg)
        let section = try #require(seg.sections.first { $0.name == "rows" })
        let row = try #require(rows.row(of: RecordID(recordName: "p17")))
        let payload = try #require(rows.payload(row))
        let at = section.offset + (try #require(rows.bytes.baseAddress)).distance(to: try #require(payload.baseAddress))
        env.fs.flipBit(path, atByte: at, bit: 3)  // version 1 → 9
        return (env, path)
    }

    @Test func aQueryThatMeetsAnUndecodableRowFailsNamingIt() async throws {
        let (env, path) = try await damaged()
        let db = try env.open().publicDatabase(as: .user("_u"))
        let all = RecordQuery(recordType: "Place", predicate: "n >= %@", arguments: [.value(.int64(0))])
        let error = await caught { try await db.records(matching: all, resultsLimit: 100) }
        #expect(error?.code == .internalError)
        #expect(error?.message.contains(path) == true && error?.message.contains("could not be read") == true)
        // A query that does not touch the row answers as before.
        let few = RecordQuery(recordType: "Place", predicate: "n < %@", arguments: [.value(.int64(10))])
        #expect(try await allPageNames(db, few, limit: 3).count == 10)
    }

    @Test func aFetchOfAnUndecodableRowFailsInsteadOfNotFound() async throws {
        let (env, path) = try await damaged()
        let db = try env.open().publicDatabase(as: .user("_u"))
        let error = await caught { try await db.record(for: RecordID(recordName: "p17")) }
        #expect(error?.code == .internalError && error?.message.contains(path) == true, "\(String(describing: error))")
        #expect(try await db.record(for: RecordID(recordName: "p16"))["n"] == .int64(16))
        #expect(try RecordStore.verify(directory: "/c/development", fileSystem: env.fs).isDamaged)
    }
}

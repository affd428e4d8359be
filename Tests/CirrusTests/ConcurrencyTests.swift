// Readers never see half a commit: while a writer commits batches of ten new records, readers
// keep taking query snapshots, and every snapshot holds a whole number of batches with rows,
// row map and indexes from the same commit.

import Indexes
import RecordModel
import Testing

@testable import Cirrus

@Suite struct ConcurrencyTests {
    @Test func snapshotsSeeWholeCommits() async throws {
        let c = try TestEnv().open()
        let db = c.privateDatabase(for: "_alice")
        try await db.save(rec("seed0", ["n": 0, "title": "apple"]))
        _ = try await db.modifyRecords(
            saving: (1..<10).map { rec("seed\($0)", ["n": .int64(Int64($0)), "title": "apple"]) }, deleting: []
        ).get()
        let batches = 40
        async let writer: Void = {
            for b in 1...batches {
                let recs = (0..<10).map { rec("b\(b)-\($0)", ["n": .int64(Int64($0)), "title": "apple pear"]) }
                _ = try await db.modifyRecords(saving: recs, deleting: []).get()
            }
        }()
        let readers = (0..<3).map { _ in
            Task.detached { () -> Int in
                var seen = 0
                for _ in 0..<200 {
                    let snap = db.querySnapshot(recordType: "Note")
                    let n = snap.rowCount
                    #expect(n % 10 == 0)
                    #expect(snap.allRows().count == n)
                    #expect(snap.indexes.rowCount == n)
                    #expect(snap.indexes.ordered[.user("n")]?.count == n)
                    #expect(snap.indexes.text?.rows(matchingAny: ["apple"]).count == n)
                    seen = max(seen, n)
                    await Task.yield()
                }
                return seen
            }
        }
        try await writer
        for r in readers { _ = await r.value }
        #expect(db.querySnapshot(recordType: "Note").rowCount == 10 * (batches + 1))
        try c.checkInvariants()
    }
}

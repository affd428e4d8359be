// Bulk import through the façade: records land in data segments with one manifest switch,
// queries and indexes see them, a kill before the switch leaves the container as it was.

import CirrusIO
import CirrusTestSupport
import Foundation
import RecordLog
import RecordModel
import Testing

@testable import CirrusEmbedded
@testable import CirrusFacade

@Suite struct BulkImportTests {
    func jsonLines(_ range: Range<Int>, type: String = "Note") -> [UInt8] {
        var s = ""
        for i in range {
            s +=
                #"{"recordName": "r\#(i)", "recordType": "\#(type)", "fields": {"n": {"value": \#(i % 10), "type": "INT64"}, "title": {"value": "t\#(i)", "type": "STRING"}}}"#
                + "\n"
        }
        return Array(s.utf8)
    }

    @Test func importLandsInSegmentsAndIsQueryable() async throws {
        let env = TestEnv()
        let c = try env.open()
        try await c.publicDatabase(as: .user("_admin")).save(rec("before", ["n": .int64(3)]))
        var o = ImportOptions()
        o.batchSize = 7
        let s = try c.importBytes(jsonLines(0..<100), name: "in", into: .public, options: o)
        #expect(s.records == 100 && s.rejected == 0)
        let db = c.publicDatabase(as: .user("_admin"))
        let (page, _) = try await db.records(
            matching: RecordQuery(recordType: "Note", predicate: "n == 3"), resultsLimit: 200)
        #expect(page.count == 11)  // 10 imported + "before"
        #expect(try env.fs.list(env.dir + "/development").contains { $0.hasPrefix("dat-") })
        try c.checkInvariants()
        try c.close()
        let again = try env.open()
        let (p2, _) = try await again.publicDatabase(as: .user("_admin")).records(
            matching: RecordQuery(recordType: "Note", predicate: "n == 3"), resultsLimit: 200)
        #expect(p2.count == 11)
        try again.checkInvariants()
    }

    /// Records are validated once: by the file reader for `importBytes` (on the parse workers),
    /// by the planner for `importRecords(bulk:)` (whose records no reader saw). An invalid record
    /// is rejected either way, with the validation's reason, and the rest land.
    @Test func invalidRecordsAreRejectedOnBothBulkPaths() async throws {
        let env = TestEnv()
        let c = try env.open()
        let bad = #"{"recordName": "bad", "recordType": "Note", "fields": {"___x": {"value": 1, "type": "INT64"}}}"#
        let s = try c.importBytes(jsonLines(0..<3) + Array((bad + "\n").utf8), name: "in", into: .public)
        #expect(s.records == 3 && s.rejected == 1)
        #expect(s.rejections.first?.line == 4)
        var invalid = Record(recordType: "Note", recordID: RecordID(recordName: "bad2"))
        invalid.fields["___x"] = .int64(1)
        let good = Record(recordType: "Note", recordID: RecordID(recordName: "good2"), fields: ["n": .int64(1)])
        let rejected = try c.importRecords(bulk: [good, invalid], into: .public)
        #expect(rejected.map(\.0) == [1])
        #expect(rejected.first?.1.code == .invalidArguments, "\(rejected)")
        let db = c.publicDatabase(as: .user("_admin"))
        #expect(try await db.record(for: RecordID(recordName: "good2")).recordType == "Note")
        await #expect(throws: CirrusError.self) { try await db.record(for: RecordID(recordName: "bad2")) }
        await #expect(throws: CirrusError.self) { try await db.record(for: RecordID(recordName: "bad")) }
    }

    @Test func repeatedIdIsRejectedWithItsLine() throws {
        let env = TestEnv()
        let c = try env.open()
        let s = try c.importBytes(jsonLines(0..<5) + jsonLines(2..<3), name: "in", into: .public)
        #expect(s.records == 5)
        #expect(s.rejected == 1)
        #expect(s.rejections.first?.line == 6)
        #expect(s.rejections.first?.reason.contains("earlier in this import") == true, "\(s.rejections)")
    }

    /// Repeats across batches and across sorted runs already written (a tiny sort budget
    /// spills every few records): each is rejected with its own line, whatever record type it
    /// comes back as, and every first occurrence lands.
    @Test func repeatsAcrossBatchesAndRunsAreRejectedExactly() async throws {
        let env = TestEnv()
        let c = try env.open()
        var o = ImportOptions()
        o.batchSize = 3
        o.sortBudget = 1024
        // 300 distinct ids, then r5 (first batch, long spilled), r150 as another type, r299
        // (still in the buffer), and r10 twice more.
        let input =
            jsonLines(0..<300) + jsonLines(5..<6) + jsonLines(150..<151, type: "Other") + jsonLines(299..<300)
            + jsonLines(10..<11) + jsonLines(10..<11)
        let s = try c.importBytes(input, name: "in", into: .public, options: o)
        #expect(s.records == 300)
        #expect(s.rejections.map(\.line) == [301, 302, 303, 304, 305], "\(s.rejections)")
        #expect(s.rejections.allSatisfy { $0.reason.contains("earlier in this import") })
        let (page, _) = try await c.publicDatabase(as: .user("_admin")).records(
            matching: RecordQuery(recordType: "Note", predicate: "TRUEPREDICATE"), resultsLimit: 400)
        #expect(page.count == 300)
        #expect(try env.fs.list(env.dir + "/development").filter { $0.hasPrefix("dat-") }.count >= 1)
        try c.checkInvariants()
    }

    /// Lines are parsed a window (16 384 lines) at a time while the previous window lands: bad
    /// lines in the first, a middle and the last window are reported by their own line numbers
    /// and every good record lands once.
    @Test func badLinesAcrossParseWindowsKeepTheirLineNumbers() async throws {
        let env = TestEnv()
        let c = try env.open()
        let n = 40_000
        let bad: Set<Int> = [3, 16_384, 16_385, 30_000, n]
        var s = ""
        for i in 1...n {
            s +=
                bad.contains(i)
                ? #"{"recordName": "x\#(i)", "recordType": "Note", "fields": {"n": {"value": "oops", "type": "INT64"}}}"#
                : #"{"recordName": "r\#(i)", "recordType": "Note", "fields": {"n": {"value": \#(i), "type": "INT64"}}}"#
            s += "\n"
        }
        let summary = try c.importBytes(Array(s.utf8), name: "in", into: .public)
        #expect(summary.records == n - bad.count)
        #expect(summary.rejections.map(\.line).sorted() == bad.sorted(), "\(summary.rejections)")
        let db = c.publicDatabase(as: .user("_admin"))
        let (page, _) = try await db.records(
            matching: RecordQuery(recordType: "Note", predicate: "n >= 39990"), resultsLimit: 100)
        #expect(page.count == 10)  // 39 990 … 39 999; line 40 000 was bad
        #expect(db.querySnapshot(recordType: "Note")!.rowCount == n - bad.count)
    }

    @Test func crashBeforeTheSwitchLeavesTheContainerAsItWas() async throws {
        for ops in stride(from: 0, to: 24, by: 3) {
            let env = TestEnv()
            let c = try env.open()
            _ = try c.importBytes(jsonLines(0..<20), name: "first", into: .public)
            env.fs.powerOff(afterOperations: ops)
            _ = try? c.importBytes(jsonLines(20..<60), name: "second", into: .public)
            env.fs.crash()
            let again = try env.open()
            let (page, _) = try await again.publicDatabase(as: .user("_admin")).records(
                matching: RecordQuery(recordType: "Note", predicate: "TRUEPREDICATE"), resultsLimit: 400)
            #expect(page.count == 20 || page.count == 60, "crash after \(ops) operations: \(page.count) records")
            try again.checkInvariants()
        }
    }
}

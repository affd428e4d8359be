// Close, unbounded (the default: it checkpoints every delta worth it, after a running background
// checkpoint) and bounded (ContainerOptions.closeCheckpointLimit: a delta within the limit is
// checkpointed at close; a larger one is left in the log, replayed by the next open — which then
// checkpoints it in the background — and a background checkpoint still writing at close is
// cancelled). In every case a reopen sees every acknowledged record.

import CirrusTestSupport
import Foundation
import RecordLog
import RecordModel
import Testing

@testable import CirrusEmbedded
@testable import CirrusFacade

@Suite struct BoundedCloseTests {
    func item(_ i: Int) -> Record {
        rec("i\(i)", "Item", ["n": .int64(Int64(i)), "name": .string("item \(i)")])
    }

    func save(_ c: Container, _ range: Range<Int>) async throws {
        let db = c.publicDatabase(as: .user("_u"))
        for start in stride(from: range.lowerBound, to: range.upperBound, by: 400) {
            _ = try await db.modifyRecords(
                saving: (start..<min(start + 400, range.upperBound)).map(item), deleting: [])
        }
    }

    func names(_ c: Container) async throws -> Set<String> {
        Set(try await allPageNames(c.publicDatabase, RecordQuery(recordType: "Item"), limit: 400))
    }

    func dataFiles(_ env: TestEnv) throws -> [String] {
        try env.fs.list(env.dir + "/development").filter { DataSegmentFormat.number(fileName: $0) != nil }.sorted()
    }

    /// The delta a read-only open replays, and the record names it reads.
    func reopenedReadOnly(_ env: TestEnv) async throws -> (delta: Int, names: Set<String>) {
        let c = try env.open(readOnly: true)
        defer { try? c.close() }
        return (c.statistics().deltaRecords, try await names(c))
    }

    /// Polls until `c`'s delta is empty (a background checkpoint installed), at most 20 s.
    func waitForEmptyDelta(_ c: Container) async throws -> Bool {
        for _ in 0..<2_000 {
            if c.statistics().deltaRecords == 0 { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    @Test func anUnboundedCloseCheckpointsEveryDeltaWorthIt() async throws {
        var env = TestEnv()
        env.checkpointThreshold = 1_000_000
        var c = try env.open()
        try await save(c, 0..<3_000)
        try c.close()  // 3 000 ≥ 1 000: checkpointed, whatever the size
        #expect(try await reopenedReadOnly(env).delta == 0)
        // With background checkpoints running on the way, close waits for them: what is left
        // is below the 1 000 worth a checkpoint, and nothing is lost.
        env.checkpointThreshold = 1_000
        c = try env.open()
        try await save(c, 3_000..<6_500)
        try c.close()
        let after = try await reopenedReadOnly(env)
        #expect(after.delta < 1_000)
        #expect(after.names == Set((0..<6_500).map { "i\($0)" }))
    }

    @Test func closeCheckpointsADeltaWithinTheLimitOnly() async throws {
        var env = TestEnv()
        env.checkpointThreshold = 1_000_000
        env.closeCheckpointLimit = 1_500
        // 1 200 changes: at least the 1 000 worth a checkpoint, within the limit → checkpointed.
        var c = try env.open()
        try await save(c, 0..<1_200)
        try c.close()
        c = try env.open()
        #expect(c.statistics().deltaRecords == 0)
        // 2 000 more: past the limit → left in the log, replayed by the next open.
        try await save(c, 1_200..<3_200)
        let before = try dataFiles(env)
        try c.close()
        #expect(try dataFiles(env) == before, "close wrote no checkpoint")
        env.backgroundCheckpoints = false  // this open keeps the tail (no background checkpoint)
        c = try env.open()
        #expect(c.statistics().deltaRecords == 2_000)
        #expect(try await names(c) == Set((0..<3_200).map { "i\($0)" }))
        try c.close()
    }

    @Test func aWritableOpenCheckpointsTheTailACloseLeft() async throws {
        var env = TestEnv()
        env.checkpointThreshold = 1_000_000
        env.closeCheckpointLimit = 500
        var c = try env.open()
        try await save(c, 0..<2_000)
        try c.close()  // 2 000 > 500: left to the log
        c = try env.open()  // replays 2 000 and starts a background checkpoint
        #expect(try await names(c).count == 2_000)
        #expect(try await waitForEmptyDelta(c), "the tail was checkpointed in the background")
        try c.close()
        c = try env.open()
        #expect(c.statistics().deltaRecords == 0)
        #expect(try await names(c) == Set((0..<2_000).map { "i\($0)" }))
        try c.close()
        // A read-only open replays a tail and leaves it.
        c = try env.open()
        try await save(c, 2_000..<3_000)
        try c.close()
        let ro = try await reopenedReadOnly(env)
        #expect(ro.delta == 1_000)
        #expect(ro.names.count == 3_000)
    }

    /// A background checkpoint running when close comes is cancelled or finishes; either way no
    /// file of it is left unnamed and every record is there after a reopen.
    @Test func closeDuringABackgroundCheckpointLosesNothing() async throws {
        for round in 0..<6 {
            var env = TestEnv()
            env.seed = UInt64(round + 1)
            env.checkpointThreshold = 1_000 + 200 * round
            env.closeCheckpointLimit = 0  // close never checkpoints: what is left is the log's
            let c = try env.open()
            try await save(c, 0..<3_000)  // starts background checkpoints on the way
            try c.close()
            let manifest = try Manifest.decode(try env.fs.read(env.dir + "/development/" + Manifest.fileName)).get()
            let live = manifest.dataSegments
            let files = Set(try dataFiles(env).compactMap { DataSegmentFormat.number(fileName: $0) })
            #expect(files == live, "round \(round): files no manifest names")
            let again = try env.open()
            #expect(try await names(again).count == 3_000, "round \(round)")
            try again.close()
        }
    }
}

// Helpers for the Cirrus tests: containers on an in-memory file system with a fixed clock and
// seeded randomness, paging through every page of a query (the record constructors and error
// probes: CirrusTestSupport's FacadeProbes).

import CirrusIO
import Foundation
import RecordLog
import RecordModel

@testable import CirrusEmbedded
@testable import CirrusFacade

/// A clock tests can set and advance.
final class TestClock: LogClock, @unchecked Sendable {
    private let lock = NSLock()
    private var ms: Int64

    init(_ ms: Int64 = 1_700_000_000_000) { self.ms = ms }

    func wallMilliseconds() -> Int64 { lock.withLock { ms } }
    func monotonicNanoseconds() -> UInt64 { lock.withLock { UInt64(ms) * 1_000_000 } }
    func advance(_ by: Int64 = 1000) { lock.withLock { ms += by } }
}

/// A container directory on an in-memory file system, reopenable.
struct TestEnv {
    let fs = InMemoryFileSystem()
    let clock = TestClock()
    let dir = "/c"
    var seed: UInt64 = 1
    /// Delta size that triggers a checkpoint (model tests use tiny ones).
    var checkpointThreshold = 50_000
    /// `ContainerOptions.readMergeBudget`: off unless a test is about read-triggered merges (a
    /// merge's timing follows the machine's speed, and other tests count layers).
    var readMergeBudget: Double? = nil
    /// `ContainerOptions.backgroundCheckpoints`.
    var backgroundCheckpoints = true
    /// `ContainerOptions.closeCheckpointLimit` (nil: close unbounded).
    var closeCheckpointLimit: Int? = nil

    func options(readOnly: Bool = false, quota: Int? = nil) -> ContainerOptions {
        ContainerOptions(
            fileSystem: fs, clock: clock, random: SeededRandomSource(seed: seed), durability: .none, readOnly: readOnly,
            maximumRecordsPerDatabase: quota, indexNodeSize: 4, checkpointThreshold: checkpointThreshold,
            backgroundCheckpoints: backgroundCheckpoints, readMergeBudget: readMergeBudget,
            closeCheckpointLimit: closeCheckpointLimit)
    }

    func open(_ env: Environment = .development, quota: Int? = nil, readOnly: Bool = false) throws -> Container {
        try Container.open(at: dir, environment: env, options: options(readOnly: readOnly, quota: quota))
    }
}

/// The record names of every page of `q` on `db`, `limit` records a page, following the cursors.
func allPageNames(_ db: Database, _ q: RecordQuery, limit: Int) async throws -> [String] {
    var (page, cursor) = try await db.records(matching: q, resultsLimit: limit)
    var out = try page.map { try $0.1.get().recordID.recordName }
    while let c = cursor {
        (page, cursor) = try await db.records(continuingMatchFrom: c, resultsLimit: limit)
        out += try page.map { try $0.1.get().recordID.recordName }
    }
    return out
}

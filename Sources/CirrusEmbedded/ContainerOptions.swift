// ContainerOptions: what a container is opened with — the injected file system, clock and
// randomness, durability, limits — and Identity, on whose behalf every call is made.
// No global mutable state: tests pass an in-memory file system, a fixed clock and seeded bytes.

import CirrusFacade
import CirrusIO
import Foundation
import Logging
import RecordLog
import RecordModel

/// A source of random bytes, injected so tests are repeatable. The container draws each
/// database's 32-byte cursor secret from it (change tags come from the log's sequence numbers,
/// not from here).
public protocol RandomSource: Sendable {
    /// `count` random bytes.
    func bytes(_ count: Int) -> [UInt8]
}

/// The system's cryptographically secure generator.
public struct SystemRandomSource: RandomSource {
    /// The system generator; it has no state of its own.
    public init() {}
    /// `count` bytes from `SystemRandomNumberGenerator`.
    public func bytes(_ count: Int) -> [UInt8] {
        var g = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &g) }
    }
}

/// A repeatable source (SplitMix64 from a seed) for tests and reproducible runs.
public final class SeededRandomSource: RandomSource, @unchecked Sendable {
    private let lock = NSLock()
    private var generator: SplitMix64

    /// A source whose bytes are fixed by `seed`: two sources of the same seed give the same
    /// bytes for the same sequence of calls.
    ///
    /// ```swift
    /// let options = ContainerOptions(fileSystem: InMemoryFileSystem(), random: SeededRandomSource(seed: 42))
    /// ```
    public init(seed: UInt64) { generator = SplitMix64(seed: seed) }

    /// The next `count` bytes: eight per SplitMix64 output, low byte first; the unused bytes of a
    /// call's last output are dropped, not kept for the next call. Safe to call from any thread.
    public func bytes(_ count: Int) -> [UInt8] {
        lock.withLock {
            var out: [UInt8] = []
            out.reserveCapacity(count)
            while out.count < count {
                let z = generator.next()
                for i in 0..<8 where out.count < count { out.append(UInt8(truncatingIfNeeded: z >> (8 * UInt64(i)))) }
            }
            return out
        }
    }
}

/// How a container is opened.
///
/// ```swift
/// let c = try Container.open(at: "/data/app", environment: .development,
///                            options: ContainerOptions(durability: .batched(milliseconds: 50, bytes: 1 << 20)))
/// ```
public struct ContainerOptions: Sendable {
    /// Where the container's files are read and written: `POSIXFileSystem()` for the disk, an
    /// `InMemoryFileSystem` in tests (RecordLog).
    public var fileSystem: any FileSystem
    /// Wall time for creation/modification dates (and the log's segment headers).
    public var clock: any LogClock
    /// Where cursor secrets come from.
    public var random: any RandomSource
    /// When a commit reaches the disk (RecordLog's `Durability`): `.everyCommit` fsyncs before
    /// each write call returns; `.batched` and `.none` trade the last moments before a crash for
    /// speed. With `.everyCommit`, asset files no record refers to any more are deleted after
    /// each commit; otherwise at `sync()`, `compact()`, `close()` and the next open.
    public var durability: Durability
    /// Open without changing anything; every write (records, zones, schema, imports) fails with
    /// internalError (1). Saved subscriptions are kept in memory only, not written.
    public var readOnly: Bool
    /// Most records one database may hold (nil: no quota); more → quotaExceeded (25).
    public var maximumRecordsPerDatabase: Int?
    /// Node size of the B+trees (tests use tiny nodes so splits happen constantly).
    public var indexNodeSize: Int
    /// Records changed since the last checkpoint (the in-memory delta) after which a commit
    /// writes a checkpoint: data segments that the next open maps instead of replaying the log
    /// (docs/storage-format.md). Smaller: less memory and a shorter replay, more rewriting.
    public var checkpointThreshold: Int
    /// Write threshold-triggered checkpoints on a background thread while commits go on (the
    /// switch to the new segments takes the write lock briefly). Off: the commit that crosses
    /// the threshold writes the checkpoint itself.
    public var backgroundCheckpoints: Bool
    /// Bounded close: the most rows (the delta, and the tables whose segments lack an index)
    /// that `close()` checkpoints. With a limit, close cancels a background checkpoint still
    /// writing (its files are removed; the log keeps its changes) and leaves a larger delta in
    /// the log; the next writable open replays it and checkpoints it in the background, and
    /// until then every open replays it (docs/benchmarks.md, "Bounded close": at 1M places after
    /// an ingest, close 638 ms → 0.1 ms, the next open 6 ms → 756 ms). nil (the default): close
    /// waits for a running background checkpoint and checkpoints any delta worth it, however
    /// long that takes, so the next open maps everything.
    public var closeCheckpointLimit: Int?
    /// Decoded records kept per table for rows read from data segments (0: decode every read).
    /// A record comes in on its second read in a row in its slot pair, and from a result of more
    /// than 1/256 of this many records (a bulk read) only when the table has at most four times
    /// as many rows, so rows read once do not push out the ones read again. Memory: about a
    /// kilobyte per record for a record of ten fields.
    public var recordCacheSize: Int
    /// Merge a table's layers into one (a checkpoint, in the background when
    /// `backgroundCheckpoints`) once its queries have spent about this many times the merge's own
    /// cost on the extra layers — an estimate: (layers − 1) / 10 of each query's time against
    /// 16 µs a row (ski rental; ReadMerge.swift). A table that a checkpoint changes starts over.
    /// nil: never (nor in a read-only container); 0: at the first query of a table in several
    /// layers.
    public var readMergeBudget: Double?
    /// Read-only only: each table's index segments are opened and its indexes mapped from them at
    /// their first use (a query, `explain`, statistics — whichever reader comes first; the others
    /// wait) instead of at open, so a process that only looks records up by name never opens an
    /// index segment. A damaged index segment or section is then found at that first use:
    /// logged, and listed in `openReport.warnings` from then on. Off: every index is mapped (and
    /// checked) at open. A writable container always maps them at open (a damaged one is
    /// rewritten at the next checkpoint).
    public var indexesOnFirstUse = true
    /// Where the container reports what it meets without failing: damaged derived data rebuilt at
    /// open (an index segment, the façade's state; `Container.openReport.warnings` lists the
    /// same), a background checkpoint that failed. By default swift-log's `Logger(label:
    /// "cirrus")`, which writes to standard error unless the program bootstrapped another handler.
    public var logger: Logger
    /// `Container.repair` only: a saved subscription that no longer checks is dropped at open
    /// (and counted) instead of failing it.
    var dropsInvalidSubscriptions = false

    /// Options; the defaults: files on disk, the system clock and generator, an fsync per commit,
    /// writable, no record quota, B+tree nodes of 64, a background checkpoint every 100 000
    /// changed records, 16 384 decoded records cached per table, tables merged into one layer once
    /// their reads have spent the merge's cost on the extra layers (`readMergeBudget` 1), close
    /// unbounded (`closeCheckpointLimit` nil).
    public init(
        fileSystem: any FileSystem = POSIXFileSystem(), clock: any LogClock = SystemClock(),
        random: any RandomSource = SystemRandomSource(), durability: Durability = .everyCommit, readOnly: Bool = false,
        maximumRecordsPerDatabase: Int? = nil, indexNodeSize: Int = 64, checkpointThreshold: Int = 100_000,
        backgroundCheckpoints: Bool = true, recordCacheSize: Int = 16_384, readMergeBudget: Double? = 1,
        closeCheckpointLimit: Int? = nil, logger: Logger = Logger(label: "cirrus")
    ) {
        self.closeCheckpointLimit = closeCheckpointLimit
        self.logger = logger
        self.recordCacheSize = recordCacheSize
        self.readMergeBudget = readMergeBudget
        self.checkpointThreshold = checkpointThreshold
        self.backgroundCheckpoints = backgroundCheckpoints
        self.fileSystem = fileSystem
        self.clock = clock
        self.random = random
        self.durability = durability
        self.readOnly = readOnly
        self.maximumRecordsPerDatabase = maximumRecordsPerDatabase
        self.indexNodeSize = indexNodeSize
    }
}

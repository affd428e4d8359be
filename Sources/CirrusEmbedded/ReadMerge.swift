// ReadMerge: merging a read-heavy table's layers into one, triggered by its reads.
//
// A checkpoint merges layers as a binary counter (RecordStore+Checkpoint.swift), so a table
// written through commits keeps O(log n) layers, and every index is read in every layer: its
// queries are slower than on the same rows in one layer (docs/benchmarks.md, "What four layers
// cost"). Merging pays once for what the extra layers cost each query; which is worth it depends
// on how much the table is read before it changes again. LevelDB answers the same question with
// seek-triggered compaction: a file that too many reads had to look through in vain is compacted.
//
// Here the answer is ski rental: rent until the rent paid equals the price, then buy — never
// more than twice the cost of the best choice made knowing the future. Each query on a table with
// k > 1 layers is charged the part of its time the extra layers cost, estimated as (k − 1) / 10
// of it (fitted to the median slowdown measured at four layers), at most half; once the charges
// reach `ContainerOptions.readMergeBudget` times the merge's own cost (16 µs a row, `compact()`'s
// measured rate), the table's layers are merged into one by a checkpoint, in the background when
// checkpoints are. A checkpoint that changes the table makes a new table, whose charges start
// from zero: a table still being written keeps its layers, as it would soon have new ones.

import CirrusFacade
import Foundation
import RecordLog

/// The charges against one layered table (shared by every copy of the table over the same layers).
final class ReadMergeMeter: @unchecked Sendable {
    // @unchecked: `charged` and `started` are read and written only under `lock`.
    /// What merging costs, per row of the table's layers (`compact()`'s measured time per row).
    static let mergeNanosecondsPerRow = 16_000.0

    /// The table the charges are for.
    let key: TableKey
    /// The table's layers (more than one).
    let layers: Int
    /// The charges, in nanoseconds, at which the table is merged.
    let budget: Double

    private let lock = NSLock()
    private var charged = 0.0
    private var started = false

    /// A meter for the table `key` of `layers` layers holding `rows` rows, merged when its charges
    /// reach `factor` times the merge's cost; nil when there is nothing to merge or no budget.
    init?(key: TableKey, layers: Int, rows: Int, factor: Double?) {
        guard layers > 1, let factor, factor >= 0, factor.isFinite else { return nil }
        self.key = key
        self.layers = layers
        self.budget = factor * Double(rows) * Self.mergeNanosecondsPerRow
    }

    /// The part of a query's time the extra layers cost: (layers − 1) / 10 of it, at most half.
    static func charge(elapsedNanoseconds: UInt64, layers: Int) -> Double {
        Double(elapsedNanoseconds) * min(0.5, Double(layers - 1) / 10)
    }

    /// Charges a query that took `elapsedNanoseconds`; true when the budget is reached and no
    /// merge has started yet (the caller then tries to start one).
    func charge(elapsedNanoseconds: UInt64) -> Bool {
        let c = Self.charge(elapsedNanoseconds: elapsedNanoseconds, layers: layers)
        return lock.withLock {
            charged += c
            return !started && charged >= budget
        }
    }

    /// Marks the merge started; false when one already was.
    func start() -> Bool {
        lock.withLock {
            if started { return false }
            started = true
            return true
        }
    }

    /// The charges so far, in nanoseconds.
    var total: Double { lock.withLock { charged } }
}

extension ContainerCore {
    /// Starts merging `meter`'s table into one layer when nothing stands in the way: the
    /// container is writable, the write lock is free right now (a query does not wait for
    /// commits; the next query over budget tries again), no checkpoint or bulk load is running.
    /// A failure is kept for `close()` and `checkpoint()` to report, as a background
    /// checkpoint's is.
    func startReadMerge(_ meter: ReadMergeMeter) {
        guard !options.readOnly, writeLock.try() else { return }
        defer { writeLock.unlock() }
        // The meter of a table a checkpoint has replaced since is stale: its charges were for other layers.
        guard !checkpointRunning, bulk == nil, baseOnlyTables[meter.key]?.mergeMeter === meter, meter.start() else {
            return
        }
        stateLock.withLock { readMerges += 1 }
        do {
            if options.backgroundCheckpoints {
                try startBackgroundCheckpoint(merge: [meter.key])
            } else {
                try checkpointHoldingLock(merge: [meter.key])
            }
        } catch {
            checkpointError = error
        }
    }
}

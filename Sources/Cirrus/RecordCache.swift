// RecordCache: decoded records of one table's base rows, bounded — the façade's buffer pool.
//
// Base rows live encoded in a mapped segment; decoding one costs about a microsecond and a dozen
// allocations, which queries that touch the same rows again and again (sort keys, residual
// filters, popular pages) would otherwise pay every time. The cache is two-way set-associative:
// row r lives in set r mod sets, in one of its two slots; a miss replaces the slot used least
// recently of the two. Lookups are two comparisons — no hashing, no probing (a dictionary that
// evicted in bulk clustered its entries and spent most of a query's time probing: 46% of the
// samples of an all-matches text query at 1M rows). Base rows never change, so an entry is valid
// for as long as the base it came from: each new base (each checkpoint) gets a new cache, and
// removed rows are checked before the cache is asked. Shared by every snapshot of the same base;
// thread-safe.

import Foundation
import RecordModel

final class RecordCache: @unchecked Sendable {
    // @unchecked: every access to the slots holds `lock` (so no dynamic exclusivity checks).
    private let lock = NSLock()
    /// One slot: a row (-1: empty) and its record, side by side — a lookup touches one cache
    /// line, not one in a row array and another in a record array.
    private struct Slot {
        var row: Int
        var record: Record?
    }
    /// Slots 2s and 2s + 1 form set s.
    @exclusivity(unchecked) private var slots: [Slot]
    /// Per set: the slot (0 or 1) to replace next — the one not used last.
    @exclusivity(unchecked) private var next: [UInt8]
    private let setMask: Int
    let capacity: Int

    /// A cache of about `capacity` records (rounded up to a power of two; 0 disables it). The
    /// slots are allocated at the first record stored, so opening a table (and a process that
    /// opens many and reads few) does not pay for zero-filling them.
    init(capacity: Int) {
        var sets = 1
        while sets * 2 < capacity { sets <<= 1 }
        self.capacity = capacity
        setMask = sets - 1
        slots = []
        next = []
    }

    /// Allocates the slots (lock held).
    private func allocate() {
        let sets = setMask + 1
        slots = [Slot](repeating: Slot(row: -1, record: nil), count: sets * 2)
        next = [UInt8](repeating: 0, count: sets)
    }

    /// The record of base row `row` when it is cached; nil otherwise (nothing is decoded).
    func cached(_ row: Int) -> Record? {
        guard capacity > 0 else { return nil }
        let set = row & setMask
        return lock.withLock {
            guard !slots.isEmpty else { return nil }
            for way in 0..<2 where slots[2 * set + way].row == row { return slots[2 * set + way].record }
            return nil
        }
    }

    /// The record of base row `row`, decoding it with `decode` on a miss.
    @inline(__always)
    func record(_ row: Int, _ decode: () -> Record?) -> Record? {
        guard capacity > 0 else { return decode() }
        let set = row & setMask
        let hit: Record? = lock.withLock {
            guard !slots.isEmpty else { return nil }
            for way in 0..<2 where slots[2 * set + way].row == row {
                next[set] = UInt8(1 - way)
                return slots[2 * set + way].record
            }
            return nil
        }
        if let hit { return hit }
        guard let r = decode() else { return nil }
        // The evicted record is released after the lock is let go.
        let evicted: Record? = lock.withLock {
            if slots.isEmpty { allocate() }
            let way = Int(next[set])
            next[set] = UInt8(1 - way)
            var slot = Slot(row: row, record: r)
            Swift.swap(&slot, &slots[2 * set + way])
            return slot.record
        }
        _ = evicted
        return r
    }
}

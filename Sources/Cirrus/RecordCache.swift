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
    // @unchecked: every access to the slots holds `lock`.
    private let lock = NSLock()
    /// Row of each slot (-1: empty); slots 2s and 2s + 1 form set s.
    private var rows: [Int]
    private var records: [Record?]
    /// Per set: the slot (0 or 1) to replace next — the one not used last.
    private var next: [UInt8]
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
        rows = []
        records = []
        next = []
    }

    /// Allocates the slots (lock held).
    private func allocate() {
        let sets = setMask + 1
        rows = [Int](repeating: -1, count: sets * 2)
        records = [Record?](repeating: nil, count: sets * 2)
        next = [UInt8](repeating: 0, count: sets)
    }

    /// The record of base row `row` when it is cached; nil otherwise (nothing is decoded).
    func cached(_ row: Int) -> Record? {
        guard capacity > 0 else { return nil }
        let set = row & setMask
        return lock.withLock {
            guard !rows.isEmpty else { return nil }
            for way in 0..<2 where rows[2 * set + way] == row { return records[2 * set + way] }
            return nil
        }
    }

    /// The record of base row `row`, decoding it with `decode` on a miss.
    @inline(__always)
    func record(_ row: Int, _ decode: () -> Record?) -> Record? {
        guard capacity > 0 else { return decode() }
        let set = row & setMask
        let hit: Record? = lock.withLock {
            guard !rows.isEmpty else { return nil }
            for way in 0..<2 where rows[2 * set + way] == row {
                next[set] = UInt8(1 - way)
                return records[2 * set + way]
            }
            return nil
        }
        if let hit { return hit }
        guard let r = decode() else { return nil }
        lock.withLock {
            if rows.isEmpty { allocate() }
            let way = Int(next[set])
            rows[2 * set + way] = row
            records[2 * set + way] = r
            next[set] = UInt8(1 - way)
        }
        return r
    }
}

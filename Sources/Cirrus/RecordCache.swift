// RecordCache: decoded records of one table's base rows, bounded — the façade's buffer pool.
//
// Base rows live encoded in a mapped segment; decoding one costs about a microsecond and a dozen
// allocations, which queries that touch the same rows again and again (sort keys, residual
// filters, popular pages) would otherwise pay every time. The cache holds at most `capacity`
// records; when full it drops an eighth of them (whichever the dictionary yields first, which
// is as good as random here). Base rows never change, so an entry is valid for as long as the
// base it came from: each new base (each checkpoint) gets a new cache, and removed rows are
// checked before the cache is asked. Shared by every snapshot of the same base; thread-safe.

import Foundation
import RecordModel

final class RecordCache: @unchecked Sendable {
    // @unchecked: every access to `entries` holds `lock`.
    private let lock = NSLock()
    private var entries: [Int: Record] = [:]
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        entries.reserveCapacity(min(capacity, 1 << 16))
    }

    /// The record of base row `row`, decoding it with `decode` on a miss.
    @inline(__always)
    func record(_ row: Int, _ decode: () -> Record?) -> Record? {
        guard capacity > 0 else { return decode() }
        if let r = lock.withLock({ entries[row] }) { return r }
        guard let r = decode() else { return nil }
        lock.withLock {
            if entries.count >= capacity {
                for k in Array(entries.keys.prefix(max(1, capacity / 8))) { entries[k] = nil }
            }
            entries[row] = r
        }
        return r
    }
}

// RecordCache: decoded records of one table's base rows, bounded — the façade's buffer pool.
//
// Base rows live encoded in a mapped segment; decoding one costs about a microsecond and a dozen
// allocations, which queries that touch the same rows again and again (sort keys, residual
// filters, popular pages) would otherwise pay every time. The cache is two-way set-associative:
// row r lives in set r mod sets, in one of its two slots; a miss replaces the slot used least
// recently of the two. Lookups are two comparisons — no hashing, no probing (a dictionary that
// evicted in bulk clustered its entries, and its lookups then probed long runs). Base rows never
// change, so an entry is valid for as long as the base it came from: each new base (each
// checkpoint) gets a new cache, and removed rows are checked before the cache is asked. Shared by
// every snapshot of the same base; thread-safe.
//
// Admission on the second miss. A full set takes a row only when the same row missed in that set
// before and nothing missed there since (each set remembers its last miss: a "ghost"). Rows read
// again soon — the pages of repeated queries, sort keys — come in on their second read; rows that
// pass once — the hundreds of matches of an all-matches query over a table many times the cache's
// size — never evict anything. Without this, such queries would replace a cached record with every
// row they returned, and free the evicted records (cold in memory: a cache miss per object).
// LevelDB leaves the choice to the caller (`fill_cache`), PostgreSQL gives large scans a ring of
// their own; here the cache decides alone, since the caller cannot tell how often a row will be
// read again — except that results too large to keep (bulk reads, `fills(resultRows:)`) are not
// offered at all when the table is much larger than the cache: their overlapping rows would
// still come in on a second read and evict others.

import CPrefetch
import CirrusFacade
import CirrusIO
import Foundation
import RecordModel

final class RecordCache: @unchecked Sendable {
    // @unchecked: every access to the sets and `stored` holds `lock` (so no dynamic exclusivity
    // checks); `prefetch` only computes an address.
    private let lock = NSLock()
    /// One set: its two rows and records, the way to replace next and the ghost, in 32 bytes —
    /// a lookup, its bookkeeping and an admission touch one cache line, two sets to a line. All
    /// zero bytes is an empty set (rows are stored plus one, a nil `Record?` is a null
    /// reference), so the sets come zeroed (`ZeroedMemory`) and a page of them is touched —
    /// faulted in — only when a row of one of its sets is first looked up or stored.
    private struct CacheSet {
        /// An empty slot, or no ghost.
        static let empty: UInt32 = 0
        var records: (Record?, Record?)
        /// The slots' rows, each plus one (`empty`: the slot holds nothing).
        var rows: (UInt32, UInt32)
        /// The row (plus one) that missed here last and was not admitted (`empty`: none).
        var ghost: UInt32
        /// The way (0 or 1) to replace next: the one not used last.
        var next: UInt8

        func way(of key: UInt32) -> Int? { rows.0 == key ? 0 : rows.1 == key ? 1 : nil }
        func record(_ way: Int) -> Record? { way == 0 ? records.0 : records.1 }
    }
    /// The sets, `setMask + 1` of them, in `memory`: zero-filled (empty) and touched only where
    /// used. Their address never changes, so `prefetch` needs no lock.
    private let sets: UnsafeMutablePointer<CacheSet>
    private let memory: ZeroedMemory
    /// Whether any record was stored: only then does `deinit` walk the sets to release them.
    @exclusivity(unchecked) private var stored = false
    private let setMask: Int
    let capacity: Int
    /// Whether bulk reads fill the cache too: when it holds a large share of the table.
    let bulkReadsFill: Bool

    /// A cache of about `capacity` records (rounded up to a power of two; 0 disables it) of a
    /// table of `tableRows` base rows. Opening a table (and a process that opens many and reads
    /// few) does not pay for the sets: `ZeroedMemory` hands out zero pages touched only when
    /// used.
    init(capacity: Int, tableRows: Int) {
        var count = 1
        while count * 2 < capacity { count <<= 1 }
        self.capacity = capacity
        bulkReadsFill = tableRows <= Self.bulkTableFactor * capacity
        setMask = count - 1
        guard let memory = ZeroedMemory(byteCount: count * MemoryLayout<CacheSet>.stride) else {
            fatalError("RecordCache: out of memory for \(count) sets")
        }
        self.memory = memory
        sets = memory.base.bindMemory(to: CacheSet.self, capacity: count)
    }

    deinit {
        if stored { sets.deinitialize(count: setMask + 1) }
    }

    /// The key of base row `row` in a set (row plus one), nil for rows the cache cannot hold.
    @inline(__always)
    private func key(_ row: Int) -> UInt32? {
        guard capacity > 0, row >= 0, row < Int(UInt32.max) else { return nil }
        return UInt32(truncatingIfNeeded: row + 1)
    }

    /// The record of base row `row` when it is cached; nil otherwise (nothing is decoded).
    func cached(_ row: Int) -> Record? {
        guard let key = key(row) else { return nil }
        let s = row & setMask
        return lock.withLock {
            guard let way = sets[s].way(of: key) else { return nil }
            return sets[s].record(way)
        }
    }

    /// Starts loading the set of base row `row`, which `record(_:fill:_:)` reads first: a
    /// query's rows are spread over the sets, so loading a row's set is a cache miss per row,
    /// hit or not. A hint: nothing is read.
    @inline(__always)
    func prefetch(_ row: Int) { cirrus_prefetch(sets + (row & setMask)) }

    /// Starts loading the cached record of base row `row` — its box, which the read that
    /// follows retains (a cache miss of its own when the box is cold) and reads — and tells
    /// whether the row was cached. A hint: the record may be gone by the time it is read. The
    /// box's address is loaded from the set's bytes, not as a `Record` (copying one out would
    /// retain it: the very miss this is to overlap with others).
    func prefetchRecord(_ row: Int) -> Bool {
        guard let box = cachedBox(row) else { return false }
        cirrus_prefetch(box)  // the object's header (the reference count) and its first fields
        cirrus_prefetch(box + 64)
        return true
    }

    /// The address of the box of base row `row`'s cached record, nil when it is not cached —
    /// loaded from the set's bytes: each `Record?` there is one reference (nil: zero).
    func cachedBox(_ row: Int) -> UnsafeRawPointer? {
        guard let key = key(row) else { return nil }
        let s = row & setMask
        return lock.withLock {
            guard let way = sets[s].way(of: key) else { return nil }
            return UnsafeRawPointer(sets + s).load(
                fromByteOffset: Self.recordsOffset + way * MemoryLayout<Record?>.stride, as: UnsafeRawPointer?.self)
        }
    }

    /// Where a set's records lie in it.
    static let recordsOffset = MemoryLayout<CacheSet>.offset(of: \CacheSet.records) ?? 0

    /// The share of the capacity above which a result is a bulk read: 1/256, 64 records of the
    /// default 16 384.
    static let bulkShare = 256
    /// Bulk reads fill the cache of a table of at most this many times its capacity.
    static let bulkTableFactor = 4

    /// Whether the rows of a result of `resultRows` records should be added: not those of bulk
    /// reads, unless the cache can hold a quarter of the table or more (PostgreSQL likewise
    /// gives only scans of tables large against its buffers a ring of their own). In a large
    /// table, a bulk read replacing a cached record with each row it returned would spend much
    /// of its time freeing the evicted ones; in a table the cache can mostly hold, filling pays
    /// off when the query repeats (every row a hit from its second run on).
    func fills(resultRows: Int) -> Bool { bulkReadsFill || resultRows <= max(1, capacity / Self.bulkShare) }

    /// The record of base row `row`, decoding it with `decode` on a miss; a decoded record is
    /// offered to the cache (see the admission rule above) when `fill` is true.
    @inline(__always)
    func record(_ row: Int, fill: Bool = true, _ decode: () -> Record?) -> Record? {
        guard let key = key(row) else { return decode() }
        let s = row & setMask
        let hit: Record? = lock.withLock {
            guard let way = sets[s].way(of: key) else { return nil }
            sets[s].next = UInt8(1 - way)
            return sets[s].record(way)
        }
        if let hit { return hit }
        guard let r = decode() else { return nil }
        guard fill else { return r }
        // The evicted record is released after the lock is let go.
        let evicted: Record? = lock.withLock {
            stored = true
            let way = Int(sets[s].next)
            if (way == 0 ? sets[s].rows.0 : sets[s].rows.1) != CacheSet.empty {
                // A full set: the row comes in on its second miss in a row there.
                guard sets[s].ghost == key else {
                    sets[s].ghost = key
                    return nil
                }
                sets[s].ghost = CacheSet.empty
            }
            sets[s].next = UInt8(1 - way)
            var out: Record? = r
            if way == 0 {
                sets[s].rows.0 = key
                Swift.swap(&out, &sets[s].records.0)
            } else {
                sets[s].rows.1 = key
                Swift.swap(&out, &sets[s].records.1)
            }
            return out
        }
        _ = evicted
        return r
    }
}

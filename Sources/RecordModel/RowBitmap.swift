// RowBitmap: a set of row ids as copy-on-write pages of bits — which base rows (those in a
// checkpoint's mapped segments) are dead in a table's layers (RecordLog) or were removed since
// (the indexes and the container's row table, TypeTable). A write after a reader's snapshot
// copies one 512-byte page and the page table, never the whole set.

/// A set of row ids in copy-on-write pages of 4 096 bits.
///
/// ```swift
/// var removed = RowBitmap()
/// removed.insert(3)
/// let before = removed          // shares every page
/// removed.insert(7)             // copies one 512-byte page and the page table
/// (before.contains(7), removed.contains(7), removed.count)   // (false, true, 2)
/// ```
public struct RowBitmap: Sendable, Hashable {
    @usableFromInline static let pageShift = 12
    // Inlinable (with `contains`) because the container tests membership once per base row it
    // reads, from another module.
    @usableFromInline private(set) var pages: [[UInt64]?] = []
    /// Number of rows in the set.
    public private(set) var count = 0

    /// An empty set.
    public init() {}

    /// Whether `row` is in the set.
    @inlinable @inline(__always)
    public func contains(_ row: Int) -> Bool {
        let p = row >> Self.pageShift
        guard p < pages.count, let page = pages[p] else { return false }
        let i = row & ((1 << Self.pageShift) - 1)
        return page[i >> 6] & (1 << UInt64(i & 63)) != 0
    }

    /// Adds `rows`, which must be ascending, a page at a time (one copy-on-write check and one
    /// store per page, not per row); calls `added` with each row that was not in the set yet,
    /// in order.
    public mutating func insert(sorted rows: [UInt32], added: (Int) -> Void = { _ in }) {
        rows.withUnsafeBufferPointer { rows in
            var i = 0
            while i < rows.count {
                let p = Int(rows[i]) >> Self.pageShift
                while pages.count <= p { pages.append(nil) }
                // The page's only reference is then `page` (unless a snapshot shares it).
                var page = pages[p] ?? [UInt64](repeating: 0, count: (1 << Self.pageShift) / 64)
                pages[p] = nil
                page.withUnsafeMutableBufferPointer { words in
                    while i < rows.count, Int(rows[i]) >> Self.pageShift == p {
                        let r = Int(rows[i])
                        let w = (r & ((1 << Self.pageShift) - 1)) >> 6
                        let bit: UInt64 = 1 << UInt64(r & 63)
                        if words[w] & bit == 0 {
                            words[w] |= bit
                            count += 1
                            added(r)
                        }
                        i += 1
                    }
                }
                pages[p] = page
            }
        }
    }

    /// Adds `row`.
    public mutating func insert(_ row: Int) {
        let p = row >> Self.pageShift
        while pages.count <= p { pages.append(nil) }
        if pages[p] == nil { pages[p] = [UInt64](repeating: 0, count: (1 << Self.pageShift) / 64) }
        let i = row & ((1 << Self.pageShift) - 1)
        let bit: UInt64 = 1 << UInt64(i & 63)
        if pages[p]![i >> 6] & bit == 0 {
            pages[p]![i >> 6] |= bit
            count += 1
        }
    }
}

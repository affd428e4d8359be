// RowBitmap: a set of row ids as copy-on-write pages of bits — which base rows (those in a
// checkpoint's mapped segments) are dead in a table's layers (RecordLog) or were removed since
// (the indexes and the container's row table, TypeTable). A write after a reader's snapshot
// copies one 512-byte page and the page table, never the whole set.
//
// A set made from a sorted list (`init(sorted:)`, how a table's dead rows come from its layers at
// open) keeps the pages holding few of its rows as one shared, never-changed list of 16-bit
// offsets with a directory by page: its memory follows the rows, not the table. Pages of bits
// cost 512 bytes each wherever a row falls, so a few thousand dead rows spread over ten million
// would take 1.3 MB of fresh memory — hundreds of page faults at every open. Such a page holds
// at most `sparsePageLimit` rows, so a lookup scans at most that many offsets; a page with more
// becomes a page of bits. Rows inserted later go to pages of bits, and a page of bits made for
// them starts with its page's sparse rows: where a page of bits exists it holds every row of its
// page, and the offsets are asked only where none does.

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
    /// Most rows a page keeps as offsets in `sparseOffsets` (a page with more is a page of bits).
    static let sparsePageLimit = 32
    // Inlinable (with `contains`) because the container tests membership once per base row it
    // reads, from another module.
    @usableFromInline private(set) var pages: [[UInt64]?] = []
    /// Rows given to `init(sorted:)` in pages holding few of them, as offsets in their page:
    /// `sparseOffsets[sparseDirectory[p] ..< sparseDirectory[p + 1]]` are page p's, ascending.
    /// Never changed after `init(sorted:)` (copies share them); both empty when there are none.
    @usableFromInline private(set) var sparseOffsets: [UInt16] = []
    @usableFromInline private(set) var sparseDirectory: [UInt32] = []
    /// Number of rows in the set.
    public private(set) var count = 0

    /// An empty set.
    public init() {}

    /// The set of `rows`, which must be ascending (a row may repeat). Pages holding at most
    /// `sparsePageLimit` of them are kept as offsets, the others as bits (see the file header).
    public init(sorted rows: [UInt32]) {
        guard let last = rows.last else { return }
        let pageCount = Int(last) >> Self.pageShift + 1
        var used = 0
        // Offsets are written in place (at most one a row); the directory has an entry a page
        // up to the last one, plus the end.
        let offsets = [UInt16](unsafeUninitializedCapacity: rows.count) { offsets, initialized in
            let directory = [UInt32](unsafeUninitializedCapacity: pageCount + 1) { directory, made in
                rows.withUnsafeBufferPointer { rows in
                    var i = 0
                    var nextPage = 0  // pages before it have their directory entry
                    while i < rows.count {
                        let p = Int(rows[i]) >> Self.pageShift
                        var end = i + 1
                        while end < rows.count, Int(rows[end]) >> Self.pageShift == p { end += 1 }
                        while nextPage <= p {
                            directory[nextPage] = UInt32(used)
                            nextPage += 1
                        }
                        if end - i > Self.sparsePageLimit {
                            insert(sorted: UnsafeBufferPointer(rebasing: rows[i..<end]))
                        } else {
                            var previous: UInt32?
                            for k in i..<end where rows[k] != previous {
                                previous = rows[k]
                                offsets[used] = UInt16(truncatingIfNeeded: Int(rows[k]) & ((1 << Self.pageShift) - 1))
                                used += 1
                            }
                        }
                        i = end
                    }
                    directory[pageCount] = UInt32(used)
                }
                made = pageCount + 1
            }
            initialized = used
            if used > 0 {
                sparseDirectory = directory
            }
        }
        count += used
        if !offsets.isEmpty { sparseOffsets = offsets }
    }

    /// Whether `row` is in the set.
    @inlinable @inline(__always)
    public func contains(_ row: Int) -> Bool {
        let p = row >> Self.pageShift
        if p < pages.count, let page = pages[p] {
            let i = row & ((1 << Self.pageShift) - 1)
            return page[i >> 6] & (1 << UInt64(i & 63)) != 0
        }
        return p + 1 < sparseDirectory.count && sparseContains(row, page: p)
    }

    /// Whether `row` of page `p` is among the sparse rows: a scan of at most `sparsePageLimit`
    /// offsets.
    @inlinable func sparseContains(_ row: Int, page p: Int) -> Bool {
        let o = UInt16(truncatingIfNeeded: row & ((1 << Self.pageShift) - 1))
        var k = Int(sparseDirectory[p])
        let end = Int(sparseDirectory[p + 1])
        while k < end {
            let x = sparseOffsets[k]
            if x >= o { return x == o }
            k += 1
        }
        return false
    }

    /// Adds `rows`, which must be ascending, a page at a time (one copy-on-write check and one
    /// store per page, not per row); calls `added` with each row that was not in the set yet,
    /// in order.
    public mutating func insert(sorted rows: [UInt32], added: (Int) -> Void = { _ in }) {
        rows.withUnsafeBufferPointer { insert(sorted: $0, added: added) }
    }

    private mutating func insert(sorted rows: UnsafeBufferPointer<UInt32>, added: (Int) -> Void = { _ in }) {
        var i = 0
        while i < rows.count {
            let p = Int(rows[i]) >> Self.pageShift
            while pages.count <= p { pages.append(nil) }
            // The page's only reference is then `page` (unless a snapshot shares it).
            var page = pages[p] ?? newPage(p)
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

    /// Adds `row`.
    public mutating func insert(_ row: Int) {
        let p = row >> Self.pageShift
        while pages.count <= p { pages.append(nil) }
        if pages[p] == nil { pages[p] = newPage(p) }
        let i = row & ((1 << Self.pageShift) - 1)
        let bit: UInt64 = 1 << UInt64(i & 63)
        if pages[p]![i >> 6] & bit == 0 {
            pages[p]![i >> 6] |= bit
            count += 1
        }
    }

    /// A page of bits for page `p`, holding its sparse rows: a page of bits, once there, has every
    /// row of its page (so `contains` asks the sparse rows only where there is none).
    private func newPage(_ p: Int) -> [UInt64] {
        var page = [UInt64](repeating: 0, count: (1 << Self.pageShift) / 64)
        if p + 1 < sparseDirectory.count {
            for k in Int(sparseDirectory[p])..<Int(sparseDirectory[p + 1]) {
                let o = Int(sparseOffsets[k])
                page[o >> 6] |= 1 << UInt64(o & 63)
            }
        }
        return page
    }

    /// The rows, ascending.
    public var sortedRows: [Int] {
        var out: [Int] = []
        out.reserveCapacity(count)
        for (p, page) in pages.enumerated() {
            guard let page else { continue }
            for (w, word) in page.enumerated() where word != 0 {
                for b in 0..<64 where word & (1 << UInt64(b)) != 0 { out.append(p << Self.pageShift + w << 6 + b) }
            }
        }
        if !sparseDirectory.isEmpty {
            for p in 0..<(sparseDirectory.count - 1) where p >= pages.count || pages[p] == nil {
                for k in Int(sparseDirectory[p])..<Int(sparseDirectory[p + 1]) {
                    out.append(p << Self.pageShift + Int(sparseOffsets[k]))
                }
            }
            out.sort()
        }
        return out
    }

    /// The union of ascending lists, ascending and without repeats (one list: itself).
    public static func union(_ lists: [[UInt32]]) -> [UInt32] {
        let nonEmpty = lists.filter { !$0.isEmpty }
        guard nonEmpty.count > 1 else { return nonEmpty.first ?? [] }
        return nonEmpty.dropFirst().reduce(nonEmpty[0]) { a, b in
            var out: [UInt32] = []
            out.reserveCapacity(a.count + b.count)
            var (i, j) = (0, 0)
            while i < a.count || j < b.count {
                let x = j == b.count || (i < a.count && a[i] <= b[j]) ? a[i] : b[j]
                if out.last != x { out.append(x) }
                if i < a.count && a[i] == x { i += 1 }
                if j < b.count && b[j] == x { j += 1 }
            }
            return out
        }
    }

    /// Same rows.
    public static func == (a: RowBitmap, b: RowBitmap) -> Bool {
        a.count == b.count && a.sortedRows == b.sortedRows
    }

    /// Hashes the row count (equal sets have equal counts).
    public func hash(into hasher: inout Hasher) { hasher.combine(count) }
}

// PagedArray: a dense array split into fixed pages (4 096 elements unless told otherwise), each
// its own copy-on-write array.
//
// Used for the spatial index's per-row tables and for the container's delta rows (TypeTable). A copy of the whole structure (a snapshot) shares
// every page; the first write after it copies the page table (n / 4096 references) and the one
// page written, not the n elements — so publishing a commit while readers hold snapshots costs
// O(pages touched), not O(rows).

/// A dense array in fixed-size copy-on-write pages: a write after a copy copies one page, not the array.
///
/// An index is addressable once ``ensure(_:)`` has grown the array past it; new slots hold `fill`.
///
/// ```swift
/// var flags = PagedArray(fill: false)
/// flags.ensure(10_000)          // three pages of 4 096, all `false`
/// let snapshot = flags          // shares every page
/// flags[9_999] = true           // copies the page table and one page; `snapshot` still reads `false`
/// ```
public struct PagedArray<Element: Sendable>: Sendable {
    @usableFromInline private(set) var pages: [[Element]] = []
    @usableFromInline let fill: Element
    @usableFromInline let pageShift: Int
    /// Elements per page: `1 << pageShift` (4 096 by default).
    @inlinable public var pageSize: Int { 1 << pageShift }

    /// `pageShift` = log2 of the page size: smaller pages make a post-snapshot write cheaper when
    /// elements are references (each copied element is retained).
    public init(fill: Element, pageShift: Int = 12) {
        self.fill = fill
        self.pageShift = pageShift
    }

    /// Number of addressable elements (a multiple of the page size).
    @inlinable public var capacity: Int { pages.count << pageShift }

    /// Grows (with `fill`) until index `i` is addressable.
    @inlinable public mutating func ensure(_ i: Int) {
        while i >= capacity { pages.append([Element](repeating: fill, count: pageSize)) }
    }

    /// The element at `i`, which must be addressable (`contains(i)`); reading or writing outside traps.
    @inlinable
    public subscript(i: Int) -> Element {
        get { pages[i >> pageShift][i & (pageSize - 1)] }
        _modify { yield &pages[i >> pageShift][i & (pageSize - 1)] }
    }

    /// Whether `i` is addressable.
    @inlinable
    public func contains(_ i: Int) -> Bool { i >= 0 && i < capacity }

    /// Each page with the index of its first element (for scans that skip `fill`).
    @inlinable
    public var pagesWithOffsets: some Sequence<(offset: Int, page: [Element])> {
        pages.enumerated().lazy.map { (offset: $0.offset << pageShift, page: $0.element) }
    }
}

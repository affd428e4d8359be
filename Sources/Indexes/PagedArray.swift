// PagedArray: a dense array split into fixed pages (4 096 elements unless told otherwise), each
// its own copy-on-write array.
//
// Used for the spatial index's per-row tables and for the container's delta rows (TypeTable). A copy of the whole structure (a snapshot) shares
// every page; the first write after it copies the page table (n / 4096 references) and the one
// page written, not the n elements — so publishing a commit while readers hold snapshots costs
// O(pages touched), not O(rows).

public struct PagedArray<Element: Sendable>: Sendable {
    @usableFromInline private(set) var pages: [[Element]] = []
    @usableFromInline let fill: Element
    @usableFromInline let pageShift: Int
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

// PagedArray: a dense array split into fixed pages of 4 096 elements, each its own
// copy-on-write array.
//
// Used for the spatial index's per-row tables. A copy of the whole structure (a snapshot) shares
// every page; the first write after it copies the page table (n / 4096 references) and the one
// page written, not the n elements — so publishing a commit while readers hold snapshots costs
// O(pages touched), not O(rows).

struct PagedArray<Element: Sendable>: Sendable {
    static var pageShift: Int { 12 }
    static var pageSize: Int { 1 << pageShift }

    private(set) var pages: [[Element]] = []
    let fill: Element

    init(fill: Element) { self.fill = fill }

    /// Number of addressable elements (a multiple of the page size).
    var capacity: Int { pages.count << Self.pageShift }

    /// Grows (with `fill`) until index `i` is addressable.
    mutating func ensure(_ i: Int) {
        while i >= capacity { pages.append([Element](repeating: fill, count: Self.pageSize)) }
    }

    @inline(__always)
    subscript(i: Int) -> Element {
        get { pages[i >> Self.pageShift][i & (Self.pageSize - 1)] }
        _modify { yield &pages[i >> Self.pageShift][i & (Self.pageSize - 1)] }
    }

    /// Whether `i` is addressable.
    @inline(__always)
    func contains(_ i: Int) -> Bool { i >= 0 && i < capacity }
}

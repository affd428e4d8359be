// BinaryHeap: the one priority queue of the engine — distance browsing (NearestIterator), the
// k-way union of posting lists (Postings.heapUnion) and top-K ranking (QueryExecution's
// BoundedHeap) all use it.
//
// The order is a value conforming to `HeapOrder`, not `Comparable` elements, because top-K
// orders by the query's sort descriptors, known only at run time. Generic and @inlinable, so
// each use is specialized to its element and order (no closure call per comparison), as the
// three hand-written heaps it replaces were. Why not swift-collections' `Heap`: it needs
// `Comparable` elements (the query's order would have to ride inside every element) and is a
// min-max heap, which costs extra comparisons per level for the min-only use all three callers
// make. (Not benchmarked against it: reasoned from its documented design.)

/// How a heap orders its elements: `less(a, b)` puts `a` nearer the top.
public protocol HeapOrder {
    associatedtype Element
    func less(_ a: Element, _ b: Element) -> Bool
}

/// A binary heap whose top is the least element under `order`.
///
/// ```swift
/// struct Smallest: HeapOrder {
///     func less(_ a: Int, _ b: Int) -> Bool { a < b }
/// }
/// var heap = BinaryHeap(order: Smallest(), elements: [5, 1, 4])
/// heap.push(2)
/// heap.pop()    // 1
/// heap.top      // 2
/// ```
public struct BinaryHeap<Order: HeapOrder> {
    /// The order the heap keeps.
    public let order: Order
    @usableFromInline var items: [Order.Element]

    /// An empty heap.
    @inlinable
    public init(order: Order, capacity: Int = 0) {
        self.order = order
        items = []
        items.reserveCapacity(capacity)
    }

    /// A heap of `elements`, arranged in O(n).
    @inlinable
    public init(order: Order, elements: [Order.Element]) {
        self.order = order
        items = elements
        if items.count > 1 {
            for i in stride(from: items.count / 2 - 1, through: 0, by: -1) { siftDown(from: i) }
        }
    }

    /// Number of elements.
    @inlinable public var count: Int { items.count }
    /// Whether the heap is empty.
    @inlinable public var isEmpty: Bool { items.isEmpty }
    /// The least element.
    @inlinable public var top: Order.Element? { items.first }
    /// The elements in heap (not sorted) order.
    @inlinable public var unordered: [Order.Element] { items }

    /// Removes every element, keeping the storage for reuse.
    @inlinable
    public mutating func removeAll() { items.removeAll(keepingCapacity: true) }

    /// Adds `element` in O(log n).
    @inlinable
    public mutating func push(_ element: Order.Element) {
        items.append(element)
        let order = self.order
        // Through the buffer: `items[i]` checked its bounds and the array's uniqueness at every
        // step (a nearest-first page pushes a few hundred nodes and points).
        items.withUnsafeMutableBufferPointer { b in
            var i = b.count - 1
            while i > 0 {
                let p = (i - 1) >> 1
                if !order.less(element, b[p]) { break }
                b[i] = b[p]
                i = p
            }
            b[i] = element
        }
    }

    /// Removes and returns the least element.
    @inlinable
    public mutating func pop() -> Order.Element? {
        guard let top = items.first else { return nil }
        let last = items.removeLast()
        if !items.isEmpty {
            items[0] = last
            siftDown(from: 0)
        }
        return top
    }

    /// Replaces the least element with `element` (one sift instead of a pop and a push): the
    /// step of a k-way merge and of a bounded top-K.
    @inlinable
    public mutating func replaceTop(_ element: Order.Element) {
        if items.isEmpty {
            items.append(element)
            return
        }
        items[0] = element
        siftDown(from: 0)
    }

    @inlinable
    mutating func siftDown(from start: Int) {
        let order = self.order
        items.withUnsafeMutableBufferPointer { b in
            let n = b.count
            let moving = b[start]
            var i = start
            while true {
                let l = 2 * i + 1
                if l >= n { break }
                var c = l
                if l + 1 < n, order.less(b[l + 1], b[l]) { c = l + 1 }
                if !order.less(b[c], moving) { break }
                b[i] = b[c]
                i = c
            }
            b[i] = moving
        }
    }
}

extension BinaryHeap: Sendable where Order: Sendable, Order.Element: Sendable {}

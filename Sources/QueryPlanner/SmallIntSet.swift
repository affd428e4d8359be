// SmallIntSet: the planner's sets of filter and path indices, kept in a word.

/// A set of non-negative integers — indices of a query's filters or of its access paths — as a
/// 64-bit mask, with an ordinary `Set` only for indices of 64 and more (a query with that many
/// filters is rare). Planning builds and unions many such sets per candidate plan; as `Set<Int>`
/// each was a heap allocation, about a third of the planner's mallocs.
struct SmallIntSet: Equatable {
    private var bits: UInt64 = 0
    private var overflow: Set<Int> = []  // empty: no storage allocated

    /// The empty set.
    init() {}

    /// The set holding `element`.
    init(_ element: Int) { insert(element) }

    /// Whether `element` is in the set.
    @inline(__always)
    func contains(_ element: Int) -> Bool {
        element >= 0 && element < 64 ? bits & (1 << UInt64(element)) != 0 : overflow.contains(element)
    }

    /// Whether the set has no element.
    var isEmpty: Bool { bits == 0 && overflow.isEmpty }

    /// Adds `element`.
    @inline(__always)
    mutating func insert(_ element: Int) {
        if element >= 0 && element < 64 { bits |= 1 << UInt64(element) } else { overflow.insert(element) }
    }

    /// Adds every element of `other`.
    mutating func formUnion(_ other: SmallIntSet) {
        bits |= other.bits
        if !other.overflow.isEmpty { overflow.formUnion(other.overflow) }
    }

    /// This set with every element of `other`.
    func union(_ other: SmallIntSet) -> SmallIntSet {
        var u = self
        u.formUnion(other)
        return u
    }
}

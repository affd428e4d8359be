// CopyOnWriteBox: the one shared box behind the model's copy-on-write values (`Record`,
// `Schema`, `RecordTypeSchema`): a copy of the value retains one reference instead of every
// string and collection inside it, and a write copies the box only when another value shares it.

/// A class holding a value's contents. Written only through ``unique(_:)`` — that is, while no
/// other value shares it — so a shared box is never written and may cross threads.
@usableFromInline
final class CopyOnWriteBox<Contents>: @unchecked Sendable {
    // @unchecked: `contents` is written only through `unique(_:)`, when the box is not shared.
    @exclusivity(unchecked) @usableFromInline var contents: Contents

    /// A box holding `contents`.
    @usableFromInline init(_ contents: Contents) { self.contents = contents }

    /// `box`, first replaced by a copy when another value shares it.
    @inlinable @inline(__always)
    static func unique(_ box: inout CopyOnWriteBox<Contents>) -> CopyOnWriteBox<Contents> {
        if !isKnownUniquelyReferenced(&box) { box = CopyOnWriteBox(box.contents) }
        return box
    }
}

/// Boxes compare by their contents (a box is equal to itself without comparing), so a value
/// holding only its box gets its equality and hashing synthesized from the contents'.
extension CopyOnWriteBox: Equatable where Contents: Equatable {
    @usableFromInline
    static func == (a: CopyOnWriteBox, b: CopyOnWriteBox) -> Bool { a === b || a.contents == b.contents }
}

extension CopyOnWriteBox: Hashable where Contents: Hashable {
    @usableFromInline
    func hash(into hasher: inout Hasher) { contents.hash(into: &hasher) }
}

// CopyOnWriteBox: the one shared box behind the model's copy-on-write values (`Record`,
// `Schema`, `RecordTypeSchema`): a copy of the value retains one reference instead of every
// string and collection inside it, and a write copies the box only when another value shares it.
// `CopyOnWrite` puts the same box at the service of the package's other modules (the indexes
// and the embedded engine's tables), so none of them copies its parts field by field.

import Synchronization

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

/// A value's parts behind one shared box, copied on write: copying the value retains one
/// reference instead of every collection and tree in the parts, and the first write to a shared
/// value copies the parts (one retain of each), as copying the value would have. The parts are
/// a plain struct, so the copy needs no hand-written list of their fields.
///
/// ```swift
/// struct Index {
///     struct Parts { var rows: [Int] = [] }
///     var parts = CopyOnWrite(Parts())
///     mutating func add(_ row: Int) { parts.rows.append(row) }   // copies shared parts first
/// }
/// ```
///
/// A part is read and written by its name (`parts.rows`, a member looked up through a key path
/// the optimizer folds into a direct access), so the value does not list an accessor per part.
///
/// Public, not `package`, though only the package's own values use it (the indexes, the
/// embedded engine's tables): Swift 6.3 does not inline a `package` declaration's `@inlinable`
/// body into another module, and an accessor that is not inlined costs a call on every row.
@dynamicMemberLookup
public struct CopyOnWrite<Contents> {
    @usableFromInline var box: CopyOnWriteBox<Contents>

    /// Parts in a box of their own.
    @inlinable public init(_ contents: Contents) { box = CopyOnWriteBox(contents) }

    /// The parts: read in place; a write first copies them when another value shares them.
    @inlinable public var contents: Contents {
        _read { yield box.contents }
        _modify { yield &CopyOnWriteBox.unique(&box).contents }
    }

    /// One part: read in place; a write first copies the parts when another value shares them.
    @inlinable public subscript<Part>(dynamicMember part: WritableKeyPath<Contents, Part>) -> Part {
        _read { yield box.contents[keyPath: part] }
        _modify { yield &CopyOnWriteBox.unique(&box).contents[keyPath: part] }
    }
}

/// Sendable when its parts are: the box is written only while no other value shares it.
extension CopyOnWrite: Sendable where Contents: Sendable {}

/// Parts that may be made on their first use, then held and copied on write as ``CopyOnWrite``
/// holds its parts: a value whose parts are costly to make and often never read (a table's
/// indexes in a process that only looks records up by name) defers making them to the first
/// read or write of any part.
///
/// Made once, whichever thread reads first: the others wait for it. After that a read costs one
/// acquiring load of a flag beside the parts. The maker is dropped once it has run, with what it
/// captured.
@dynamicMemberLookup
public struct DeferredCopyOnWrite<Contents: Sendable>: Sendable {
    @usableFromInline var box: DeferredBox<Contents>

    /// Parts made now.
    public init(_ contents: Contents) { box = DeferredBox(contents) }

    /// Parts made by `make` on their first use. `placeholder` fills their place until then and is
    /// never read (any value of the type will do; a cheap one is best).
    public init(placeholder: Contents, deferred make: @escaping @Sendable () -> Contents) {
        box = DeferredBox(placeholder, make)
    }

    /// Whether the parts have been made (false only before their first use).
    public var isMade: Bool { box.ready.load(ordering: .acquiring) }

    /// The parts, made first if they are not yet: read in place; a write first copies them when
    /// another value shares them.
    @inlinable public var contents: Contents {
        _read { yield box.made }
        _modify {
            box.makeIfNeeded()
            if !isKnownUniquelyReferenced(&box) { box = DeferredBox(box.made) }
            yield &box.contents
        }
    }

    /// One part, as ``contents`` reads and writes the whole.
    @inlinable public subscript<Part>(dynamicMember part: WritableKeyPath<Contents, Part>) -> Part {
        _read { yield box.made[keyPath: part] }
        _modify { yield &contents[keyPath: part] }
    }
}

/// The box behind ``DeferredCopyOnWrite``: the contents (a placeholder until made), whether they
/// are made, and (until they are) their maker behind a lock.
@usableFromInline
final class DeferredBox<Contents: Sendable>: @unchecked Sendable {
    // @unchecked: `contents` is written once by `makeIfNeeded` under `maker`'s lock before
    // `ready` is stored with release ordering, and read only after `ready` is loaded true with
    // acquire ordering; after that it is written only through a unique reference (copy on write).
    @exclusivity(unchecked) @usableFromInline var contents: Contents
    @usableFromInline let ready: Atomic<Bool>
    let maker: Mutex<(@Sendable () -> Contents)?>

    @usableFromInline init(_ contents: Contents) {
        self.contents = contents
        ready = Atomic(true)
        maker = Mutex(nil)
    }

    init(_ placeholder: Contents, _ make: @escaping @Sendable () -> Contents) {
        contents = placeholder
        ready = Atomic(false)
        maker = Mutex(make)
    }

    /// The contents, made first if they are not yet.
    @inlinable var made: Contents {
        _read {
            makeIfNeeded()
            yield contents
        }
    }

    @inlinable @inline(__always) func makeIfNeeded() {
        if !ready.load(ordering: .acquiring) { make() }
    }

    /// Runs the maker unless another thread has (its callers wait on the lock meanwhile).
    @usableFromInline @inline(never) func make() {
        maker.withLock { maker in
            guard let m = maker else { return }
            contents = m()
            maker = nil
            ready.store(true, ordering: .releasing)
        }
    }
}

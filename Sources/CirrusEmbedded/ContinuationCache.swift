// ContinuationCache: the live state of recent nearest-first queries between pages.
//
// A cursor alone is enough to continue a query (docs/cursor-format.md): the next page seeks to
// its position. For distance browsing that seek re-walks the R-tree nodes near the centre, so
// while nothing has been committed since a page was produced, its live iterator is kept here,
// keyed by the cursor handed out with it, and the next page simply goes on. Entries hold the
// publish version of the snapshot they came from and are used only on that same version; they
// are bounded in number and dropped oldest first. Purely an optimization: a miss costs a seek.
//
// A ring of the last 64 pages' states, not a dictionary: every nearest-first page stores its
// state, and a dictionary would hash its cursor (the whole query) to store it, then once more
// to drop the oldest. Storing is a slot write; taking compares the slots' fingerprints (the hash
// of the cursor's position alone), newest first, and a cursor only where they match — so a miss,
// which a page asked for again meets every time, costs no comparison of cursors.
// A cursor stored twice (a page asked for twice) is found in its newest slot first; both slots
// hold the same state, since a page's continuation depends on its query and position alone.

import CirrusFacade
import Foundation
import QueryExecution

/// The stream continuations of the last pages, owned by one container.
final class ContinuationCache: @unchecked Sendable {
    // @unchecked: `ring`, `fingerprints` and `next` are read and written only under `lock`.
    static let capacity = 64

    private struct Entry {
        var cursor: QueryCursor
        var version: UInt64
        var continuation: StreamContinuation
    }

    private let lock = NSLock()
    /// `capacity` slots once the first state is stored; `next` is the oldest (written next).
    private var ring: [Entry?] = []
    /// Each slot's fingerprint, apart: a scan reads these, never copying an entry (its cursor
    /// holds the whole query, whose references a copy retains).
    private var fingerprints: [Int] = []
    private var next = 0

    /// Remembers the state that continues after `cursor`, valid at `version`, in place of the
    /// oldest one kept.
    func put(_ cursor: QueryCursor, version: UInt64, _ c: StreamContinuation) {
        let entry = Entry(cursor: cursor, version: version, continuation: c)
        let fingerprint = cursor.position.hashValue
        lock.withLock {
            if ring.isEmpty {
                ring = Array(repeating: nil, count: Self.capacity)
                fingerprints = Array(repeating: 0, count: Self.capacity)
            }
            ring[next] = entry
            fingerprints[next] = fingerprint
            next = (next + 1) % Self.capacity
        }
    }

    /// The state that continues after `cursor` if it was taken at `version`; removes the entry.
    func take(_ cursor: QueryCursor, version: UInt64) -> StreamContinuation? {
        let fingerprint = cursor.position.hashValue
        return lock.withLock {
            for k in 0..<ring.count {
                let i = (next - 1 - k + 2 * Self.capacity) % Self.capacity
                guard fingerprints[i] == fingerprint, let e = ring[i], e.cursor == cursor else { continue }
                ring[i] = nil
                return e.version == version ? e.continuation : nil
            }
            return nil
        }
    }

    /// The states kept.
    var count: Int { lock.withLock { ring.reduce(0) { $0 + ($1 == nil ? 0 : 1) } } }
}

// ContinuationCache: the live state of recent nearest-first queries between pages.
//
// A cursor alone is enough to continue a query (docs/cursor-format.md): the next page seeks to
// its position. For distance browsing that seek re-walks the R-tree nodes near the centre, so
// while nothing has been committed since a page was produced, its live iterator is kept here,
// keyed by the cursor handed out with it, and the next page simply goes on. Entries hold the
// publish version of the snapshot they came from and are used only on that same version; they
// are bounded in number and dropped oldest first. Purely an optimization: a miss costs a seek.

import Foundation
import QueryExecution

/// A small LRU of stream continuations, owned by one container.
final class ContinuationCache: @unchecked Sendable {
    static let capacity = 64

    private let lock = NSLock()
    private var entries: [QueryCursor: (version: UInt64, continuation: StreamContinuation)] = [:]
    private var order: [QueryCursor] = []

    /// Remembers the state that continues after `cursor`, valid at `version`.
    func put(_ cursor: QueryCursor, version: UInt64, _ c: StreamContinuation) {
        lock.withLock {
            if entries.updateValue((version, c), forKey: cursor) == nil { order.append(cursor) }
            while order.count > Self.capacity { entries[order.removeFirst()] = nil }
        }
    }

    /// The state that continues after `cursor` if it was taken at `version`; removes the entry.
    func take(_ cursor: QueryCursor, version: UInt64) -> StreamContinuation? {
        lock.withLock {
            guard let e = entries.removeValue(forKey: cursor) else { return nil }
            order.removeAll { $0 == cursor }
            return e.version == version ? e.continuation : nil
        }
    }

    var count: Int { lock.withLock { entries.count } }
}

// ImportQueue: the bounded hand-off between an import's file reader (a thread of its own) and
// the import's batches on the connection (PostgresStore+Import.swift).

import CirrusFacade
import CirrusIO
import Foundation
import Indexes
import Logging
import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO
import RecordModel

/// The bounded queue between an import's file reader (a thread) and the import: the reader
/// waits while `depth` batches are ahead of the import; a failed import stops it.
final class ImportQueue: Sendable {
    /// Thrown in the reader when the import failed.
    struct Stopped: Error {}

    private let slots: DispatchSemaphore
    private let failed = NIOLockedValueBox(false)
    private let depth: Int

    init(depth: Int) {
        self.depth = depth
        slots = DispatchSemaphore(value: depth)
    }

    /// Waits for room (the reader's thread); throws once the import failed.
    func enter() throws {
        slots.wait()
        if failed.withLockedValue({ $0 }) {
            slots.signal()
            throw Stopped()
        }
    }

    /// A batch was imported: room for the next.
    func leave() { slots.signal() }

    /// The import failed: the reader stops at its next batch.
    func fail() {
        failed.withLockedValue { $0 = true }
        for _ in 0..<depth { slots.signal() }
    }
}

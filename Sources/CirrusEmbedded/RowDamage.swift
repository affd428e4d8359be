// RowDamage: base rows of a table that did not decode when a read met them. Mapped rows are
// trusted on the read path (block CRCs are checked by `verify` and repair, not on every read), so
// a damaged row is found only when read; it is then never skipped in silence: it is counted here
// and the call that met it — a query, a fetch — fails naming the file and offset
// (`EmbeddedDatabase.run`, `ContainerCore.current`), and the logger says so. Shared by the copies
// of one table (a reference in its storage).

import CirrusFacade
import Foundation
import RecordLog

/// The undecodable rows a table's reads met (see the file header). Thread-safe.
final class RowDamage: @unchecked Sendable {
    // @unchecked: `count` and `first` are touched only under `lock`.
    private let lock = NSLock()
    private var seen = 0
    private var first: LogError?

    /// Rows met so far that did not decode.
    var count: Int { lock.withLock { seen } }

    /// Counts a row that did not decode (`error` names its file and offset).
    func note(_ error: LogError) {
        lock.withLock {
            seen += 1
            if first == nil { first = error }
        }
    }

    /// The error of a call that met damaged rows of `recordType`: what and where, and what to do.
    func error(_ recordType: String, since before: Int) -> CirrusError {
        let (n, e) = lock.withLock { (seen - before, first) }
        return CirrusError(
            .internalError,
            "\(n) stored row\(n == 1 ? "" : "s") of \(recordType) could not be read (\(e.map { "\($0)" } ?? "damaged")); "
                + "nothing was left out in silence: `cirrus verify` names every damaged row and `cirrus repair` "
                + "salvages the rest")
    }
}

// Database+Embedded: what a database handle offers only on the embedded engine — a consistent
// snapshot of one record type's rows and indexes, in this process.

import CirrusFacade

extension Database {
    /// The embedded engine's database, when this is one (nil on another engine).
    var embedded: EmbeddedDatabase? { backend as? EmbeddedDatabase }

    /// A consistent view of one record type in this database: rows and indexes of one commit.
    /// Does not check access (call `checkCanRead(recordType:)` first). Nil on an engine other
    /// than the embedded one (its rows are not in this process).
    ///
    /// ```swift
    /// let snap = db.querySnapshot(recordType: "Place")
    /// snap?.rowCount
    /// ```
    public func querySnapshot(recordType: String) -> RecordTypeSnapshot? {
        embedded?.querySnapshot(recordType: recordType)
    }
}

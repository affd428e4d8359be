// TypeTable+Base: the indexes of a table whose rows live in a checkpoint's data segment.

import Indexes
import RecordLog
import RecordModel

extension TypeTable {
    /// The indexes of a base table. Built from the segment's rows (decoding each once).
    static func baseIndexes(_ base: BaseTable, schema: RecordTypeSchema, nodeSize: Int) throws(CirrusError) -> RecordIndexes {
        var rows: [(RowID, Record)] = []
        rows.reserveCapacity(base.rows.count)
        for i in 0..<base.rows.count {
            do {
                rows.append((RowID(truncatingIfNeeded: i), ContainerCore.apiForm(try base.rows.record(i))))
            } catch {
                throw CirrusError(.internalError, "\(error)")
            }
        }
        return RecordIndexes(schema: schema, rows: rows, nodeSize: nodeSize)
    }
}

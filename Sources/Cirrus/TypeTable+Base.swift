// TypeTable+Base: the indexes of a table whose rows live in a checkpoint's data segments — mapped
// from its index segment, each missing one built from the rows — and the sections a checkpoint
// writes for a table.

import Indexes
import RecordLog
import RecordModel

extension TypeTable {
    /// The indexes of a base table: the index segment's sections mapped (nothing decoded); an
    /// index the segment lacks (added to the schema since, or damaged) is built from the rows.
    static func baseIndexes(
        _ base: BaseTable, schema: RecordTypeSchema, nodeSize: Int
    ) throws(CirrusError) -> RecordIndexes {
        var sections: [String: SectionBytes] = [:]
        if let seg = base.indexes {
            for s in seg.sections {
                if let b = seg.section(s.name) { sections[s.name] = SectionBytes(b, keepAlive: seg.file, name: s.name) }
            }
        }
        return RecordIndexes(schema: schema, baseRowCount: base.rows.count, sections: sections, nodeSize: nodeSize) {
            var rows: [(RowID, Record)] = []
            rows.reserveCapacity(base.rows.count)
            for (i, r) in CheckpointRows(key: base.key, rows: base.rows) {
                rows.append((RowID(truncatingIfNeeded: i), ContainerCore.apiForm(r)))
            }
            return rows
        }
    }
}

extension ContainerCore {
    /// The index sections of a table being checkpointed, built from its rows in row order.
    static func indexSections(
        _ rows: CheckpointRows, schema: RecordTypeSchema?, nodeSize: Int
    ) -> [(name: String, bytes: [UInt8])] {
        guard let schema else { return [] }
        return RecordIndexes.encodeSections(
            schema: schema, rows: rows.lazy.map { (RowID(truncatingIfNeeded: $0.0), apiForm($0.1)) })
    }
}

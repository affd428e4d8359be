// TypeTable+Base: the indexes of a table whose rows live in a checkpoint's data segments — mapped
// from its index segment, each missing one built from the rows — and the sections a checkpoint
// writes for a table.

import CirrusFacade
import Foundation
import Indexes
import RecordLog
import RecordModel
import Synchronization

extension TypeTable {
    /// The indexes of a base table: each layer's index segment mapped (nothing decoded); an
    /// index some layer lacks (added to the schema since, or damaged) is built from the live rows.
    /// The layers' entries of dead rows are still in the mapped sections: `removeDeadRows` takes
    /// them out.
    static func baseIndexes(_ base: BaseTable, schema: RecordTypeSchema, nodeSize: Int) -> RecordIndexes {
        var layers: [IndexLayer] = []
        for l in base.layers {
            var sections: [String: SectionBytes] = [:]
            var dead: [String: SectionBytes] = [:]
            if let seg = l.indexes {
                for s in seg.sections {
                    guard let b = seg.section(s.name) else { continue }
                    if s.name.hasPrefix(BaseLayer.deadSectionPrefix) {
                        let name = String(s.name.dropFirst(BaseLayer.deadSectionPrefix.count))
                        dead[name] = SectionBytes(b, keepAlive: seg.file, name: s.name)
                    } else {
                        sections[s.name] = SectionBytes(b, keepAlive: seg.file, name: s.name)
                    }
                }
            }
            layers.append(IndexLayer(rowCount: l.rows.count, sections: sections, dead: l.dead, deadSections: dead))
        }
        return RecordIndexes(schema: schema, layers: layers, nodeSize: nodeSize) {
            var rows: [(RowID, Record)] = []
            rows.reserveCapacity(base.rows.liveCount)
            for l in base.layers {
                for (i, r) in CheckpointRows(key: base.key, rows: l.rows, start: l.start) where base.rows.isLive(i) {
                    rows.append((RowID(truncatingIfNeeded: i), ContainerCore.apiForm(r)))
                }
            }
            return rows
        }
    }

    /// Takes the base's dead rows (superseded or deleted in a newer layer) out of `indexes`, whose
    /// mapped layers still hold their entries. The layers' `dead/` index sections say what those
    /// rows had indexed, so nothing is decoded; layers written without them (an older version)
    /// have each dead row decoded once instead. (The row table marks them removed itself.)
    static func removeDeadRows(_ base: BaseTable, from indexes: inout RecordIndexes, damage: RowDamage) {
        guard base.rows.dead.count > 0, !indexes.deadRowsRemoved else { return }
        var changes: [RowChange] = []
        var seen = RowBitmap()
        for l in base.layers {
            for r in l.dead where !seen.contains(Int(r)) {
                seen.insert(Int(r))
                // A dead row that does not decode cannot be taken out of the indexes by its values:
                // its entries stay, pointing at a row every read skips (it is removed); counted.
                do {
                    changes.append(.delete(r, ContainerCore.apiForm(try base.rows.record(Int(r)))))
                } catch {
                    damage.note(error)
                }
            }
        }
        indexes.apply(changes)
    }

    /// The warnings for the index segments of `base` that did not open at their first use (the
    /// store reports those it opened itself), each naming the file and the offset.
    static func segmentWarnings(_ base: BaseTable) -> [OpenWarning] {
        base.layers.compactMap { l in
            l.indexSegment.openError.map { OpenWarning($0, consequence: RecordStore.indexesRebuilt(base.key)) }
        }
    }

    /// The warnings for the index sections of `base` that failed their checks (each was rebuilt
    /// from the rows), naming the segment file and the offset.
    static func warnings(_ damaged: [DamagedIndexSection], _ base: BaseTable) -> [OpenWarning] {
        damaged.map { d in
            let seg = d.layer < base.layers.count ? base.layers[d.layer].indexes : nil
            let at = seg?.sections.first { $0.name == d.error.section }?.offset ?? 0
            return OpenWarning(
                path: seg?.file.path ?? "", offset: at + d.error.offset,
                reason: "index section '\(d.error.section)': \(d.error.reason)",
                consequence: "the index is rebuilt from the rows of \(base.key)")
        }
    }
}

/// The warnings about a container's damaged index sections, from whenever a table's indexes are
/// made — at open, or at their first use when deferred (`ContainerOptions.indexesOnFirstUse`):
/// kept for `openReport`, and each handed to `note` (the store marks the segment for repair; the
/// logger says it). Thread-safe: deferred indexes are made by whichever reader uses them first.
final class IndexWarnings: Sendable {
    private let list = Mutex<[OpenWarning]>([])
    private let note: @Sendable (OpenWarning) -> Void

    init(note: @escaping @Sendable (OpenWarning) -> Void) { self.note = note }

    /// Every warning so far, oldest first.
    var all: [OpenWarning] { list.withLock { $0 } }

    /// Keeps and notes `warnings`.
    func add(_ warnings: [OpenWarning]) {
        guard !warnings.isEmpty else { return }
        list.withLock { $0 += warnings }
        for w in warnings { note(w) }
    }
}

extension ContainerCore {
    /// The index sections of a table being checkpointed, built from its rows in row order and
    /// handed to `add` as each is built; throws when `cancel` is set while they are built (the
    /// checkpoint's files are then removed).
    static func indexSections(
        _ rows: CheckpointRows, schema: RecordTypeSchema?, cancel: CheckpointCancel? = nil,
        into add: (String, [UInt8]) throws -> Void
    ) throws {
        guard let schema else { return }
        // Large tables are read in parts, on all cores.
        let parts = rows.parts(ProcessInfo.processInfo.activeProcessorCount).map {
            $0.lazy.map { (RowID(truncatingIfNeeded: $0.0), apiForm($0.1)) }
        }
        // Rows from a segment can be read again: a large table's sections are built in passes
        // that each hold a bounded share of the entries (the 10M-record import in ≤ 2 GB).
        let done = try RecordIndexes.encodeSections(
            schema: schema, parts: parts, columnsFrom: rows.layerStart, rows: rows.count,
            isCancelled: { cancel?.isSet ?? false }, emit: add)
        if !done { throw CheckpointCancel.Cancelled() }
    }

    /// The section encoder of a checkpoint under `schema` (its record types' indexes).
    static func sectionEncoder(_ schema: Schema, cancel: CheckpointCancel? = nil) -> SectionEncoder {
        { rows, add in
            try indexSections(rows, schema: schema.recordTypes[rows.key.recordType], cancel: cancel, into: add)
        }
    }
}

// TypeTable: the rows of one record type in one database — compact RowIDs, the current record
// of each row, RecordID → RowID — and the type's RecordIndexes, kept together so a snapshot of
// the table is a snapshot of rows and indexes from the same commit. Rows below `baseCount` live
// in the last checkpoint's mapped data segment; the rest (the delta) in memory.
//
// Copy-on-write throughout: records live boxed in pages of 64 rows (PagedArray) and the id map in
// 512 shards (ShardedMap), so the first write after a reader took a snapshot copies the touched
// page/shard (64 references) and the small page/shard tables, not every row. RowIDs are assigned in RecordID order by the bulk build at
// open and then from a counter (freed rows are not reused until the next open or rebuild).

import CirrusFacade
import CirrusIO
import Indexes
import QueryExecution
import RecordLog
import RecordModel

/// A delta row's record behind one reference: a page copied after a snapshot (copy-on-write)
/// retains each of its rows once, instead of every string and dictionary of every record.
final class DeltaRecord: Sendable {
    let record: Record
    init(_ record: Record) { self.record = record }
}

/// The rows and indexes of one record type in one database.
///
/// Rows `0..<baseCount` are the checkpoint's (`base`, mapped, decoded on demand); rows from
/// `baseCount` on are the delta's (decoded records in `pages`, at `row - baseCount`). A base row
/// that is deleted is marked in `baseRemoved`; one that is updated comes back as a new delta row,
/// or — when the update changes only ordered-index fields — keeps its row with the new record
/// in `overlay` (the ordered indexes hide its mapped entries and hold the new ones in their
/// delta), so the indexes never need to change a mapped entry.
struct TypeTable: Sendable {
    /// The table's parts behind one reference, copied on write: snapshots and fetches copy
    /// tables all the time, and copying the parts themselves retained every index, map and page
    /// table in them (a fifth of a point lookup). The first change to a shared table copies the
    /// parts, as copying the struct did.
    struct Storage: Sendable {
        let recordType: String
        let owner: String
        let nodeSize: Int
        var schema: RecordTypeSchema?
        var base: BaseTable?
        /// Decoded base rows (shared by every snapshot of this base).
        var cache: RecordCache?
        var baseRemoved = RowBitmap()
        /// Base rows updated in place (the update changed only ordered-index fields): their
        /// current record by id, and the rows that have one. The row keeps its id and its text and
        /// spatial entries; `RecordIndexes.canUpdateInPlace` decides.
        var overlay = ShardedMap<DeltaRecord>()
        var overlaid = RowBitmap()
        /// Delta records by `row - baseCount`.
        var pages = PagedArray<DeltaRecord?>(fill: nil, pageShift: 6)
        var deltaByID = ShardedMap<RowID>()
        var indexes: RecordIndexes
        var nextRow: RowID = 0
        var deltaCount = 0
        /// Charges of reads against this base's extra layers (nil: one layer, or no merges).
        let mergeMeter: ReadMergeMeter?
        /// Rows of the base that did not decode when read, shared by every copy of the table.
        let damage: RowDamage
    }

    /// The parts, each read and written by name (`parts.indexes`); a write copies shared parts
    /// first.
    var parts: CopyOnWrite<Storage>

    var recordType: String { parts.contents.recordType }
    /// The zone owner as stored (the database).
    var owner: String { parts.contents.owner }
    var nodeSize: Int { parts.contents.nodeSize }
    /// The undecodable rows this table's reads met (shared by its copies).
    var damage: RowDamage { parts.contents.damage }

    /// Charges of reads against the base's extra layers (nil: one layer, or no merges).
    var mergeMeter: ReadMergeMeter? { parts.contents.mergeMeter }

    var baseCount: Int { parts.contents.base?.rows.count ?? 0 }
    var liveCount: Int { baseCount - parts.contents.baseRemoved.count + parts.contents.deltaCount }

    /// Whether ascending rows are ascending record ids: the rows are one base layer in one zone
    /// (a layer is sorted by zone, then record name: record-id order within a zone) and no row
    /// was added since.
    var rowsInIDOrder: Bool {
        guard let b = parts.contents.base, b.rows.layers.count == 1, Int(parts.contents.nextRow) == b.rows.count else {
            return false
        }
        return b.rows.singleZoneName != nil
    }

    /// Whether every base layer lists its rows in record-id order (all of a layer's rows in one
    /// zone: a layer sorts by zone, then record name) and no row was added since.
    var layersInIDOrder: Bool {
        guard let b = parts.contents.base, Int(parts.contents.nextRow) == b.rows.count else { return false }
        return b.rows.layers.allSatisfy { $0.rows.singleZoneName != nil }
    }

    /// Builds the table from every live record of the type (bulk, sorted by record id).
    init(recordType: String, owner: String, schema: RecordTypeSchema?, records: [Record], nodeSize: Int) {
        // Sort positions, not records: moving a Record is many retains.
        let order = records.indices.sorted { records[$0].recordID < records[$1].recordID }
        var rows: [(RowID, Record)] = []
        rows.reserveCapacity(order.count)
        var pages = PagedArray<DeltaRecord?>(fill: nil, pageShift: 6)
        var deltaByID = ShardedMap<RowID>()
        for (i, k) in order.enumerated() {
            let r = records[k]
            let row = RowID(truncatingIfNeeded: i)
            pages.ensure(i)
            pages[i] = DeltaRecord(r)
            deltaByID[r.recordID] = row
            rows.append((row, r))
        }
        parts = CopyOnWrite(
            Storage(
                recordType: recordType, owner: owner, nodeSize: nodeSize, schema: schema, pages: pages,
                deltaByID: deltaByID,
                indexes: RecordIndexes(
                    schema: schema ?? RecordTypeSchema(name: recordType, grants: []), rows: rows, nodeSize: nodeSize),
                nextRow: RowID(truncatingIfNeeded: order.count), deltaCount: order.count, mergeMeter: nil,
                damage: RowDamage()))
    }

    /// A table over a checkpoint's mapped rows, with an empty delta: no row is decoded here. With
    /// `readMergeBudget` and more than one layer, its reads are charged for the extra layers
    /// (`ReadMergeMeter`). Its indexes are mapped from the layers' index segments now, or with
    /// `deferIndexes` at their first use (`RecordIndexes.init(recordType:deferred:)`); either
    /// way the sections found damaged then go to `warnings`.
    init(
        base: BaseTable, schema: RecordTypeSchema?, nodeSize: Int, cacheSize: Int = 0, readMergeBudget: Double? = nil,
        deferIndexes: Bool = false, warnings: IndexWarnings? = nil
    ) {
        let damage = RowDamage()
        let indexSchema = schema ?? RecordTypeSchema(name: base.key.recordType, grants: [])
        let make: @Sendable () -> RecordIndexes = {
            var indexes = Self.baseIndexes(base, schema: indexSchema, nodeSize: nodeSize)
            warnings?.add(Self.segmentWarnings(base) + Self.warnings(indexes.damaged, base))
            Self.removeDeadRows(base, from: &indexes, damage: damage)
            return indexes
        }
        parts = CopyOnWrite(
            Storage(
                recordType: base.key.recordType, owner: base.key.owner, nodeSize: nodeSize, schema: schema, base: base,
                cache: RecordCache(capacity: min(cacheSize, base.rows.count), tableRows: base.rows.count),
                baseRemoved: base.rows.dead,
                indexes: deferIndexes ? RecordIndexes(recordType: base.key.recordType, deferred: make) : make(),
                nextRow: RowID(truncatingIfNeeded: base.rows.count),
                mergeMeter: ReadMergeMeter(
                    key: base.key, layers: base.layers.count, rows: base.rows.count, factor: readMergeBudget),
                damage: damage))
    }

    /// Takes `new` as the type's schema. Only what the indexes are built from (fields and their
    /// options, system-field options) needs a rebuild; a change of grants alone is adopted in
    /// place. Returns whether the table was rebuilt.
    mutating func adopt(schema new: RecordTypeSchema?) -> Bool {
        if parts.schema == new { return false }
        if Self.sameIndexing(parts.schema, new) {
            parts.schema = new
            return false
        }
        rebuild(schema: new)
        return true
    }

    /// Whether two schemas of a type ask for the same indexes (they differ at most in grants).
    static func sameIndexing(_ a: RecordTypeSchema?, _ b: RecordTypeSchema?) -> Bool {
        guard var a, var b else { return a == nil && b == nil }
        a.grants = []
        b.grants = []
        return a == b
    }

    /// Rebuilds with a new schema (new field in development, promotion, import): compacts rows
    /// into an in-memory table until the next checkpoint writes it back to a segment.
    mutating func rebuild(schema: RecordTypeSchema?) {
        self = TypeTable(recordType: recordType, owner: owner, schema: schema, records: liveRecords, nodeSize: nodeSize)
    }

    mutating func setDelta(_ row: RowID, _ r: Record?) {
        let d = Int(row) - baseCount
        parts.pages.ensure(d)
        parts.pages[d] = r.map(DeltaRecord.init)
    }

    /// Applies saves (old, new) and deletions (old, nil) of this type; returns the changes.
    mutating func apply(_ changes: [(old: Record?, new: Record?)]) {
        var rowChanges: [RowChange] = []
        rowChanges.reserveCapacity(changes.count)
        for c in changes {
            // The row table is the truth about what the indexes hold: an update of a row it does
            // not have is an insert, an insert of a row it has is an update.
            var change = c
            let oldRow = (c.old ?? c.new).flatMap { row(for: $0.recordID) }
            if c.old != nil, oldRow == nil { change.old = nil }
            if c.old == nil, let row = oldRow { change.old = record(row) }
            switch (change.old, change.new, oldRow) {
            case (let old?, let new?, let row?) where Int(row) >= baseCount:
                setDelta(row, new)
                rowChanges.append(.update(row, old: old, new: new))
            case (let old?, let new?, let row?) where parts.indexes.canUpdateInPlace(old, new):
                // A base row whose update changes only ordered-index fields keeps its row.
                parts.overlay[new.recordID] = DeltaRecord(new)
                parts.overlaid.insert(Int(row))
                rowChanges.append(.update(row, old: old, new: new))
            case (let old?, nil, let row?):
                remove(row, old.recordID)
                rowChanges.append(.delete(row, old))
            case (let old, let new?, let row):
                if let old, let row {
                    // A base row cannot change in place: it leaves, the new version gets a delta row.
                    remove(row, old.recordID)
                    rowChanges.append(.delete(row, old))
                }
                if parts.nextRow == RowID.max {
                    // Row ids exhausted by churn: compact now (rare; ids are dense after a rebuild).
                    parts.indexes.apply(rowChanges)
                    rowChanges = []
                    rebuild(schema: parts.schema)
                }
                let row = parts.nextRow
                parts.nextRow += 1
                setDelta(row, new)
                parts.deltaByID[new.recordID] = row
                parts.deltaCount += 1
                rowChanges.append(.insert(row, new))
            default: break
            }
        }
        parts.indexes.apply(rowChanges)
    }

    /// Forgets a row (base: marked removed; delta: cleared).
    mutating func remove(_ row: RowID, _ id: RecordID) {
        if Int(row) < baseCount {
            parts.baseRemoved.insert(Int(row))
            if parts.overlaid.contains(Int(row)) { parts.overlay[id] = nil }
        } else {
            setDelta(row, nil)
            parts.deltaByID[id] = nil
            parts.deltaCount -= 1
        }
    }
}

// RecordTypeSnapshot: a consistent view of one record type in one database — the table's rows
// and indexes from one commit — as the executor's QuerySnapshot. Its reads are TypeTable's read
// path (TypeTable+Read.swift).

import CirrusFacade
import CirrusIO
import Indexes
import QueryExecution
import RecordLog
import RecordModel

/// A consistent view of one record type in one database, for query execution: the indexes and
/// the rows come from the same commit.
///
/// RowIDs are valid within a snapshot. A record usually keeps its row from commit to commit,
/// but a rebuild (schema change of the type) or reopening renumbers rows: anything that
/// outlives the snapshot (a cursor) must hold record ids, not rows.
///
/// ```swift
/// let snap = db.querySnapshot(recordType: "Place")
/// for row in snap.allRows() { if let r = snap.record(row) { print(r.recordID.recordName) } }
/// snap.indexes.catalog.kinds(for: .user("name"))   // [.ordered, .text]
/// ```
public struct RecordTypeSnapshot: Sendable {
    /// The snapshot's parts behind one reference: executors copy the snapshot freely (it is
    /// passed and captured per row), which must cost one retain, not one per field.
    final class Storage: Sendable {
        let recordType: String
        let schema: RecordTypeSchema?
        let environment: Environment
        let indexes: RecordIndexes
        let table: TypeTable?

        init(
            recordType: String, schema: RecordTypeSchema?, environment: Environment, indexes: RecordIndexes,
            table: TypeTable?
        ) {
            self.recordType = recordType
            self.schema = schema
            self.environment = environment
            self.indexes = indexes
            self.table = table
        }
    }
    let storage: Storage
    /// The container's publish version this snapshot was taken at (equal versions, equal data).
    var version: UInt64 = 0

    /// The record type whose rows this snapshot holds.
    public var recordType: String { storage.recordType }
    /// The type's schema in this environment; nil if the type has no schema yet.
    public var schema: RecordTypeSchema? { storage.schema }
    /// The container's environment (development answers any query the schema can type;
    /// production requires the index options).
    public var environment: Environment { storage.environment }
    /// Every index the schema asks for, over exactly the rows of this snapshot.
    public var indexes: RecordIndexes { storage.indexes }
    var table: TypeTable? { storage.table }

    init(recordType: String, environment: Environment, table: TypeTable?, schema: RecordTypeSchema?, nodeSize: Int) {
        storage = Storage(
            recordType: recordType, schema: table?.parts.schema ?? schema, environment: environment,
            indexes: table?.parts.indexes
                ?? RecordIndexes(
                    schema: schema ?? RecordTypeSchema(name: recordType, grants: []), rows: [], nodeSize: nodeSize),
            table: table)
    }

    /// Number of live records of the type in the database.
    public var rowCount: Int { storage.table?.liveCount ?? 0 }

    /// The current version of the record in `row`; nil if the row was deleted or never existed.
    /// Record ids use the API form (zone owner `__defaultOwner__`).
    public func record(_ row: RowID) -> Record? { storage.table?.record(row) }

    /// `record(row)`; a result of more than 1/256 of the record cache's capacity is a bulk
    /// read, whose rows are not added to the cache of a table more than four times its size
    /// (`RecordCache.fills(resultRows:)`).
    public func record(_ row: RowID, inResultOf resultRows: Int) -> Record? {
        storage.table?.record(row, resultRows: resultRows)
    }

    /// `record(row, inResultOf: resultRows)` of each of `rows` in order, with its position,
    /// skipping rows without a record; the table's parts are read once, not per row.
    public func forEachRecord(_ rows: [RowID], inResultOf resultRows: Int, _ body: (Int, Record) -> Void) {
        storage.table?.forEachRecord(rows, resultRows: resultRows, body)
    }

    /// The record id of `row` (API form), read from the row's key without decoding the record.
    public func recordID(_ row: RowID) -> RecordID? { storage.table?.recordID(row) }

    /// The row of a record of this type, nil if none.
    public func row(for id: RecordID) -> RowID? {
        storage.table?.row(for: id.zoneID.ownerName == ZoneID.defaultOwnerName ? id : ContainerCore.apiID(id))
    }

    /// Every live row, sorted ascending.
    public func allRows() -> [RowID] { storage.table?.allRows() ?? [] }
}

extension RecordTypeSnapshot: QuerySnapshot {
    /// The type's schema, as `schema` (nil if the type has no schema yet).
    public var typeSchema: RecordTypeSchema? { schema }

    /// Where row order is record-id order: all rows (`TypeTable.rowsInIDOrder`), or each base
    /// layer's with no row added since (`TypeTable.layersInIDOrder`).
    public var idOrder: RowIDOrder {
        guard let t = storage.table else { return [] }
        var order: RowIDOrder = []
        if t.rowsInIDOrder { order.insert(.rows) }
        if t.layersInIDOrder { order.insert(.layers) }
        return order
    }

    /// Whether row `a`'s record id comes before row `b`'s, from their key bytes when both are
    /// base rows (`BaseRows.compareIDs`), else from their ids.
    public func rowPrecedes(_ a: RowID, _ b: RowID) -> Bool {
        if let base = storage.table?.parts.base, Int(a) < base.rows.count, Int(b) < base.rows.count {
            return base.rows.compareIDs(Int(a), Int(b)) < 0
        }
        guard let y = recordID(b) else { return false }
        guard let x = recordID(a) else { return true }
        return x < y
    }

    /// The record of `row` with at least the user fields in `fields`; base rows are decoded
    /// partly (see `TypeTable.record(_:fields:)`).
    public func record(_ row: RowID, fields: Set<String>) -> Record? { storage.table?.record(row, fields: fields) }

    /// Starts loading the records of `rows`: cached boxes, or mapped bytes (`TypeTable.prefetchRecords`).
    public func prefetchRecords(_ rows: ArraySlice<RowID>) { storage.table?.prefetchRecords(rows) }

    /// A reader of the selected fields: base rows are read from the layers' columns or their
    /// mapped bytes without building a record (see `TypeTable.values(_:of:columns:into:)`).
    public func valueReader(_ selection: FieldSelection) -> any RowValueReader {
        TableValueReader(table: storage.table, selection: selection)
    }

    /// The first `limit` live rows of `rows` (ascending) in record-id order, in `zone` (all when
    /// nil), after `after` (from the start when nil); base rows are read in place (see
    /// `TypeTable.firstRowsByID`).
    public func firstRowsByID(_ rows: [RowID], after: RecordID?, zone: ZoneID?, limit: Int) -> [RowID] {
        guard let table = storage.table else { return [] }
        return table.firstRowsByID(rows, after: after, zone: zone, limit: limit) {
            idOrderedRows(rows, after: after, zone: zone, limit: limit)
        }
    }
}

/// `RecordTypeSnapshot`'s `RowValueReader`: the selection's columns are found once, when the
/// reader is made (`RecordIndexes.columnReader`), not for every row.
public struct TableValueReader: RowValueReader {
    let table: TypeTable?
    let selection: FieldSelection
    let columns: ColumnReader?

    init(table: TypeTable?, selection: FieldSelection) {
        self.table = table
        self.selection = selection
        columns = table?.parts.indexes.columnReader(selection)
    }

    /// The selected fields of `row` (see `TypeTable.values(_:of:columns:into:)`).
    public func values(_ row: RowID, into out: inout [FieldValue?]) -> Bool {
        table?.values(row, of: selection, columns: columns, into: &out) ?? false
    }

    /// Starts loading the selected fields' column slots (or the rows' entries).
    public func prefetch(_ rows: ArraySlice<RowID>) { table?.prefetch(rows, columns: columns) }
}

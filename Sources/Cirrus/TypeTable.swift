// TypeTable: the rows of one record type in one database — compact RowIDs, the current record
// of each row, RecordID → RowID — and the type's RecordIndexes, kept together so a snapshot of
// the table is a snapshot of rows and indexes from the same commit.
//
// Copy-on-write throughout: records live in pages of 1 024 rows and the id map in 1 024 shards, so
// the first write after a reader took a snapshot copies the touched page/shard and the small
// page/shard tables, not every row. RowIDs are assigned in RecordID order by the bulk build at
// open and then from a counter (freed rows are not reused until the next open or rebuild).

import Indexes
import RecordModel

/// Records by RowID in copy-on-write pages.
struct RowPages: Sendable {
    static let pageShift = 10
    static let pageSize = 1 << pageShift
    private(set) var pages: [[Record?]] = []

    var capacity: Int { pages.count << Self.pageShift }

    subscript(row: RowID) -> Record? {
        get {
            let i = Int(row)
            guard i < capacity else { return nil }
            return pages[i >> Self.pageShift][i & (Self.pageSize - 1)]
        }
        set {
            let i = Int(row)
            while i >= capacity { pages.append([Record?](repeating: nil, count: Self.pageSize)) }
            pages[i >> Self.pageShift][i & (Self.pageSize - 1)] = newValue
        }
    }
}

/// RecordID → RowID in copy-on-write shards.
struct RowMap: Sendable {
    static let shardCount = 1024
    private var shards = [[RecordID: RowID]](repeating: [:], count: RowMap.shardCount)

    private static func shard(_ id: RecordID) -> Int { id.hashValue & (shardCount - 1) }

    subscript(id: RecordID) -> RowID? {
        get { shards[Self.shard(id)][id] }
        set { shards[Self.shard(id)][id] = newValue }
    }
}

/// The rows and indexes of one record type in one database.
struct TypeTable: Sendable {
    let recordType: String
    var schema: RecordTypeSchema?
    var pages = RowPages()
    var rowByID = RowMap()
    var indexes: RecordIndexes
    var nextRow: RowID = 0
    var liveCount = 0
    let nodeSize: Int

    /// Builds the table from every live record of the type (bulk, sorted by record id).
    init(recordType: String, schema: RecordTypeSchema?, records: [Record], nodeSize: Int) {
        self.recordType = recordType
        self.schema = schema
        self.nodeSize = nodeSize
        // Sort positions, not records: moving a Record is many retains.
        let order = records.indices.sorted { records[$0].recordID < records[$1].recordID }
        var rows: [(RowID, Record)] = []
        rows.reserveCapacity(order.count)
        for (i, k) in order.enumerated() {
            let r = records[k]
            let row = RowID(truncatingIfNeeded: i)
            pages[row] = r
            rowByID[r.recordID] = row
            rows.append((row, r))
        }
        nextRow = RowID(truncatingIfNeeded: order.count)
        liveCount = order.count
        indexes = RecordIndexes(schema: schema ?? RecordTypeSchema(name: recordType, grants: []), rows: rows, nodeSize: nodeSize)
    }

    /// Every live record (row order).
    var liveRecords: [Record] {
        var out: [Record] = []
        out.reserveCapacity(liveCount)
        for p in pages.pages { for r in p { if let r { out.append(r) } } }
        return out
    }

    /// Rebuilds with a new schema (new field in development, promotion, import): compacts rows.
    mutating func rebuild(schema: RecordTypeSchema?) {
        self = TypeTable(recordType: recordType, schema: schema, records: liveRecords, nodeSize: nodeSize)
    }

    /// Applies saves (old, new) and deletions (old, nil) of this type; returns the changes.
    mutating func apply(_ changes: [(old: Record?, new: Record?)]) {
        var rowChanges: [RowChange] = []
        rowChanges.reserveCapacity(changes.count)
        for c in changes {
            // The row table is the truth about what the indexes hold: an update of a row it does
            // not have is an insert, an insert of a row it has is an update.
            var change = c
            if let o = c.old, rowByID[o.recordID] == nil { change.old = nil }
            if c.old == nil, let n = c.new, let row = rowByID[n.recordID] { change.old = pages[row] }
            switch (change.old, change.new) {
            case (let old?, let new?):
                if let row = rowByID[old.recordID] {
                    pages[row] = new
                    rowChanges.append(.update(row, old: old, new: new))
                }
            case (nil, let new?):
                if nextRow == RowID.max {
                    // Row ids exhausted by churn: compact now (rare; ids are dense after a rebuild).
                    indexes.apply(rowChanges)
                    rowChanges = []
                    rebuild(schema: schema)
                }
                let row = nextRow
                nextRow += 1
                pages[row] = new
                rowByID[new.recordID] = row
                liveCount += 1
                rowChanges.append(.insert(row, new))
            case (let old?, nil):
                if let row = rowByID[old.recordID] {
                    pages[row] = nil
                    rowByID[old.recordID] = nil
                    liveCount -= 1
                    rowChanges.append(.delete(row, old))
                }
            case (nil, nil): break
            }
        }
        indexes.apply(rowChanges)
    }
}

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
    public let recordType: String
    /// The type's schema in this environment; nil if the type has no schema yet.
    public let schema: RecordTypeSchema?
    public let environment: Environment
    /// Every index the schema asks for, over exactly the rows of this snapshot.
    public let indexes: RecordIndexes
    let table: TypeTable?

    init(recordType: String, environment: Environment, table: TypeTable?, schema: RecordTypeSchema?, nodeSize: Int) {
        self.recordType = recordType
        self.environment = environment
        self.table = table
        self.schema = table?.schema ?? schema
        self.indexes = table?.indexes
            ?? RecordIndexes(schema: schema ?? RecordTypeSchema(name: recordType, grants: []), rows: [], nodeSize: nodeSize)
    }

    /// Number of live records of the type in the database.
    public var rowCount: Int { table?.liveCount ?? 0 }

    /// The current version of the record in `row`; nil if the row was deleted or never existed.
    /// Record ids use the API form (zone owner `__defaultOwner__`).
    public func record(_ row: RowID) -> Record? { table?.pages[row] }

    /// The row of a record of this type, nil if none.
    public func row(for id: RecordID) -> RowID? {
        table?.rowByID[RecordID(recordName: id.recordName, zoneID: ZoneID(zoneName: id.zoneID.zoneName))]
    }

    /// Every live row, sorted ascending.
    public func allRows() -> [RowID] {
        guard let t = table else { return [] }
        var out: [RowID] = []
        out.reserveCapacity(t.liveCount)
        for (p, page) in t.pages.pages.enumerated() {
            for (i, r) in page.enumerated() where r != nil {
                out.append(RowID(truncatingIfNeeded: (p << RowPages.pageShift) + i))
            }
        }
        return out
    }
}

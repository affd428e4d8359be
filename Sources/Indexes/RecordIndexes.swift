// RecordIndexes: every index of one record type, derived from the schema, built in bulk from
// rows and maintained from committed changes; RecordIndexStore publishes them atomically.
//
// Which indexes exist (CKQUERY.md §3): a user field with QUERYABLE or SORTABLE and an ordered
// type (numbers, string, date, bytes, reference, and lists of them) gets an OrderedIndex (lists:
// one entry per element); every SEARCHABLE string or string-list field feeds the record type's
// one TextIndex (CloudKit's `allTokens` spans all searchable fields); a QUERYABLE Location gets a
// SpatialIndex. System fields are indexed only when `systemFieldOptions` declares them.
//
// Consistency: `RecordIndexes` is a value; copying it is an O(1) snapshot (every structure is
// copy-on-write). `RecordIndexStore` keeps the published value under a lock: a reader takes a
// snapshot (a copy under the lock), the single writer applies a whole batch to its own copy and
// publishes it with one swap. Readers therefore see the state before or after a batch, never a
// half-applied one, and never block the writer for longer than a copy of a few references.

import Foundation
import RecordModel

/// A field an index is built on: a user field by name or a system field.
public enum IndexedField: Sendable, Hashable, CustomStringConvertible {
    /// A user field, by name.
    case user(String)
    /// A system field.
    case system(SystemField)

    /// The field's query name.
    public var description: String {
        switch self {
        case .user(let n): n
        case .system(let f): f.rawValue
        }
    }
}

/// The kinds of index a field can have.
public enum IndexKind: String, Sendable, Hashable, CaseIterable {
    case ordered, text, spatial
}

/// One committed change to a row of the record type.
public enum RowChange: Sendable {
    /// A new row.
    case insert(RowID, Record)
    /// A row whose record was replaced.
    case update(RowID, old: Record, new: Record)
    /// A row removed; the record is the one it held.
    case delete(RowID, Record)
}

extension RowChange {
    /// Whether the change adds a new row.
    var isInsert: Bool {
        if case .insert = self { return true }
        return false
    }
}

/// All indexes of one record type.
///
/// ```swift
/// var idx = RecordIndexes(schema: placeSchema, rows: [(1, place)])
/// idx.apply([.delete(1, place)])
/// idx.catalog.count(.user("kind"), in: .all)   // 0
/// ```
public struct RecordIndexes: Sendable {
    /// The indexes behind one reference, copied on write: tables, snapshots, planner statistics
    /// and executors copy a type's indexes all the time, and copying the indexes themselves
    /// retained every tree, page table and map in them. The first change to shared indexes
    /// copies them, as copying the struct did.
    struct Storage: Sendable {
        let recordType: String
        let searchableFields: [String]
        var ordered: [IndexedField: OrderedIndex] = [:]
        var text: TextIndex?
        var spatial: [String: SpatialIndex] = [:]
        var rowCount = 0
        var rebuilt: [String] = []
        var damaged: [DamagedIndexSection] = []
        var deadRowsRemoved = true
        /// Per column field, its mapped column in each base layer (nil where a layer has none).
        var columns: [(field: String, layers: [StaticColumn?])] = []
        /// Where each base layer's rows start (for `columns`).
        var baseLayers = BaseLayers()
    }

    /// Written through `parts.contents`, which copies shared storage first (and, for indexes
    /// made on first use, makes them first).
    var parts: DeferredCopyOnWrite<Storage>

    /// The record type these indexes belong to.
    public var recordType: String { parts.contents.recordType }
    /// Ordered indexes by field.
    public internal(set) var ordered: [IndexedField: OrderedIndex] {
        _read { yield parts.contents.ordered }
        _modify { yield &parts.contents.ordered }
    }
    /// The record type's text index, when any field is SEARCHABLE.
    public internal(set) var text: TextIndex? {
        _read { yield parts.contents.text }
        _modify { yield &parts.contents.text }
    }
    /// Spatial indexes by Location field name.
    public internal(set) var spatial: [String: SpatialIndex] {
        _read { yield parts.contents.spatial }
        _modify { yield &parts.contents.spatial }
    }
    /// SEARCHABLE string fields, sorted by name.
    public var searchableFields: [String] { parts.contents.searchableFields }
    /// Number of rows applied.
    public internal(set) var rowCount: Int {
        _read { yield parts.contents.rowCount }
        _modify { yield &parts.contents.rowCount }
    }
    /// The mapped sections that failed their structure checks (each also in `rebuilt`, or, for
    /// columns and `dead/` sections, replaced by decoding the rows): which layer, and the error.
    public internal(set) var damaged: [DamagedIndexSection] {
        _read { yield parts.contents.damaged }
        _modify { yield &parts.contents.damaged }
    }
    /// Sections that were missing or unreadable when mapping a checkpoint's indexes, built in
    /// memory instead (the next checkpoint writes them).
    public internal(set) var rebuilt: [String] {
        _read { yield parts.contents.rebuilt }
        _modify { yield &parts.contents.rebuilt }
    }
    /// Whether the base layers' dead rows (superseded or deleted in a newer layer) are out of
    /// every index: true when there are none, or when every layer that made rows dead carries,
    /// for each mapped index, the `dead/` section of what those rows had indexed. When false
    /// (layers written before those sections existed), the caller removes each dead row with
    /// its decoded record (`apply([.delete(row, record)])`).
    public internal(set) var deadRowsRemoved: Bool {
        _read { yield parts.contents.deadRowsRemoved }
        _modify { yield &parts.contents.deadRowsRemoved }
    }

    /// Builds every index the schema asks for from `rows` (bulk, sorted builds).
    public init(schema: RecordTypeSchema, rows: [(RowID, Record)], nodeSize: Int = 64) {
        let plan = IndexPlan(schema)
        parts = DeferredCopyOnWrite(Storage(recordType: schema.name, searchableFields: plan.searchable))
        for (field, fam) in plan.ordered {
            let entries = rows.lazy.compactMap { (row, rec) in Self.value(field, rec).map { ($0, row) } }
            ordered[field] = OrderedIndex(family: fam, entries: entries, nodeSize: nodeSize)
        }
        if !plan.searchable.isEmpty {
            text = TextIndex(rows: rows.lazy.map { (row, rec) in (row, Self.texts(plan.searchable, rec)) })
        }
        for name in plan.spatial {
            spatial[name] = SpatialIndex(
                points: rows.lazy.compactMap { (row, rec) in Self.location(name, rec).map { (row, $0) } },
                nodeSize: nodeSize)
        }
        rowCount = rows.count
    }

    /// Indexes that `make` makes at their first use — any read or write of them, from any thread
    /// (the others wait) — for a process that may never use them: one that only looks records
    /// up by name need not open a single index section. Whatever `make` captures is released
    /// once it has run.
    public init(recordType: String, deferred make: @escaping @Sendable () -> RecordIndexes) {
        parts = DeferredCopyOnWrite(placeholder: Storage(recordType: recordType, searchableFields: [])) {
            make().parts.contents
        }
    }

    /// Whether the indexes have been made: false only for deferred ones (`init(recordType:deferred:)`)
    /// before their first use.
    public var isMade: Bool { parts.isMade }

    /// Builds the indexes of a table whose `baseRowCount` rows live in one checkpoint layer; see
    /// `init(schema:layers:nodeSize:rows:)`.
    public init(
        schema: RecordTypeSchema, baseRowCount: Int, sections: [String: SectionBytes], nodeSize: Int = 64,
        rows: () -> [(RowID, Record)]
    ) {
        self.init(
            schema: schema, layers: [IndexLayer(rowCount: baseRowCount, sections: sections)], nodeSize: nodeSize,
            rows: rows)
    }

    /// Section name of an ordered index (user and system fields apart: a user field may not
    /// shadow a system one, but names must never collide in a file).
    static func sectionName(_ f: IndexedField) -> String {
        switch f {
        case .user(let n): "ordered:u." + n
        case .system(let s): "ordered:s." + s.rawValue
        }
    }

    /// The text section's name lists the SEARCHABLE fields it covers, so a section written
    /// before a field became SEARCHABLE is not taken for the current one.
    static func textSectionName(_ fields: [String]) -> String { "text:" + fields.joined(separator: ",") }

    static func location(_ name: String, _ r: Record) -> Location? {
        if case .location(let l) = r.fields[name] { return l }
        return nil
    }

    /// The value a record holds for an indexed field, if any.
    static func value(_ field: IndexedField, _ r: Record) -> FieldValue? {
        switch field {
        case .user(let n): return r.fields[n]
        case .system(let s):
            switch s {
            case .recordName: return .reference(Reference(recordID: r.recordID, action: .none))
            case .creationDate: return r.creationDate.map { .date($0) }
            case .modificationDate: return r.modificationDate.map { .date($0) }
            case .creatorUserRecordID:
                return r.creatorUserRecordID.map { .reference(Reference(recordID: $0, action: .none)) }
            case .lastModifiedUserRecordID:
                return r.lastModifiedUserRecordID.map { .reference(Reference(recordID: $0, action: .none)) }
            case .recordChangeTag: return r.recordChangeTag.map { .string($0) }
            }
        }
    }

    static func texts(_ fields: [String], _ r: Record) -> [String] {
        var out: [String] = []
        for f in fields {
            for e in r.fields[f]?.elements ?? [] { if case .string(let s) = e { out.append(s) } }
        }
        return out
    }

    /// Applies committed changes in order.
    public mutating func apply(_ changes: [RowChange]) {
        if changes.count >= Self.bulkInsertMinimum, changes.allSatisfy(\.isInsert) { return insertAll(changes) }
        for c in changes {
            switch c {
            case .insert(let row, let rec):
                updateEntries(row, nil, rec)
                rowCount += 1
            case .update(let row, let old, let new):
                updateEntries(row, old, new)
            case .delete(let row, let rec):
                updateEntries(row, rec, nil)
                rowCount -= 1
            }
        }
    }

    /// Changes from which a batch of inserts alone is applied index by index (`insertAll`).
    static let bulkInsertMinimum = 64

    /// Adds new rows, each index taken out of its dictionary once and given every row (an
    /// ordered index with an empty delta packs them bottom-up): the same entries as one
    /// `updateEntries(row, nil, record)` per row, without a dictionary lookup per field and row.
    /// For a replayed log's tail and large commits of new records.
    mutating func insertAll(_ changes: [RowChange]) {
        var rows: [(RowID, Record)] = []
        rows.reserveCapacity(changes.count)
        for case .insert(let row, let rec) in changes { rows.append((row, rec)) }
        for field in Array(ordered.keys) {
            guard var index = ordered.removeValue(forKey: field) else { continue }
            index.insertAll(rows.lazy.compactMap { (row, rec) in Self.value(field, rec).map { ($0, row) } })
            ordered[field] = index
        }
        if var t = text {
            text = nil
            for (row, rec) in rows { t.insert(row: row, texts: Self.texts(searchableFields, rec)) }
            text = t
        }
        for name in Array(spatial.keys) {
            guard var index = spatial.removeValue(forKey: name) else { continue }
            for (row, rec) in rows { if let l = Self.location(name, rec) { index.insert(row: row, location: l) } }
            spatial[name] = index
        }
        rowCount += rows.count
    }

    /// Re-indexes `row` from `old` to `new`: a nil `old` adds the row's entries, a nil `new`
    /// removes them. An update re-indexes only the fields whose value changed: an update of one
    /// field of a record (the common write) costs that field's index, not every index of the type.
    mutating func updateEntries(_ row: RowID, _ old: Record?, _ new: Record?) {
        // Loops run over copies of the key lists: iterating `ordered.keys` itself would keep the
        // dictionary's storage shared and turn every in-place update into a copy.
        for field in Array(ordered.keys) {
            let a = old.flatMap { Self.value(field, $0) }
            let b = new.flatMap { Self.value(field, $0) }
            if Self.same(a, b) { continue }
            if let a { ordered[field]?.remove(a, row: row) }
            if let b { ordered[field]?.insert(b, row: row) }
        }
        if text != nil {
            switch (old.map { Self.texts(searchableFields, $0) }, new.map { Self.texts(searchableFields, $0) }) {
            case (let a?, let b?) where Self.sameTexts(a, b): break
            case (let a, let b):
                if let a { text?.remove(row: row, texts: a) }
                if let b { text?.insert(row: row, texts: b) }
            }
        }
        for name in Array(spatial.keys) {
            let a = old.flatMap { Self.location(name, $0) }
            let b = new.flatMap { Self.location(name, $0) }
            if old != nil, new != nil, a == b { continue }
            // A removed row leaves the index whether or not its record had a location.
            if old != nil { spatial[name]?.remove(row: row, indexed: a?.hasValidCoordinates == true) }
            if let b { spatial[name]?.insert(row: row, location: b) }
        }
    }

    /// Whether an update from `old` to `new` touches only ordered indexes (its searchable text
    /// and its locations are the same): such an update of a base row can keep the row (the
    /// ordered indexes hide its old mapped entries and hold the new ones in their delta), which
    /// the text and spatial indexes' mapped layers cannot.
    public func canUpdateInPlace(_ old: Record, _ new: Record) -> Bool {
        if text != nil, !Self.sameTexts(Self.texts(searchableFields, old), Self.texts(searchableFields, new)) {
            return false
        }
        return spatial.keys.allSatisfy { Self.location($0, old) == Self.location($0, new) }
    }

    /// Whether two records' searchable strings are the same, byte for byte.
    static func sameTexts(_ a: [String], _ b: [String]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { $0.utf8.elementsEqual($1.utf8) }
    }

    /// Whether two values index identically: equal, and of the same kind (3 and 3.0 are equal
    /// values but need not share a key, so they count as a change).
    static func same(_ a: FieldValue?, _ b: FieldValue?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case (let x?, let y?): return x == y && sameKind(x, y)
        default: return false
        }
    }

    static func sameKind(_ x: FieldValue, _ y: FieldValue) -> Bool {
        switch (x, y) {
        case (.int64, .double), (.double, .int64): return false
        case (.list(let a), .list(let b)): return a.count == b.count && zip(a, b).allSatisfy { sameKind($0, $1) }
        case (.string(let a), .string(let b)): return a.utf8.elementsEqual(b.utf8)
        default: return true
        }
    }

    /// The planner's view: which indexes exist and their statistics.
    public var catalog: IndexCatalog { IndexCatalog(indexes: self) }

    /// Checks every structure's invariants.
    public func checkInvariants() throws {
        for o in ordered.values { try o.checkInvariants() }
        for s in spatial.values { try s.checkInvariants() }
    }
}

/// One static layer of a table's base, for `RecordIndexes(schema:layers:nodeSize:rows:)`: how
/// many rows it holds and its index sections by name (row ids in them are absolute).
public struct IndexLayer: Sendable {
    /// Rows in the layer (live or not).
    public var rowCount: Int
    /// The layer's index sections by name.
    public var sections: [String: SectionBytes]
    /// Rows of older layers this layer made dead (absolute).
    public var dead: [UInt32]
    /// What those dead rows had indexed, by the same section names and in the same formats
    /// (the index segment's sections named `dead/` + name).
    public var deadSections: [String: SectionBytes]
    /// A layer of `rowCount` rows with `sections`; `dead` rows of older layers, whose index
    /// entries are in `deadSections`.
    public init(
        rowCount: Int, sections: [String: SectionBytes], dead: [UInt32] = [], deadSections: [String: SectionBytes] = [:]
    ) {
        self.rowCount = rowCount
        self.sections = sections
        self.dead = dead
        self.deadSections = deadSections
    }
}

/// Which indexes a record type's schema asks for (CKQUERY.md §3).
struct IndexPlan {
    var ordered: [(IndexedField, KeyFamily)] = []
    var searchable: [String] = []
    var spatial: [String] = []
    /// Scalar int64, double, date and string user fields with an ordered index: each gets a
    /// column (a string field only in layers with few distinct values, `StaticColumn`).
    var columns: [String] = []

    init(_ schema: RecordTypeSchema) {
        for f in schema.sortedFields {
            if !f.options.isDisjoint(with: [.queryable, .sortable]), let fam = KeyFamily(f.type.scalar) {
                ordered.append((.user(f.name), fam))
                if (fam.isFixed || fam == .string) && !f.type.isList { columns.append(f.name) }
            }
            if f.options.contains(.searchable), f.type.scalar == .string { searchable.append(f.name) }
            if f.options.contains(.queryable), f.type == .location { spatial.append(f.name) }
        }
        for s in SystemField.allCases {
            guard let o = schema.systemFieldOptions[s], !o.isDisjoint(with: [.queryable, .sortable]),
                let fam = KeyFamily(s.fieldType.scalar)
            else { continue }
            ordered.append((.system(s), fam))
        }
    }
}

/// Holds the published indexes of one record type; one writer, many readers.
public final class RecordIndexStore: @unchecked Sendable {
    private let lock = NSLock()
    private var current: RecordIndexes

    /// A store publishing `initial`.
    public init(_ initial: RecordIndexes) { current = initial }

    /// A consistent snapshot (O(1)).
    public func snapshot() -> RecordIndexes {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    /// Applies a committed batch and publishes the result atomically. Call from one writer.
    public func commit(_ changes: [RowChange]) {
        var next = snapshot()
        next.apply(changes)
        lock.lock()
        current = next
        lock.unlock()
    }
}

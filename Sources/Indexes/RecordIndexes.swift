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
    case user(String)
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
    case insert(RowID, Record)
    case update(RowID, old: Record, new: Record)
    case delete(RowID, Record)
}

/// All indexes of one record type.
///
/// ```swift
/// var idx = RecordIndexes(schema: placeSchema, rows: [(1, place)])
/// idx.apply([.delete(1, place)])
/// idx.catalog.count(.user("kind"), in: .all)   // 0
/// ```
public struct RecordIndexes: Sendable {
    /// The record type these indexes belong to.
    public let recordType: String
    /// Ordered indexes by field.
    public private(set) var ordered: [IndexedField: OrderedIndex] = [:]
    /// The record type's text index, when any field is SEARCHABLE.
    public private(set) var text: TextIndex?
    /// Spatial indexes by Location field name.
    public private(set) var spatial: [String: SpatialIndex] = [:]
    /// SEARCHABLE string fields, sorted by name.
    public let searchableFields: [String]
    /// Number of rows applied.
    public private(set) var rowCount = 0

    /// Builds every index the schema asks for from `rows` (bulk, sorted builds).
    public init(schema: RecordTypeSchema, rows: [(RowID, Record)], nodeSize: Int = 64) {
        recordType = schema.name
        var orderedFields: [(IndexedField, KeyFamily)] = []
        var spatialFields: [String] = []
        var searchable: [String] = []
        for f in schema.sortedFields {
            if !f.options.isDisjoint(with: [.queryable, .sortable]), let fam = KeyFamily(f.type.scalar) {
                orderedFields.append((.user(f.name), fam))
            }
            if f.options.contains(.searchable), f.type.scalar == .string { searchable.append(f.name) }
            if f.options.contains(.queryable), f.type == .location { spatialFields.append(f.name) }
        }
        for s in SystemField.allCases {
            guard let o = schema.systemFieldOptions[s], !o.isDisjoint(with: [.queryable, .sortable]),
                let fam = KeyFamily(s.fieldType.scalar)
            else { continue }
            orderedFields.append((.system(s), fam))
        }
        searchableFields = searchable
        for (field, fam) in orderedFields {
            let entries = rows.lazy.compactMap { (row, rec) in Self.value(field, rec).map { ($0, row) } }
            ordered[field] = OrderedIndex(family: fam, entries: entries, nodeSize: nodeSize)
        }
        if !searchable.isEmpty {
            text = TextIndex(rows: rows.lazy.map { (row, rec) in (row, Self.texts(searchable, rec)) })
        }
        for name in spatialFields {
            let pts = rows.lazy.compactMap { (row, rec) -> (RowID, Location)? in
                if case .location(let l) = rec.fields[name] { return (row, l) }
                return nil
            }
            spatial[name] = SpatialIndex(points: pts, nodeSize: nodeSize)
        }
        rowCount = rows.count
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
            case .creatorUserRecordID: return r.creatorUserRecordID.map { .reference(Reference(recordID: $0, action: .none)) }
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
        for c in changes {
            switch c {
            case .insert(let row, let rec):
                add(row, rec)
                rowCount += 1
            case .update(let row, let old, let new):
                removeEntries(row, old)
                add(row, new)
            case .delete(let row, let rec):
                removeEntries(row, rec)
                rowCount -= 1
            }
        }
    }

    // Loops run over copies of the key lists: iterating `ordered.keys` itself would keep the
    // dictionary's storage shared and turn every in-place update into a copy.
    mutating func add(_ row: RowID, _ rec: Record) {
        for field in Array(ordered.keys) {
            if let v = Self.value(field, rec) { ordered[field]?.insert(v, row: row) }
        }
        if text != nil { text?.insert(row: row, texts: Self.texts(searchableFields, rec)) }
        for name in Array(spatial.keys) {
            if case .location(let l) = rec.fields[name] { spatial[name]?.insert(row: row, location: l) }
        }
    }

    mutating func removeEntries(_ row: RowID, _ rec: Record) {
        for field in Array(ordered.keys) {
            if let v = Self.value(field, rec) { ordered[field]?.remove(v, row: row) }
        }
        if text != nil { text?.remove(row: row, texts: Self.texts(searchableFields, rec)) }
        for name in Array(spatial.keys) { spatial[name]?.remove(row: row) }
    }

    /// The planner's view: which indexes exist and their statistics.
    public var catalog: IndexCatalog { IndexCatalog(indexes: self) }

    /// Checks every structure's invariants.
    public func checkInvariants() throws {
        for o in ordered.values { try o.checkInvariants() }
        for s in spatial.values { try s.checkInvariants() }
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

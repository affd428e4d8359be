// IndexCatalog: what the planner may know about indexes — which exist per field, and their
// statistics (range counts, posting counts, radius estimates) — without the structures.
//
// Built from a RecordIndexes snapshot, or from a bare field → kinds table for planner tests
// without data (statistics then answer nil).

import RecordModel

/// Which indexes exist for a record type, with statistics.
///
/// ```swift
/// let cat = indexes.catalog
/// cat.kinds(for: .user("price"))                                   // [.ordered]
/// cat.count(.user("price"), in: ValueRange(lower: .included(10)))  // 4 210
/// ```
public struct IndexCatalog: Sendable {
    /// Index kinds per field; text indexes are listed under each SEARCHABLE field.
    public let fields: [IndexedField: Set<IndexKind>]
    let indexes: RecordIndexes?

    /// A catalog without data: statistics answer nil.
    public init(fields: [IndexedField: Set<IndexKind>]) {
        self.fields = fields
        indexes = nil
    }

    init(indexes: RecordIndexes) {
        var f: [IndexedField: Set<IndexKind>] = [:]
        for k in indexes.ordered.keys { f[k, default: []].insert(.ordered) }
        for n in indexes.searchableFields { f[.user(n), default: []].insert(.text) }
        for n in indexes.spatial.keys { f[.user(n), default: []].insert(.spatial) }
        fields = f
        self.indexes = indexes
    }

    /// The kinds of index on `field` (empty when none).
    public func kinds(for field: IndexedField) -> Set<IndexKind> { fields[field] ?? [] }

    /// Number of rows, when data is attached.
    public var rowCount: Int? { indexes?.rowCount }

    /// Entries of `field`'s ordered index in `range` (O(log n)); nil without that index.
    public func count(_ field: IndexedField, in range: ValueRange) -> Int? {
        indexes?.ordered[field]?.count(in: range)
    }

    /// Entries equal to any of `values` (IN / ==).
    public func count(_ field: IndexedField, equalToAnyOf values: [FieldValue]) -> Int? {
        indexes?.ordered[field]?.count(equalToAnyOf: values)
    }

    /// Entries beginning with `prefix` (BEGINSWITH).
    public func count(_ field: IndexedField, beginningWith prefix: FieldValue) -> Int? {
        indexes?.ordered[field]?.count(beginningWith: prefix)
    }

    /// Rows holding a normalized token (document frequency).
    public func documentFrequency(token: String) -> Int? { indexes?.text?.documentFrequency(token: token) }

    /// Upper bound of rows containing all words of `query`.
    public func estimatedCount(matchingAll query: [String]) -> Int? {
        indexes?.text?.estimatedCount(matchingAll: query)
    }

    /// Estimated rows within `km` of `center` on a Location field (`SpatialIndex.estimatedCount`).
    public func estimatedCount(_ field: String, withinKm km: Double, of center: Location) -> Int? {
        indexes?.spatial[field]?.estimatedCount(withinKm: km, of: center)
    }
}

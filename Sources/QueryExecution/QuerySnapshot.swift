// QuerySnapshot: what the executor reads — one record type's indexes and rows, from one commit.
//
// The database provides it (its per-type snapshot conforms); tests build one from records in
// memory (`MemorySnapshot`). `SnapshotStatistics` answers the planner's questions from it.
//
// Invariants every conforming store keeps, and the executor relies on:
// - A row id names one record version for the snapshot's whole life; the indexes list exactly
//   the live rows (`indexes.rowCount` is the live count), so a row an index yields is live
//   unless the record read says otherwise (nil: deleted since, skipped).
// - Reads never change what the snapshot answers: the hints (`prefetchRecords`, a reader's
//   `prefetch`) and `inResultOf` change only what is cached or loaded, never a result.
// - `record(_:fields:)` and `valueReader` return the same values `record(_:)` holds for the
//   fields asked; a store may build less.
// - `idOrder` claims an order only when it holds for every row; `rowPrecedes` agrees with
//   `RecordID`'s order.
// In the embedded engine, the reads are `TypeTable+Read.swift` (rows from the layers' mapped
// bytes, the delta, the record cache) and `RecordIndexes.columnReader` (values from columns).

import Indexes
import QueryPlanner
import RecordModel

/// A consistent view of one record type: indexes and rows from the same commit.
public protocol QuerySnapshot: Sendable {
    /// The record type's indexes.
    var indexes: RecordIndexes { get }
    /// The record type's schema, when it has one.
    var typeSchema: RecordTypeSchema? { get }
    /// The current version of a row's record, nil when the row is deleted, read for a result of
    /// `resultRows` records: a store that caches decoded records may leave out those of large
    /// results, so that one large result does not replace the cache with rows read once
    /// (LevelDB's `fill_cache`). ``record(_:)`` reads one row as a result of one.
    func record(_ row: RowID, inResultOf resultRows: Int) -> Record?
    /// A row's record id (cheaper than `record` where the store can).
    func recordID(_ row: RowID) -> RecordID?
    /// The record of `row` holding at least the user fields in `fields` and every system field
    /// (it may hold more): what residual filters and sort keys read, which a store can decode
    /// partly. Nil when the row is deleted.
    func record(_ row: RowID, fields: Set<String>) -> Record?
    /// A reader of `selection`'s user fields for the rows that follow: what residual filters
    /// and sort keys read of each candidate. A store finds where the selection's values lie
    /// once per reader, not once per row. (An existential: the executor is generic over the
    /// snapshot and not specialized across modules, and an optional of an associated type
    /// cost a metadata lookup per row.)
    func valueReader(_ selection: FieldSelection) -> any RowValueReader
    /// Every live row, ascending.
    func allRows() -> [RowID]
    /// The first `limit` live rows of `rows` (ascending, unique) in record-id order, among those
    /// in `zone` (every zone when nil) whose id is after `after` (from the start when nil).
    /// Queries without sort descriptors page through this; a store that keeps its rows in id
    /// order answers without making every row's id.
    func firstRowsByID(_ rows: [RowID], after: RecordID?, zone: ZoneID?, limit: Int) -> [RowID]
    /// A hint that the records of `rows` are about to be read whole (``record(_:inResultOf:)``),
    /// in that order: a store starts loading them at once — the decoded records it caches, or
    /// the bytes it would decode — so that their loads overlap instead of waiting for memory
    /// one row at a time. For a reader that has a page's rows before it reads their records.
    func prefetchRecords(_ rows: ArraySlice<RowID>)
    /// The records of `rows` in order, deleted rows left out, read for a result of `resultRows`
    /// (``record(_:inResultOf:)``), each passed to `body` with its position in `rows`. A store
    /// over mapped memory loads ahead (``ReadAhead``) and reads its parts once for all the rows.
    func forEachRecord(_ rows: [RowID], inResultOf resultRows: Int, _ body: (Int, Record) -> Void)
    /// Where row order is record-id order (``RowIDOrder``): none unless the store knows (the
    /// default).
    var idOrder: RowIDOrder { get }
    /// Whether row `a`'s record id comes before row `b`'s (record name, then zone name).
    func rowPrecedes(_ a: RowID, _ b: RowID) -> Bool
}

/// Where a snapshot's row order is record-id order (``QuerySnapshot/idOrder``). An ordered index
/// lists the rows level on a value in row order, so a scan sorted on that value alone meets its
/// ties in row order: with `rows`, that is their final order, and the scan need not sort them
/// and stops as soon as it has a page; with `layers`, it merges each layer's ties by
/// ``QuerySnapshot/rowPrecedes(_:_:)``.
public struct RowIDOrder: OptionSet, Sendable, Hashable {
    /// The options' bits.
    public let rawValue: UInt8
    /// Options from their bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// Ascending row order is ascending record-id order for every row of the snapshot.
    public static let rows = RowIDOrder(rawValue: 1)
    /// The rows are parts (a checkpoint's layers) that each list their rows in record-id order,
    /// and no row was added since.
    public static let layers = RowIDOrder(rawValue: 2)
}

/// When a reader of many rows of mapped memory asks for them to be loaded ahead (a store's
/// ``QuerySnapshot/forEachRecord(_:inResultOf:_:)``): in steps of 8 rows, rows' places 16–23 rows ahead
/// (the first 16 at once), their bytes 8–15 rows ahead from the 17th row on, so a row's bytes
/// are asked for only once its place has had 8 rows' time to load (reading a place still in
/// memory would wait for it, and rows a record cache holds would pay that wait for nothing).
public enum ReadAhead {
    /// Calls `prefetch(rows, payload)` with the positions to load ahead when reading position
    /// `k` of `count` rows: `payload` false for their places, true for their bytes.
    @inlinable @inline(__always)
    public static func schedule(at k: Int, of count: Int, _ prefetch: (Range<Int>, Bool) -> Void) {
        let step = 8
        guard k % step == 0 else { return }
        if k == 0 { prefetch(0..<min(2 * step, count), false) }
        let far = k + 2 * step
        if far < count { prefetch(far..<min(far + step, count), false) }
        if k >= step, k + step < count { prefetch((k + step)..<min(far, count), true) }
    }
}

/// Reads one selection's values of rows, one row at a time (``QuerySnapshot/valueReader(_:)``).
public protocol RowValueReader {
    /// Reads the selected user fields of `row` into `out` (slot order, nil where absent),
    /// without building its record where the store can (a mapped row's bytes); false when the
    /// row is deleted.
    func values(_ row: RowID, into out: inout [FieldValue?]) -> Bool
    /// A hint that the values of `rows` are about to be read: a store over mapped memory starts
    /// loading them.
    func prefetch(_ rows: ArraySlice<RowID>)
}

/// The default ``RowValueReader``: each row's values from its record, `record(_:fields:)`.
public struct RecordValueReader<S: QuerySnapshot>: RowValueReader {
    let snapshot: S
    let selection: FieldSelection
    let fields: Set<String>

    /// A reader of `selection` from `snapshot`'s records.
    public init(_ snapshot: S, _ selection: FieldSelection) {
        self.snapshot = snapshot
        self.selection = selection
        fields = Set(selection.names)
    }

    /// The values from `record(row, fields:)`.
    public func values(_ row: RowID, into out: inout [FieldValue?]) -> Bool {
        guard let r = snapshot.record(row, fields: fields) else { return false }
        selection.values(of: r, into: &out)
        return true
    }

    /// Nothing to load ahead: the records are read whole.
    public func prefetch(_ rows: ArraySlice<RowID>) {}
}

extension QuerySnapshot {
    /// Values read from each row's record.
    public func valueReader(_ selection: FieldSelection) -> any RowValueReader {
        RecordValueReader(self, selection)
    }

    /// Unknown: none.
    public var idOrder: RowIDOrder { [] }

    /// The current version of `row`'s record, read as a result of one record.
    public func record(_ row: RowID) -> Record? { record(row, inResultOf: 1) }

    /// From the rows' record ids (a row without a record sorts first).
    public func rowPrecedes(_ a: RowID, _ b: RowID) -> Bool {
        guard let y = recordID(b) else { return false }
        guard let x = recordID(a) else { return true }
        return x < y
    }

    /// The record id of `record(row)`.
    public func recordID(_ row: RowID) -> RecordID? { record(row)?.recordID }

    /// The records of `rows` in order, deleted rows left out, read for a result of `resultRows`
    /// (``record(_:inResultOf:)``); nothing loaded ahead: this default's records are in memory.
    public func forEachRecord(_ rows: [RowID], inResultOf resultRows: Int, _ body: (Int, Record) -> Void) {
        for (k, row) in rows.enumerated() {
            if let r = record(row, inResultOf: resultRows) { body(k, r) }
        }
    }

    /// Nothing to load ahead: this default has no memory of its own to load.
    public func prefetchRecords(_ rows: ArraySlice<RowID>) {}

    /// The whole record (`record(row)`); `fields` is a hint that this default ignores.
    public func record(_ row: RowID, fields: Set<String>) -> Record? { record(row) }

    /// ``idOrderedRows(_:after:zone:limit:)``: reads every row's id.
    public func firstRowsByID(_ rows: [RowID], after: RecordID?, zone: ZoneID?, limit: Int) -> [RowID] {
        idOrderedRows(rows, after: after, zone: zone, limit: limit)
    }

    /// `firstRowsByID` by reading every row's id (the default, and the fallback of stores whose
    /// row order is not id order).
    public func idOrderedRows(_ rows: [RowID], after: RecordID?, zone: ZoneID?, limit: Int) -> [RowID] {
        var ids: [RecordID] = []
        var picked: [RowID] = []
        for row in rows {
            guard let id = recordID(row), zone == nil || id.zoneID == zone else { continue }
            if let after, !(after < id) { continue }
            ids.append(id)
            picked.append(row)
        }
        return RecordID.orderedByID(ids).prefix(max(0, limit)).map { picked[$0] }
    }

    /// Planner statistics over this snapshot. The row count comes from the indexes (they hold
    /// exactly the snapshot's live rows), not from enumerating the rows: O(1) per query.
    public var statistics: SnapshotStatistics {
        SnapshotStatistics(
            indexes: indexes, schema: typeSchema, rows: indexes.rowCount, reader: { [self] in self.valueReader($0) })
    }

    /// `statistics` that count small circles exactly by finding their rows, and keep those rows
    /// in `found` for the execution of the same query on this snapshot (see ``FoundRows``).
    public func statistics(keeping found: FoundRows) -> SnapshotStatistics {
        SnapshotStatistics(
            indexes: indexes, schema: typeSchema, rows: indexes.rowCount, found: found,
            reader: { [self] in self.valueReader($0) })
    }
}

/// A snapshot of records held in memory, for tests and small tools.
///
/// ```swift
/// let snapshot = MemorySnapshot(schema: placeSchema, records: places)   // rows 0..<places.count
/// let plan = QueryPlanner.plan(query, statistics: snapshot.statistics, limit: nil)
/// let all = try QueryExecutor.run(plan, on: snapshot, pageSize: places.count)
/// ```
public struct MemorySnapshot: QuerySnapshot {
    /// The record type's indexes, built from the records.
    public let indexes: RecordIndexes
    /// The schema the indexes were built from.
    public let typeSchema: RecordTypeSchema?
    private let rows: [RowID: Record]
    /// `.rows` when the records were given in ascending record-id order.
    public let idOrder: RowIDOrder

    /// Indexes `records` (row ids 0, 1, 2, … in order) as `schema` asks.
    public init(schema: RecordTypeSchema, records: [Record], nodeSize: Int = 64) {
        var rows: [RowID: Record] = [:]
        var pairs: [(RowID, Record)] = []
        for (i, r) in records.enumerated() {
            rows[RowID(i)] = r
            pairs.append((RowID(i), r))
        }
        self.rows = rows
        idOrder = zip(records, records.dropFirst()).allSatisfy { $0.recordID < $1.recordID } ? .rows : []
        self.typeSchema = schema
        self.indexes = RecordIndexes(schema: schema, rows: pairs, nodeSize: nodeSize)
    }

    /// The record at `row`, nil when no record was given for it (whatever the result's size).
    public func record(_ row: RowID, inResultOf resultRows: Int) -> Record? { rows[row] }
    /// Every row, ascending: `0..<records.count`.
    public func allRows() -> [RowID] { rows.keys.sorted() }
}

/// The planner's statistics from real indexes: exact counts from the B+trees' subtree counts,
/// posting lengths for words, the spatial index's estimate for circles.
public struct SnapshotStatistics: IndexStatistics {
    let indexes: RecordIndexes
    let schema: RecordTypeSchema?
    /// Live records of the type, from the indexes' row count.
    public let rowCount: Int
    /// Where rows found while estimating are kept for the execution; nil: estimate only.
    let found: FoundRows?
    /// Makes a reader of rows' values, for ``sampledShare(_:in:other:in:)``; nil: not measured.
    let reader: (@Sendable (FieldSelection) -> any RowValueReader)?

    init(
        indexes: RecordIndexes, schema: RecordTypeSchema?, rows: Int, found: FoundRows? = nil,
        reader: (@Sendable (FieldSelection) -> any RowValueReader)? = nil
    ) {
        self.indexes = indexes
        self.schema = schema
        self.rowCount = rows
        self.found = found
        self.reader = reader
    }

    /// The most rows a share is sampled from: their ids are listed from the index (about a
    /// microsecond per thousand), then at most `sampleSize` of them read. Large enough for a
    /// country's cities (15 362 in France): an unsampled pair is charged a stream's worst case
    /// (`Cost.streamRisk`), which lost a stream that stops after a few hundred entries to a set
    /// plan that lists 87 389 rows.
    static let sampleLimit = 65_536
    /// The rows read for a share, spread over the listed ones.
    static let sampleSize = 64

    static func indexed(_ field: String) -> IndexedField {
        SystemField.named(field).map { .system($0) } ?? .user(field)
    }

    /// A system field's type, or the schema's type for a user field (a user field cannot take a
    /// system field's name, so a system name is not looked up in the schema).
    public func fieldType(_ field: String) -> FieldType? {
        SystemField.named(field)?.fieldType ?? schema?.fields[field]?.type
    }

    /// Whether the snapshot has an ordered index on the field (a user field or a system field's query name).
    /// (Looked up by key: reading the value would copy the whole index out of the dictionary.)
    public func hasOrderedIndex(_ field: String) -> Bool { indexes.ordered.index(forKey: Self.indexed(field)) != nil }
    /// Whether the snapshot has a spatial index on the Location field.
    public func hasSpatialIndex(_ field: String) -> Bool { indexes.spatial.index(forKey: field) != nil }
    /// Whether the record type has a text index.
    public var hasTextIndex: Bool { indexes.text != nil }

    /// Exact: from the B+tree's subtree counts, O(log n); 0 without an index.
    public func count(_ field: String, in range: KeyRange) -> Int {
        indexes.ordered[Self.indexed(field)]?.count(in: range.valueRange) ?? 0
    }

    /// Exact: entries equal to any of the values (duplicates in `values` count once); 0 without an index.
    public func count(_ field: String, equalToAnyOf values: [FieldValue]) -> Int {
        indexes.ordered[Self.indexed(field)]?.count(equalToAnyOf: values) ?? 0
    }

    /// Exact: entries beginning with the prefix, O(log n); 0 without an index.
    public func count(_ field: String, beginningWith prefix: FieldValue) -> Int {
        indexes.ordered[Self.indexed(field)]?.count(beginningWith: prefix) ?? 0
    }

    /// An upper bound: for ALL the smallest posting; for ANY the sum over the words of each word's smallest
    /// posting, at most `rowCount`. 0 without a text index.
    public func estimatedTextCount(_ words: String, all: Bool) -> Int {
        guard let text = indexes.text else { return 0 }
        if all { return text.estimatedCount(matchingAll: [words]) }
        var n = 0
        TextTokenizer.forEachGroup(words) { g in n += g.map { text.documentFrequency(token: $0) }.min() ?? 0 }
        return min(n, rowCount)
    }

    /// An estimate: the entries of the geohash cells covering the circle, scaled by the share of
    /// their area the circle takes (`SpatialIndex.estimatedCount`); 0 without a spatial index.
    /// With `found`, a circle whose rows a probe finds within ``FoundRows/radiusBudget`` nodes
    /// is counted exactly, and its rows kept there for the execution.
    public func estimatedRadiusCount(_ field: String, center: Location, km: Double) -> Int {
        guard let index = indexes.spatial[field] else { return 0 }
        if let found, let rows = index.probe(withinKm: km, of: center, budget: FoundRows.radiusBudget) {
            found.keep(field: field, center: center, km: km, rows: rows)
            return rows.count
        }
        return index.estimatedCount(withinKm: km, of: center)
    }

    /// The base rows' share of the rows when every base layer has a column of the field
    /// (`RecordIndexes.columnShare`); 0 otherwise.
    public func columnShare(_ field: String) -> Double { indexes.columnShare(field) }

    /// Measured on up to `sampleSize` (64) rows spread over the rows `field`'s index lists in
    /// `range` (when it lists at most `sampleLimit`, 65 536): exact when it lists no more than
    /// the sample, else the sample's share, smoothed so that a sample without a hit does not
    /// claim none. Nil without a reader or an index, for a system or list field `other`, or past
    /// the limit.
    public func sampledShare(_ field: String, in range: KeyRange, other: String, in otherRange: KeyRange) -> Double? {
        guard let reader, SystemField.named(other) == nil, !(fieldType(other)?.isList ?? true),
            let index = indexes.ordered[Self.indexed(field)]
        else { return nil }
        let n = index.count(in: range.valueRange)
        guard n > 0, n <= Self.sampleLimit else { return nil }
        let rows = index.unorderedRows(in: range.valueRange)
        let all = rows.count <= Self.sampleSize
        let values = reader(FieldSelection([other]))
        var out: [FieldValue?] = []
        var read = 0
        var hits = 0
        for k in 0..<min(rows.count, Self.sampleSize) {
            // Positions by Fibonacci hashing: spread over the rows and fixed for a given table
            // (the plan stays a function of it), without the aliasing of a fixed stride over
            // rows that repeat a pattern.
            let i = all ? k : Int((UInt64(k) &* 0x9E37_79B9_7F4A_7C15) >> 32) % rows.count
            guard values.values(rows[i], into: &out) else { continue }
            read += 1
            if let v = out.first ?? nil, otherRange.contains(v) { hits += 1 }
        }
        guard read > 0 else { return nil }
        return all ? Double(hits) / Double(read) : (Double(hits) + 0.5) / (Double(read) + 1)
    }
}

extension KeyRange {
    /// The index library's form of the range.
    var valueRange: ValueRange {
        func bound(_ b: KeyBound?) -> RangeBound {
            guard let b else { return .unbounded }
            return b.inclusive ? .included(b.value) : .excluded(b.value)
        }
        return ValueRange(lower: bound(lower), upper: bound(upper))
    }
}

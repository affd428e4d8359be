// BaseRows: the rows of one table at the last checkpoint, as a stack of layers
// (docs/storage-format.md, "Layers").
//
// A table's base is layers L0 … Lk, oldest first, each a `rows` section sorted by record id in a
// data segment of its own (plus an index segment). Rows are numbered across the layers: layer k
// holds rows `start(k) ..< start(k) + count(k)`, right after layer k − 1's, so a layer's index
// entries (which name absolute rows) never change when layers are added after it. A record id
// may appear in several layers: the newest is its version at the checkpoint, and the older ones
// are *dead* — as is a row whose record was deleted before a later checkpoint. Each layer's
// segment lists, in its `dead` section, the rows of older layers that its checkpoint made dead;
// their union is the table's dead set. A checkpoint writes the delta as a new layer and then
// merges a suffix of layers while the layer before it holds no more live rows than the suffix
// (a binary counter: O(log n) layers, each row rewritten O(log n) times).
//
// `dead` section:
//   header = "CRDEAD01" u64 count                                              never change
//   rows   = u32 row × count, ascending
//
// Every accessor bounds-checks: a damaged section yields nil or an error, never a bad read.

import CirrusIO
import RecordModel

/// One layer of a table's base: its data segments, mapped, and the rows it covers.
public struct BaseLayer: Sendable {
    /// The data segments holding the layer (rows, and indexes when the façade wrote them).
    public let files: TableFiles
    /// The layer's rows, sorted by record id; row `i` is the table's row `start + i`.
    public let rows: RowSection
    /// The layer's index segment: mapped with the layer, or at its first use.
    public let indexSegment: IndexSegment
    /// The table row of the layer's first row.
    public let start: Int
    /// Rows of older layers this layer's checkpoint made dead (absolute, ascending).
    public let dead: [UInt32]

    /// A layer of a table's base whose index segment (if any) is already open.
    public init(files: TableFiles, rows: RowSection, indexes: DataSegment?, start: Int, dead: [UInt32]) {
        self.init(files: files, rows: rows, indexSegment: IndexSegment(indexes), start: start, dead: dead)
    }

    /// A layer of a table's base.
    public init(files: TableFiles, rows: RowSection, indexSegment: IndexSegment, start: Int, dead: [UInt32]) {
        self.files = files
        self.rows = rows
        self.indexSegment = indexSegment
        self.start = start
        self.dead = dead
    }

    /// The segment with the layer's index sections (row ids in them absolute); nil when the layer
    /// has none or it does not open (`indexSegment.openError` then says why). Opens it at the
    /// first call when it is opened at first use.
    public var indexes: DataSegment? { indexSegment.segment }

    static let deadMagic: [UInt8] = Array("CRDEAD01".utf8)  //                     never change
    /// Prefix of an index segment section holding what the layer's dead rows had indexed, in
    /// the format of the index section named by the rest.                         never change
    public static let deadSectionPrefix = "dead/"

    /// The `dead` section's bytes for `rows` (ascending).
    static func encodeDead(_ rows: [UInt32]) -> [UInt8] {
        var w = ByteWriter(capacity: 16 + 4 * rows.count)
        w.bytes += deadMagic
        w.u64(UInt64(rows.count))
        for r in rows { w.u32(r) }
        return w.bytes
    }

    /// The `dead` section of a rows segment (none: no dead rows); every row must lie before
    /// `start` (the layer's own first row). Throws naming the file and offset when damaged.
    static func readDead(_ segment: DataSegment, start: Int) throws(LogError) -> [UInt32] {
        guard let b = segment.section("dead") else { return [] }
        let at = segment.sections.first { $0.name == "dead" }?.offset ?? 0
        func bad(_ r: String) -> LogError {
            .badSegment(path: segment.file.path, offset: at, reason: "dead section: " + r)
        }
        guard b.count >= 16, Array(b[0..<8]) == deadMagic else { throw bad("bad header") }
        let n = UInt64(littleEndian: b.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        guard n <= UInt64((b.count - 16) / 4) else { throw bad("names \(n) rows in \(b.count) bytes") }
        var failure: (row: UInt32, entry: Int)? = nil
        let out = [UInt32](unsafeUninitializedCapacity: Int(n)) { out, made in
            var previous: UInt32? = nil
            for i in 0..<Int(n) {
                let r = UInt32(littleEndian: b.loadUnaligned(fromByteOffset: 16 + 4 * i, as: UInt32.self))
                guard Int(r) < start, previous.map({ $0 < r }) ?? true else {
                    failure = (r, i)
                    return
                }
                out[i] = r
                made = i + 1
                previous = r
            }
        }
        if let failure {
            throw bad("row \(failure.row) at entry \(failure.entry) is not an older layer's, or out of order")
        }
        return out
    }
}

/// The rows of a table's base across its layers, by table row (see the file header).
public struct BaseRows: Sendable {
    /// The rows' parts behind one reference: tables, indexes and snapshots copy their rows all the
    /// time (on some paths once per record read), and a copy of six arrays would retain and
    /// release each of them.
    @usableFromInline final class Parts: Sendable {
        let layers: [BaseLayer]
        @usableFromInline let dead: RowBitmap
        let deadPerLayer: [Int]
        @usableFromInline let starts: BaseLayers
        let searchOrder: [Int]
        let rowBytes: [RowBytes]
        /// Each layer's field-name table (`RowSection.names`), for decoding through `rowBytes`.
        let names: [RecordCodec.NameTable?]
        /// Each layer's mapped rows file, which records holding their fields in place keep.
        let files: [MappedFile]
        let worthPrefetching: Bool

        /// How many of the ascending `rows` lie in `range`.
        static func countIn(_ rows: [UInt32], _ range: Range<Int>) -> Int {
            func firstAtLeast(_ x: Int) -> Int {
                var (lo, hi) = (0, rows.count)
                while lo < hi {
                    let mid = (lo + hi) / 2
                    if Int(rows[mid]) < x { lo = mid + 1 } else { hi = mid }
                }
                return lo
            }
            return firstAtLeast(range.upperBound) - firstAtLeast(range.lowerBound)
        }

        init(layers: [BaseLayer], prefetchAbove: Int) {
            self.layers = layers
            let starts = BaseLayers(rowCounts: layers.map(\.rows.count))
            // Every layer's dead rows, each once, ascending; a layer's share of them is found by
            // two binary searches.
            let all = RowBitmap.union(layers.map(\.dead))
            let dead = RowBitmap(sorted: all)
            let per = layers.map { Self.countIn(all, $0.start..<($0.start + $0.rows.count)) }
            self.starts = starts
            self.dead = dead
            deadPerLayer = per
            rowBytes = layers.map { RowBytes($0.rows) }
            names = layers.map(\.rows.names)
            files = layers.map(\.rows.segment.file)
            worthPrefetching = rowBytes.reduce(0) { $0 + $1.size } > prefetchAbove
            searchOrder = layers.indices.sorted { a, b in
                let (x, y) = (layers[a].rows.count - per[a], layers[b].rows.count - per[b])
                return x != y ? x > y : a > b
            }
        }
    }

    @usableFromInline let parts: Parts

    /// The layers, oldest first.
    public var layers: [BaseLayer] { parts.layers }
    /// Rows no longer live: superseded by a newer layer or deleted before its checkpoint.
    public var dead: RowBitmap { parts.dead }
    /// Which rows each layer covers.
    public var starts: BaseLayers { parts.starts }
    /// Whether reads of these rows are worth prefetching: their sections together are larger
    /// than a server's last-level cache (``prefetchThreshold``). A smaller table stays cached
    /// under a repeated workload, and there the hints cost more than they save.
    public var worthPrefetching: Bool { parts.worthPrefetching }
    /// The row bytes above which ``worthPrefetching`` holds: 32 MiB.
    public static let prefetchThreshold = 32 << 20
    /// Rows in every layer, live or dead.
    @inlinable public var count: Int { parts.starts.rowCount }

    /// The rows of `layers` (oldest first, each starting where the previous one ends), worth
    /// prefetching when their row sections hold more than `prefetchAbove` bytes. The layers are
    /// looked up in for an id most live rows first, newest first among equals.
    public init(layers: [BaseLayer], prefetchAbove: Int = BaseRows.prefetchThreshold) {
        parts = Parts(layers: layers, prefetchAbove: prefetchAbove)
    }

    /// Rows that are live.
    public var liveCount: Int { count - parts.dead.count }

    /// Live rows of layer `k`.
    public func liveCount(layer k: Int) -> Int { parts.layers[k].rows.count - parts.deadPerLayer[k] }

    /// The layer (its index) and the row within it of table row `i`, nil when out of range.
    /// Callers read `parts.layers[k]` in place: a copy of a `BaseLayer` retains and releases each
    /// of its references, on every row read.
    @inline(__always)
    func locate(_ i: Int) -> (Int, Int)? {
        if parts.layers.count == 1 {
            return i >= 0 && i < count ? (0, i) : nil
        }
        guard let k = parts.starts.layer(of: i) else { return nil }
        return (k, i - parts.layers[k].start)
    }

    /// Whether row `i` is live (in range and not dead).
    @inlinable public func isLive(_ i: Int) -> Bool { i >= 0 && i < count && !parts.dead.contains(i) }

    /// The encoded record of row `i`, nil when out of range or damaged.
    public func payload(_ i: Int) -> UnsafeRawBufferPointer? {
        guard let (k, j) = locate(i) else { return nil }
        return parts.rowBytes[k].payload(j)
    }

    /// Starts loading the entries or payloads of `rows` (`RowBytes.prefetch`); rows out of
    /// range: nothing. The layers are read in place (no copy of a section per row).
    public func prefetch(_ rows: ArraySlice<UInt32>, payload: Bool) {
        parts.rowBytes.withUnsafeBufferPointer { ls in
            for row in rows {
                guard let (k, j) = locate(Int(row)) else { continue }
                ls[k].prefetch(j, payload: payload)
            }
        }
    }

    /// `prefetch` of one row, `i`.
    public func prefetch(row i: Int, payload: Bool) {
        guard let (k, j) = locate(i) else { return }
        parts.rowBytes.withUnsafeBufferPointer { $0[k].prefetch(j, payload: payload) }
    }

    /// The sequence number that wrote row `i`.
    public func sequence(_ i: Int) -> UInt64 {
        guard let (k, j) = locate(i) else { return 0 }
        return parts.layers[k].rows.sequence(j)
    }

    /// The record of row `i`, decoded (storage form); with `encodedFields`, its fields held as
    /// bytes and decoded when read (`RecordCodec.decode(_:names:encodedFields:)`) — for records
    /// handed to a caller, not for readers of every field (index builds, checkpoints).
    public func record(_ i: Int, encodedFields: Bool = false) throws(LogError) -> Record {
        guard let (k, j) = locate(i) else {
            throw .badSegment(path: "table row \(i)", offset: 0, reason: "row outside the table's \(count) rows")
        }
        // Through `RowBytes` and the layer's name table: calling the layer's `RowSection` would
        // copy it (each of its references retained and released) on every row.
        return try parts.rowBytes[k].record(
            j, names: parts.names[k], encodedFields: encodedFields, owner: parts.files[k]
        ) {
            parts.layers[k].rows.damage(j, $0)
        }
    }

    /// Damage found in row `i`: its file and the offset of its entry, and `reason`.
    public func damage(_ i: Int, _ reason: String) -> LogError {
        guard let (k, j) = locate(i) else {
            return .badSegment(path: "table row \(i)", offset: 0, reason: reason)
        }
        return parts.layers[k].rows.damage(j, reason)
    }

    /// The record id of row `i` with the given zone owner.
    public func recordID(_ i: Int, owner: String) -> RecordID? {
        guard let (k, j) = locate(i) else { return nil }
        return parts.layers[k].rows.recordID(j, owner: owner)
    }

    /// Compares row `i`'s id with `id` in `RecordID` order (see `RowSection.compareID`).
    public func compareID(_ i: Int, _ id: RecordID) -> Int {
        guard let (k, j) = locate(i) else { return -1 }
        return parts.layers[k].rows.compareID(j, id)
    }

    /// The zone name of every row when there is one layer and all its rows are in one zone (rows
    /// are then in id order), else nil.
    public var singleZoneName: String? { parts.layers.count == 1 ? parts.layers[0].rows.singleZoneName : nil }

    /// Compares the ids of rows `a` and `b` in `RecordID` order — record name, then zone name —
    /// from their key bytes: <0, 0, >0. A damaged key sorts first.
    public func compareIDs(_ a: Int, _ b: Int) -> Int {
        guard let (ka, i) = locate(a), let (kb, j) = locate(b), let (za, na) = parts.layers[ka].rows.keyBytes(i),
            let (zb, nb) = parts.layers[kb].rows.keyBytes(j)
        else { return locate(a) == nil ? -1 : 1 }
        let c = RowKeyOrder.compare(na, nb)
        return c != 0 ? c : RowKeyOrder.compare(za, zb)
    }

    /// The live row of a record id, nil when the base has no live version of it.
    ///
    /// The newest layer holding the id has its latest version, and every older version is dead
    /// (the checkpoint that wrote the newer one listed it), so an id has at most one live row.
    /// The layers are therefore searched largest first, stopping at a live row: a random id is
    /// found after fewer searches than newest first (at 1M rows in layers of 40, 31, 20 and 9%,
    /// 2.0 searches on average instead of 3.0). Each search is a `rowhash` probe (O(1)
    /// expected) or, in a layer without one, a binary search (O(log n)).
    public func row(of id: RecordID) -> Int? {
        var zone = id.zoneID.zoneName
        var name = id.recordName
        return zone.withUTF8 { z in
            name.withUTF8 { n in
                for k in parts.searchOrder {
                    // Through `RowBytes`: a `RowSection` read from the layers was copied (and its
                    // references retained and released) on every lookup.
                    if let j = parts.rowBytes[k].row(zone: UnsafeRawBufferPointer(z), name: UnsafeRawBufferPointer(n)) {
                        let row = parts.starts.starts[k] + j
                        if !parts.dead.contains(row) { return row }
                    }
                }
                return nil
            }
        }
    }

    /// The live rows of one zone, ascending.
    public func rows(inZone zoneName: String) -> [Int] {
        var out: [Int] = []
        for l in parts.layers {
            for j in l.rows.rows(inZone: zoneName) where !parts.dead.contains(l.start + j) { out.append(l.start + j) }
        }
        return out
    }
}

/// A layer's index segment, opened with its layer or at its first use
/// (`RecordStoreOptions.indexSegmentsOnFirstUse`): a process that only fetches records by id never
/// maps it. Indexes are derived data, so a segment that does not open is not an error here: the
/// reader rebuilds them from the rows and reports `openError`. Thread-safe; opened at most once,
/// and every copy sees it opened.
public struct IndexSegment: Sendable {
    /// The segment or why it did not open; nil when there is none.
    private let opened: DeferredCopyOnWrite<Result<DataSegment, LogError>?>

    /// An open segment, or none.
    public init(_ segment: DataSegment?) { opened = DeferredCopyOnWrite(segment.map { .success($0) }) }

    /// A segment `open` maps at its first use.
    public init(openingAtFirstUse open: @escaping @Sendable () -> Result<DataSegment, LogError>) {
        opened = DeferredCopyOnWrite(placeholder: nil, deferred: open)
    }

    /// The segment, opened now if it was not yet; nil when there is none or it does not open.
    public var segment: DataSegment? {
        guard case .success(let s) = opened.contents else { return nil }
        return s
    }

    /// Why the segment did not open at its first use; nil when it opened, there is none, or it
    /// was opened with its layer (whose open reported any failure).
    public var openError: LogError? {
        guard case .failure(let e) = opened.contents else { return nil }
        return e
    }

    /// Whether the segment has been opened (always, when it was given open).
    public var isOpen: Bool { opened.isMade }
}

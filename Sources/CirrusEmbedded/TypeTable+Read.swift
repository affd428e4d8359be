// TypeTable+Read: the read path — how a query, a fetch or a filter reads the rows of one record
// type in one database. Everything that reads rows goes through here (RecordTypeSnapshot is its
// public face, the executor's QuerySnapshot); nothing else decodes a table's rows.
//
// Invariants:
// 1. Row numbering: rows `0..<baseCount` are the checkpoint's base, numbered across its layers
//    (BaseRows); rows from `baseCount` on are the delta's, in `pages` at `row - baseCount`. A
//    RowID means the same row for the life of the table value; it is never reused.
// 2. A base row is live unless `baseRemoved` has it; when `overlaid` has it its current record is
//    the overlay's (an update that kept its row), never its mapped bytes.
// 3. Mapped bytes are trusted on this path: block CRCs are checked by `verify` and repair, not per
//    read. A row that does not decode is counted in `damage` and the call that met it fails
//    (RowDamage.swift): it is never skipped in silence.
// 4. The record cache holds decoded base rows (API form) by row number; a base row read for a
//    result the cache leaves out (`RecordCache.fills`) is not offered to it.
// 5. Prefetching is a hint (ReadAhead): it never changes what is read, only when memory loads.
// 6. Values for filters and sort keys come from the layers' columns when every selected field
//    has one, else from the row's bytes, else from its record; all three agree (checked by
//    `Container.checkInvariants()`).

import CirrusFacade
import CirrusIO
import Indexes
import QueryExecution
import RecordLog
import RecordModel

extension TypeTable {
    /// The record of `row` (API form), nil if the row is deleted or never existed; a base row
    /// decoded now is offered to the record cache unless it is read for a result of
    /// `resultRows` records that the cache leaves out (`RecordCache.fills(resultRows:)`).
    func record(_ row: RowID, resultRows: Int = 1) -> Record? {
        let i = Int(row)
        if i < baseCount {
            guard !parts.baseRemoved.contains(i), let base = parts.base else { return nil }
            if parts.overlaid.contains(i), let r = overlaidRecord(i) { return r }
            return Self.decoded(
                i, base, parts.cache, parts.contents.damage, fill: parts.cache?.fills(resultRows: resultRows) ?? false)
        }
        let d = i - baseCount
        return parts.pages.contains(d) ? parts.pages[d]?.record : nil
    }

    /// Base row `i`'s record (API form) from `cache`, or decoded and offered to it when `fill`.
    /// Mapped rows are trusted (block CRCs are checked by `verify`, not on every read): a row that
    /// does not decode is counted in `damage`, which makes the call that read it fail.
    @inline(__always)
    static func decoded(_ i: Int, _ base: BaseTable, _ cache: RecordCache?, _ damage: RowDamage, fill: Bool) -> Record?
    {
        guard let cache else { return decode(i, base, damage) }
        return cache.record(i, fill: fill) { decode(i, base, damage) }
    }

    static func decode(_ i: Int, _ base: BaseTable, _ damage: RowDamage) -> Record? {
        do {
            // Fields held encoded: a result's caller decodes what it reads.
            return ContainerCore.apiForm(try base.rows.record(i, encodedFields: true))
        } catch {
            damage.note(error)
            return nil
        }
    }

    /// `record(_:resultRows:)` of each of `rows`, in order, passed to `body` with its position;
    /// rows without a record are skipped. Base rows' entries and then bytes are prefetched ahead
    /// of the reads (`ReadAhead`), and the table's parts — base, cache, removed and overlaid
    /// rows — are read once for all the rows, not retained and released per row.
    func forEachRecord(_ rows: [RowID], resultRows: Int, _ body: (Int, Record) -> Void) {
        let parts = self.parts
        guard let base = parts.contents.base else {
            for (k, row) in rows.enumerated() { if let r = record(row, resultRows: resultRows) { body(k, r) } }
            return
        }
        let baseCount = base.rows.count
        let cache = parts.contents.cache
        let fill = cache?.fills(resultRows: resultRows) ?? false
        let anyRemoved = parts.contents.baseRemoved.count > 0
        let anyOverlaid = parts.contents.overlaid.count > 0
        let prefetching = base.rows.worthPrefetching
        // A result the cache keeps is mostly read from it: the cached records' boxes are asked
        // for 8–15 rows ahead (the first 16 at once), their loads overlapping.
        let boxes = fill ? cache : nil
        // A bulk read (one the cache does not keep) stops asking it when too few of the rows
        // it asked for were there: see `bulkProbe`.
        var asking = cache != nil
        var asked = 0
        var hits = 0
        rows.withUnsafeBufferPointer { rs in
            for k in 0..<rs.count {
                if prefetching {
                    if asking {
                        ReadAhead.schedule(at: k, of: rs.count) { prefetch(rows[$0], payload: $1) }
                    } else {
                        // Not the cache's sets: only the rows.
                        ReadAhead.schedule(at: k, of: rs.count) { base.rows.prefetch(rows[$0], payload: $1) }
                    }
                }
                if let boxes, k % 8 == 0 {
                    let from = k == 0 ? 0 : k + 8
                    let to = min(k + 16, rs.count)
                    if from < to { Self.prefetchBoxes(rs[from..<to], below: baseCount, boxes) }
                }
                let i = Int(rs[k])
                guard i < baseCount else {
                    if let r = record(rs[k]) { body(k, r) }
                    continue
                }
                if anyRemoved && parts.contents.baseRemoved.contains(i) { continue }
                if anyOverlaid, parts.contents.overlaid.contains(i), let r = overlaidRecord(i) {
                    body(k, r)
                    continue
                }
                if fill {
                    if let r = Self.decoded(i, base, cache, parts.contents.damage, fill: true) { body(k, r) }
                    continue
                }
                if asking, let cache {
                    asked += 1
                    let hit = cache.record(i, fill: false, { nil })
                    if hit != nil { hits += 1 }
                    if asked % Self.bulkProbe == 0 && hits * Self.bulkHitShare < asked { asking = false }
                    if let hit {
                        body(k, hit)
                        continue
                    }
                }
                if let r = Self.decoded(i, base, nil, parts.contents.damage, fill: false) { body(k, r) }
            }
        }
    }

    /// A bulk read asks the record cache for its rows in rounds of this many, and stops after
    /// a round when fewer than one in `bulkHitShare` of the rows asked so far were cached. A
    /// bulk read neither fills the cache nor, in a table several times the cache's size, finds
    /// much there (at 1M rows and the default 16 384, a row is cached with a chance of about
    /// 1.6%), while every question costs the cache's lock and its set's cache line, so such a
    /// read is faster without them (docs/benchmarks.md). A read of rows that are mostly cached
    /// (the popular rows small queries brought in) keeps asking: a hit saves a decode, worth
    /// several questions when the row's bytes are cold, about two when they are at hand.
    static let bulkProbe = 32
    /// See `bulkProbe`: the least share of hits (one in this many) worth asking for.
    static let bulkHitShare = 4

    /// Starts loading what `values(_:of:columns:into:)` will read of the base rows: the
    /// selected fields' column slots when every one has a column (`columns`), else the rows'
    /// entries; nothing when the base is not `worthPrefetching`.
    func prefetch(_ rows: ArraySlice<RowID>, columns: ColumnReader?) {
        guard parts.contents.base?.rows.worthPrefetching == true else { return }
        if let columns {
            for row in rows where Int(row) < baseCount { columns.prefetch(Int(row)) }
        } else {
            parts.contents.base?.rows.prefetch(rows, payload: false)
        }
    }

    /// Starts loading the base rows' entries or bytes (`BaseRows.prefetch`), and with the
    /// entries the record cache's sets, for reads that follow; nothing when the base is not
    /// `worthPrefetching`.
    func prefetch(_ rows: ArraySlice<RowID>, payload: Bool) {
        guard parts.contents.base?.rows.worthPrefetching == true else { return }
        parts.contents.base?.rows.prefetch(rows, payload: payload)
        // With the entries (the first hint for a row), the record cache's set the read asks first.
        if !payload, let cache = parts.contents.cache {
            for row in rows where Int(row) < baseCount { cache.prefetch(Int(row)) }
        }
    }

    /// Starts loading the cached records of the base rows among `rows` (below `baseCount`):
    /// every set first, so that their loads overlap (`prefetchRecord` reads a row's set to find
    /// its box, and would otherwise wait for each set in turn), then the box of each record
    /// found — or, for a row not cached, its bytes in `base` when given.
    static func prefetchBoxes<C: Collection>(
        _ rows: C, below baseCount: Int, _ cache: RecordCache, orBytesOf base: BaseRows? = nil
    ) where C.Element == RowID {
        for row in rows where Int(row) < baseCount { cache.prefetch(Int(row)) }
        for row in rows where Int(row) < baseCount {
            if !cache.prefetchRecord(Int(row)), let base { base.prefetch(row: Int(row), payload: true) }
        }
    }

    /// Starts loading the records of `rows` that the reads that follow build or take whole:
    /// the box of each one the record cache holds, the bytes of the others (when the base is
    /// `worthPrefetching`). For a stream that has its page's rows before it reads their
    /// records: one cold cache line after another, read in turn, was most of what fetching a
    /// nearest-first page's records cost.
    func prefetchRecords(_ rows: ArraySlice<RowID>) {
        guard let base = parts.contents.base else { return }
        let n = base.rows.count
        let bytes = base.rows.worthPrefetching
        guard let cache = parts.contents.cache else {
            if bytes { base.rows.prefetch(rows, payload: true) }
            return
        }
        Self.prefetchBoxes(rows, below: n, cache, orBytesOf: bytes ? base.rows : nil)
    }

    /// The record of `row` with at least the user fields in `fields` (and every system field),
    /// for filters and sort keys: a base row comes whole from the cache or is decoded partly,
    /// skipping the other fields, and is not cached; a delta row is whole.
    func record(_ row: RowID, fields: Set<String>) -> Record? {
        let i = Int(row)
        guard i < baseCount else { return record(row) }
        guard !parts.baseRemoved.contains(i), let base = parts.base else { return nil }
        if parts.overlaid.contains(i), let r = overlaidRecord(i) { return r }
        if let hit = parts.cache?.cached(i) { return hit }
        guard let p = base.rows.payload(i) else {
            parts.contents.damage.note(base.rows.damage(i, "row payload lies outside the section"))
            return nil
        }
        // As in record(_:): a mapped row that does not decode is counted and fails the call.
        do {
            return ContainerCore.apiForm(try RecordCodec.decode(p, onlyFields: fields))
        } catch {
            parts.contents.damage.note(base.rows.damage(i, "row does not decode: \(error)"))
            return nil
        }
    }

    /// `RowValueReader.values(_:into:)`: a base row's selected fields read from the layer's
    /// columns (`columns`, the selection's `indexes.columnReader`) or its mapped bytes (or its
    /// overlaid record), no record built; a delta row's from its record.
    func values(
        _ row: RowID, of selection: FieldSelection, columns: ColumnReader?, into out: inout [FieldValue?]
    ) -> Bool {
        let i = Int(row)
        guard i < baseCount else {
            guard let r = record(row) else { return false }
            selection.values(of: r, into: &out)
            return true
        }
        guard !parts.baseRemoved.contains(i) else { return false }
        // The record cache is not asked: a few values read from the row's bytes cost less than
        // the cache's lock and its slot's memory.
        if parts.overlaid.contains(i), let r = overlaidRecord(i) {
            selection.values(of: r, into: &out)
            return true
        }
        // Values come from the layer's columns when every selected field has one:
        // the row's bytes are not touched (nor the base retained).
        if let columns, columns.values(i, into: &out) { return true }
        guard let base = parts.contents.base, let p = base.rows.payload(i) else { return false }
        // As in record(_:): a mapped row that does not decode is counted and fails the call.
        do {
            try RecordCodec.values(p, of: selection, into: &out)
            return true
        } catch {
            parts.contents.damage.note(base.rows.damage(i, "row does not decode: \(error)"))
            return false
        }
    }

    /// The current record of a base row updated in place.
    func overlaidRecord(_ i: Int) -> Record? {
        guard let id = parts.base?.rows.recordID(i, owner: ZoneID.defaultOwnerName) else { return nil }
        return parts.overlay[id]?.record
    }

    /// The record id of `row` (API form), nil if the row is deleted or never existed; a base row's
    /// id comes from its key, without decoding the record.
    func recordID(_ row: RowID) -> RecordID? {
        let i = Int(row)
        if i < baseCount {
            guard !parts.baseRemoved.contains(i), let base = parts.base else { return nil }
            return base.rows.recordID(i, owner: ZoneID.defaultOwnerName)
        }
        let d = i - baseCount
        return parts.pages.contains(d) ? parts.pages[d]?.record.recordID : nil
    }

    /// The row of a record (API-form id), nil if none.
    func row(for id: RecordID) -> RowID? {
        // An empty delta (the state after a checkpoint or bulk load) costs no hashing.
        if parts.deltaByID.count > 0, let r = parts.deltaByID[id] { return r }
        // The base finds a row by its zone and record names (the owner is the table's).
        guard let b = parts.base, let i = b.rows.row(of: id), !parts.baseRemoved.contains(i) else { return nil }
        return RowID(truncatingIfNeeded: i)
    }

    /// `QuerySnapshot.firstRowsByID`: the base rows of a one-zone layer are already in id order
    /// (sections sort by zone, then name), so each layer's candidates are walked in row order from
    /// a binary search for `after`, merged across layers and with the delta rows sorted by id;
    /// ids are compared as key bytes. A layer of several zones falls back to reading every id.
    func firstRowsByID(
        _ rows: [RowID], after: RecordID?, zone: ZoneID?, limit: Int, fallback: () -> [RowID]
    ) -> [RowID] {
        guard limit > 0 else { return [] }
        // Rows are ascending: base rows first, each layer's a contiguous run.
        let split = Self.firstIndex(of: rows, atLeast: baseCount, from: 0)
        guard split > 0, let base = parts.base else { return fallback() }
        if split == rows.count, after == nil, let layerZone = base.rows.singleZoneName {
            // One layer in one zone (`singleZoneName` is nil otherwise) and no delta row: the
            // rows are in id order already; no run to merge (and no layer or run copied, each a
            // handful of retains: reading the zone through `base.layers[0]` copied the layer).
            if let zone, zone != ZoneID(zoneName: layerZone) { return [] }
            return firstLive(rows[...], limit)
        }
        guard let candidates = layerCandidates(rows, split, base, after: after, zone: zone) else { return fallback() }
        if candidates.count <= 1, split == rows.count {
            // One layer's rows and no delta: already in id order, nothing to compare.
            return candidates.first.map { firstLive($0.run, limit) } ?? []
        }
        let layers = base.rows.layers
        var runs: [MergeRun] = []
        for (k, run) in candidates {
            var r = MergeRun(rows: run, section: layers[k].rows, start: layers[k].start)
            r.settle(removed: parts.baseRemoved)
            if r.head != nil { runs.append(r) }
        }
        let delta = deltaByID(rows[split...], after: after, zone: zone)
        if runs.count == 1, delta.isEmpty {
            // One layer's rows and no delta: already in id order, nothing to compare.
            return firstLive(runs[0].rows, limit)
        }
        return merged(&runs, delta, limit)
    }

    /// The first index of `rows` (ascending) at `from` or after whose row is at least `row`.
    static func firstIndex(of rows: [RowID], atLeast row: Int, from lo: Int) -> Int {
        var lo = lo
        var hi = rows.count
        while lo < hi {
            let m = (lo + hi) / 2
            if Int(rows[m]) < row { lo = m + 1 } else { hi = m }
        }
        return lo
    }

    /// The first `limit` rows of `run` (in id order already) that are not removed.
    func firstLive(_ run: ArraySlice<RowID>, _ limit: Int) -> [RowID] {
        var out: [RowID] = []
        out.reserveCapacity(min(limit, run.count))
        for r in run where !parts.baseRemoved.contains(Int(r)) {
            out.append(r)
            if out.count == limit { break }
        }
        return out
    }

    /// Per layer, the base rows of `rows[..<split]` still to walk: after `after`, in the asked
    /// zone. Nil when a layer holds several zones (its rows are not in id order). The layers are
    /// read in place: a copy of one retains and releases its files and sections (copies per layer
    /// were two thirds of `firstRowsByID` in a one-row radius query).
    func layerCandidates(
        _ rows: [RowID], _ split: Int, _ base: BaseTable, after: RecordID?, zone: ZoneID?
    ) -> [(layer: Int, run: ArraySlice<RowID>)]? {
        var candidates: [(layer: Int, run: ArraySlice<RowID>)] = []
        let found: Bool = base.rows.layers.withUnsafeBufferPointer { ls in
            var from = 0
            for k in ls.indices {
                let start = ls[k].start
                let end = Self.firstIndex(of: rows, atLeast: start + ls[k].rows.count, from: from)
                defer { from = end }
                guard from < end else { continue }
                guard let layerZone = ls[k].rows.singleZoneName else { return false }
                var run = rows[from..<end]
                if let zone, zone != ZoneID(zoneName: layerZone) { continue }
                if let after {
                    // The first candidate whose id is after `after`.
                    var lo = run.startIndex
                    var hi = run.endIndex
                    while lo < hi {
                        let m = (lo + hi) / 2
                        if ls[k].rows.compareID(Int(rows[m]) - start, after) <= 0 { lo = m + 1 } else { hi = m }
                    }
                    run = rows[lo..<run.endIndex]
                }
                if !run.isEmpty { candidates.append((k, run)) }
            }
            return true
        }
        return found ? candidates : nil
    }

    /// The delta rows among `rows` after `after` in the asked zone, with their ids, in id order.
    func deltaByID(_ rows: ArraySlice<RowID>, after: RecordID?, zone: ZoneID?) -> [(RecordID, RowID)] {
        var ids: [RecordID] = []
        var found: [RowID] = []
        for row in rows {
            let d = Int(row) - baseCount
            guard parts.pages.contains(d), let id = parts.pages[d]?.record.recordID else { continue }
            if let zone, id.zoneID != zone { continue }
            if let after, !(after < id) { continue }
            ids.append(id)
            found.append(row)
        }
        return RecordID.orderedByID(ids).map { (ids[$0], found[$0]) }
    }

    /// The first `limit` rows of a k-way merge over the layers' runs (each head's key bytes read
    /// once, compared with memcmp) and the delta's rows.
    func merged(_ runs: inout [MergeRun], _ delta: [(RecordID, RowID)], _ limit: Int) -> [RowID] {
        var out: [RowID] = []
        out.reserveCapacity(min(limit, runs.reduce(0) { $0 + $1.rows.count } + delta.count))
        var j = 0
        while out.count < limit {
            var best = -1
            // The heads' key bytes are read in place (a run passed by value copied its section).
            for k in runs.indices where runs[k].head != nil {
                if best < 0 || MergeRun.precedes(runs[k].name, runs[k].zone, runs[best].name, runs[best].zone) {
                    best = k
                }
            }
            guard best >= 0, let row = runs[best].head else { break }
            while j < delta.count, runs[best].section.compareID(Int(row) - runs[best].start, delta[j].0) > 0 {
                out.append(delta[j].1)
                j += 1
                if out.count == limit { return out }
            }
            out.append(row)
            runs[best].rows.removeFirst()
            runs[best].settle(removed: parts.baseRemoved)
        }
        while j < delta.count, out.count < limit {
            out.append(delta[j].1)
            j += 1
        }
        return out
    }

    /// Every live row, ascending.
    func allRows() -> [RowID] {
        var out: [RowID] = []
        out.reserveCapacity(liveCount)
        for i in 0..<baseCount where !parts.baseRemoved.contains(i) { out.append(RowID(truncatingIfNeeded: i)) }
        for (offset, page) in parts.pages.pagesWithOffsets {
            for (i, r) in page.enumerated() where r != nil {
                out.append(RowID(truncatingIfNeeded: baseCount + offset + i))
            }
        }
        return out
    }

    /// Every live record (row order).
    var liveRecords: [Record] { allRows().compactMap { record($0) } }
}

/// One layer's candidate rows in a merge by record id, with the key bytes of its first live row.
struct MergeRun {
    var rows: ArraySlice<RowID>
    let section: RowSection
    /// The table row of the section's first row.
    let start: Int
    /// The first live row and its zone and name bytes (nil when the run is exhausted).
    var head: RowID?
    var zone = UnsafeRawBufferPointer(start: nil, count: 0)
    var name = UnsafeRawBufferPointer(start: nil, count: 0)

    init(rows: ArraySlice<RowID>, section: RowSection, start: Int) {
        self.rows = rows
        self.section = section
        self.start = start
    }

    /// Drops removed rows from the front and reads the new head's key (a damaged key is empty,
    /// so it sorts first, as `BaseRows.compareIDs` orders it).
    mutating func settle(removed: RowBitmap) {
        while let r = rows.first, removed.contains(Int(r)) { rows.removeFirst() }
        head = rows.first
        // The heads to come: entries 8 rows ahead, then key bytes 4 rows ahead, so comparing a
        // new head does not wait for memory (a candidate set's rows are scattered over the file).
        let i = rows.startIndex
        if rows.count > 8 { section.prefetch(Int(rows[i + 8]) - start, key: false) }
        if rows.count > 4 { section.prefetch(Int(rows[i + 4]) - start, key: true) }
        guard let h = head, let (z, n) = section.keyBytes(Int(h) - start) else {
            zone = UnsafeRawBufferPointer(start: nil, count: 0)
            name = zone
            return
        }
        zone = z
        name = n
    }

    /// Whether the head with `name` and `zone` comes before the head with `otherName` and
    /// `otherZone`: record name, then zone name.
    @inline(__always)
    static func precedes(
        _ name: UnsafeRawBufferPointer, _ zone: UnsafeRawBufferPointer, _ otherName: UnsafeRawBufferPointer,
        _ otherZone: UnsafeRawBufferPointer
    ) -> Bool {
        let c = RowKeyOrder.compare(name, otherName)
        return c != 0 ? c < 0 : RowKeyOrder.compare(zone, otherZone) < 0
    }
}

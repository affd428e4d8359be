// The first execution shape: ordered streams (the second, row-id sets: QueryExecutor+Sets.swift).

import Indexes
import QueryPlanner
import RecordModel

extension Run {
    // MARK: - streams

    /// The nodes around an ordered scan: limit → filter → intersect → scan, all but the scan
    /// optional.
    struct StreamShape {
        var limit: PlanNode?
        var filter: PlanNode?
        var residual: [QueryFilter] = []
        var intersect: PlanNode?
        var scan: PlanNode
    }

    static func streamShape(_ root: PlanNode) -> StreamShape {
        var node = root
        var shape = StreamShape(scan: root)
        if case .limit = node.op {
            shape.limit = node
            node = node.children[0]
        }
        if case .filter(let fs) = node.op {
            shape.filter = node
            shape.residual = fs
            node = node.children[0]
        }
        shape.scan = node
        if case .intersect = node.op {
            shape.intersect = node
            shape.scan = node.children[0]
        }
        return shape
    }

    /// Runs an ordered scan (index order or nearest-first), keeping `pageSize + 1` rows that pass
    /// the intersected sets, the zone, the read rule and the residual filter, in the query's order
    /// (rows with equal first keys are ordered among themselves): `StreamTaker` takes each row.
    mutating func executeStream() throws(ExecutionError) -> QueryPage {
        let shape = Self.streamShape(plan.root)
        let scan = shape.scan
        var memberships: [RowMembership] = []
        for c in shape.intersect?.children.dropFirst() ?? [] { memberships.append(try membership(c)) }
        let residual = shape.residual
        let matcher = matcher(residual)
        let taker = StreamTaker(
            st: StreamState(), sets: memberships, residual: residual, matcher: matcher,
            filter: residual.isEmpty ? nil : matcher.selection.map { snapshot.valueReader($0) },
            want: pageSize + 1,  // one more than a page tells whether more follow
            ordering: ordering, after: after, snapshot: snapshot, pageSize: pageSize, zone: zone, visible: visible)
        let st = taker.st
        if case .indexScan = scan.op, taker.want > StreamState.sortKeysFromPage { st.sortKeys = taker.columnSortKeys() }
        var continuation: StreamContinuation? = nil
        switch scan.op {
        case .indexScan(let field, let range, let descending, _):
            try scanIndex(field, range, descending: descending, taker)
        case .nearest(let field, let center, let maxKm):
            let (it, stopped, unread) = try streamNearest(
                // A page's rows and the one after them, which tells the page is complete.
                scan.op, field: field, center: center, maxKm: maxKm, batch: taker.want + 1
            ) { row, c2 in
                st.chord2 = c2
                defer { st.chord2 = nil }
                return taker.take(row)
            }
            if stopped {
                let ahead = st.results.dropFirst(pageSize).map(\.row) + (st.dropped.map { [$0] } ?? []) + unread
                continuation = StreamContinuation(state: .nearest(scan: scan.op, iterator: it, pending: ahead))
            }
        default:
            throw ExecutionError(message: "internal: \(scan.op) cannot stream")
        }
        taker.flush()

        count(scan, st.scanned)
        if let node = shape.intersect { count(node, st.passedSets) }
        if let node = shape.filter { count(node, st.passedFilter) }
        // The page's records straight from the rows taken (a copy of those rows first retained
        // and released every record once more).
        let records = st.results.prefix(pageSize).map(\.record)
        if let node = shape.limit { count(node, records.count) }
        let more = st.results.count > pageSize
        return QueryPage(
            records: records, next: more ? records.last.flatMap { ordering.key($0) } : nil, counts: actual,
            continuation: more ? continuation : nil)
    }

    /// The index scan of an ordered stream: how its ties come (in row order, merged by id across
    /// layers, or taken by value), then every row of `range` through `taker`.
    func scanIndex(
        _ field: String, _ range: KeyRange, descending: Bool, _ taker: StreamTaker<S>
    ) throws(ExecutionError) {
        let index = try ordered(field)
        let r = seek(range, descending: descending)
        let st = taker.st
        let snapshot = self.snapshot
        // One sort descriptor, the scanned field's: ties are ordered by record id alone, and
        // the index lists them in row order.
        let tiesByID = ordering.sorts.count == 1 && ordering.sorts[0].fieldName == field
        let idOrder = snapshot.idOrder  // asked once: a store may work it out from its layers
        st.idOrderedTies = tiesByID && idOrder.contains(.rows)
        // Layers that each list their rows in id order, merged by id where they tie: an
        // ascending scan then meets its ties in id order, as one layer would. Only where
        // every row scanned is taken (no set or filter to pass): each tie between layers
        // compares two ids read from the rows, and a scan that rejects most of its rows would
        // pay that for rows it drops.
        st.tiesInIDOrder =
            tiesByID && !descending && taker.sets.isEmpty && taker.residual.isEmpty && !idOrder.contains(.rows)
            && idOrder.contains(.layers) && index.ordersTiesAcrossLayers
        // Large tie groups taken by value (`takeByValue`) where a group is read whole: rows
        // not in id order, or a descending scan (which meets its ties backwards). A user
        // field's value is read from the row's bytes; records are needed first only to test
        // visibility or a filter the bytes cannot answer.
        if tiesByID, !st.tiesInIDOrder, !idOrder.contains(.rows) || descending, taker.visible == nil,
            taker.residual.isEmpty || taker.filter != nil, SystemField.named(field) == nil
        {
            st.tieKeys = snapshot.valueReader(FieldSelection([field]))
        }
        if !r.isEmpty {
            let tieOrder: ((RowID, RowID) -> Bool)? = st.tiesInIDOrder ? { snapshot.rowPrecedes($0, $1) } : nil
            let direction: ScanDirection = descending ? .descending : .ascending
            if taker.sets.isEmpty, taker.residual.isEmpty, taker.visible == nil, st.tieKeys == nil {
                // Every row scanned is taken with its record: the rows are taken in batches
                // whose records are asked for together (as a nearest-first stream's are).
                var batch = Batch(first: taker.after == nil ? taker.want + 1 : taker.want + 2, limit: taker.want + 1)
                var stopped = false
                index.scan(r.valueRange, direction: direction, tieOrder: tieOrder) { row in
                    guard batch.add(row) else { return true }
                    stopped = batch.drain(snapshot) { row, _ in taker.take(row) } != nil
                    return !stopped
                }
                if !stopped { _ = batch.drain(snapshot) { row, _ in taker.take(row) } }
            } else {
                index.scan(r.valueRange, direction: direction, tieOrder: tieOrder) { taker.take($0) }
            }
        }
    }

    /// `range` narrowed to start at the resume position's first key (inclusive), so the rows
    /// before it are never read.
    func seek(_ range: KeyRange, descending: Bool) -> KeyRange {
        guard let after else { return range }
        let v = after.values.first ?? .reference(Reference(recordID: after.recordID))
        if descending { return range.intersected(with: KeyRange(upper: KeyBound(v, inclusive: true))) }
        return range.intersected(with: KeyRange(lower: KeyBound(v, inclusive: true)))
    }

    /// Feeds `take` nearest-first from the resume position — or from the previous page's live
    /// iterator, its read-ahead rows first; returns the iterator, whether `take` stopped it, and
    /// the rows the iterator gave that `take` was not offered (they come first on the next page).
    ///
    /// The iterator's rows are taken `batch` at a time, their records asked for together
    /// (`prefetchRecords`) before the first is read: fetching a nearest-first page's records one
    /// after another waited on memory for each (a cold record box, a cold cache set).
    func streamNearest(
        _ op: PlanOperator, field: String, center: Location, maxKm: Double?, batch: Int,
        _ take: (RowID, Double?) -> Bool
    ) throws(ExecutionError) -> (NearestIterator, Bool, [RowID]) {
        let index = try spatial(field)
        var it: NearestIterator
        // The first batch's rows fewer than `batch`: those offered from the previous page's
        // read-ahead (one more when the previous page's last row is read again).
        var offered = 0
        if case .nearest(let scan, let iterator, let pending)? = resume?.state, scan == op {
            it = iterator
            // Rows the previous page read ahead: taken first; those after a stop stay pending.
            snapshot.prefetchRecords(pending[...])
            for k in pending.indices where !take(pending[k], nil) {
                return (it, true, Array(pending[(k + 1)...]))
            }
            offered = pending.count
        } else {
            var start: NearestPosition? = nil
            if let after, case .double(let c2)? = after.values.first {
                start = NearestPosition(chord2: c2.nextDown, row: .max)
                offered = -1  // the last row of the previous page comes again, and is skipped
            }
            it = index.nearest(to: center, maxKm: maxKm, after: start)
        }
        var rows = Batch(first: batch - offered, limit: batch)
        while let hit = it.next() {
            guard rows.add(hit.row, chord2: hit.position.chord2) else { continue }
            if let unread = rows.drain(snapshot, take) { return (it, true, unread) }
        }
        if let unread = rows.drain(snapshot, take) { return (it, true, unread) }
        return (it, false, [])
    }
}

/// What an ordered scan does with each row it meets (``Run/executeStream()``): the intersected
/// sets, the zone, the read rule and the residual filter, then the page's order — rows level on
/// their first sort value are grouped and ordered among themselves (`flush`). Its state lives in a
/// class (`StreamState`): captured `var`s cost a dynamic exclusivity check on every access; its
/// other parts are constants. A class, not a struct: `Run` is called unspecialized from other
/// modules, and a closure calling a method of a generic struct instantiates the struct's metadata
/// on every call (every row scanned), where a class instance carries its own.
final class StreamTaker<S: QuerySnapshot> {
    let st: StreamState
    /// The intersected sets, as a constant: a captured `var` cost a dynamic exclusivity check on
    /// every row `take` tested (a quarter of a list CONTAINS + sort page).
    let sets: [RowMembership]
    let residual: [QueryFilter]
    let matcher: RecordMatcher
    /// The filters' fields, read before a candidate's record (a row they reject is never built).
    let filter: (any RowValueReader)?
    let want: Int
    let ordering: Ordering
    let after: OrderKey?
    let pageSize: Int
    let zone: ZoneID?
    let visible: (@Sendable (Record) -> Bool)?
    /// Last: the fields before it are at fixed offsets.
    let snapshot: S

    init(
        st: StreamState, sets: [RowMembership], residual: [QueryFilter], matcher: RecordMatcher,
        filter: (any RowValueReader)?, want: Int, ordering: Ordering, after: OrderKey?, snapshot: S,
        pageSize: Int, zone: ZoneID?, visible: (@Sendable (Record) -> Bool)?
    ) {
        self.st = st
        self.sets = sets
        self.residual = residual
        self.matcher = matcher
        self.filter = filter
        self.want = want
        self.ordering = ordering
        self.after = after
        self.pageSize = pageSize
        self.zone = zone
        self.visible = visible
        self.snapshot = snapshot
    }

    /// A reader of the rows' sort values from columns, when every sort is a user field with a
    /// column that holds its values in place (``StreamState/sortKeys``); nil otherwise. A stream
    /// builds each row's record anyway, and a column's heap string, a cache miss away in a
    /// stream's scattered rows, cost more than the record's own bytes (a name sort: +19%).
    func columnSortKeys() -> (any RowValueReader)? {
        guard
            !ordering.sorts.isEmpty,
            ordering.sorts.allSatisfy({ s in
                guard case .field(let f, _) = s else { return false }
                return SystemField.named(f) == nil && snapshot.indexes.columnShare(f) > 0
                    && !snapshot.indexes.columnCopiesStrings(f)
            })
        else { return nil }
        return snapshot.valueReader(FieldSelection(ordering.sorts.map(\.fieldName)))
    }

    func flush() {
        if !st.rowGroup.isEmpty { return flushTies() }
        if st.group.count == 1 {
            // One row level on its first key (a nearest scan's rows, most of a sorted scan's):
            // moved, not copied — a copy retained the record and the group's reset released it.
            st.results.append(st.group.removeLast())
            return
        }
        if st.tiesInIDOrder {
            st.results += st.group
        } else if st.group.count > 1, st.idOrderedTies, !st.groupAscending {
            // Rows in record-id order (a descending scan meets its ties backwards): the
            // tie group sorts by row, with no key built or compared.
            st.results += st.group.sorted { $0.row < $1.row }
        } else if st.group.count > 1, !st.idOrderedTies {
            // Positions are sorted, not the (key, record, row) triples. Admitted rows all
            // have keys; one without would be left out, as before.
            let group = st.group
            let keys = group.map { ordering.key($0.record) }
            let order = group.indices.filter { keys[$0] != nil }.sorted { a, b in
                guard let x = keys[a], let y = keys[b] else { return false }
                return ordering.less(x, y)
            }
            st.results += order.map { group[$0] }
        } else {
            st.results += st.group
        }
        st.group.removeAll(keepingCapacity: true)
    }
    // A group with rows taken by value (`takeByValue`): its rows with records and those
    // without are ordered by record id, and records are built only for the rows the page
    // takes. The store orders them from its rows' keys (`firstRowsByID`: rows of one layer
    // in id order are taken as they are, several layers' merged by their key bytes, stopping
    // at the page), rather than building every tied row's id and sorting the ids.
    func flushTies() {
        defer {
            st.group.removeAll(keepingCapacity: true)
            st.rowGroup.removeAll(keepingCapacity: true)
        }
        let needed = want - st.results.count
        guard needed > 0 else { return }
        var rows = st.group.map(\.row) + st.rowGroup
        rows.sort()
        var limit = needed
        var ordered = snapshot.firstRowsByID(rows, after: nil, zone: nil, limit: limit)
        var i = 0
        while st.results.count < want {
            if i == ordered.count {
                // A row whose record could not be read was left out: the group's further rows.
                guard ordered.count == limit, limit < rows.count else { break }
                limit = rows.count
                ordered = snapshot.firstRowsByID(rows, after: nil, zone: nil, limit: limit)
                guard i < ordered.count else { break }
            }
            let row = ordered[i]
            i += 1
            let taken = st.group.first { $0.row == row }?.record
            guard let r = taken ?? snapshot.record(row, inResultOf: pageSize) else { continue }
            st.results.append(Taken(record: r, row: row))
        }
    }
    // Handles one row of the scan; false stops it.
    func take(_ row: RowID) -> Bool {
        st.scanned += 1
        for s in sets where !s.contains(row) { return true }
        st.passedSets += 1
        if !isRow(row, of: snapshot, in: zone) { return true }
        if let filter {
            // The filters' fields read first: a row they reject is never built.
            guard filter.values(row, into: &st.values), matcher.matches(values: st.values) else {
                return true
            }
        }
        // A tie group grown past `tiesByValueAfter` rows takes its further rows by value.
        if let keys = st.tieKeys, st.group.count + st.rowGroup.count >= StreamState.tiesByValueAfter {
            return takeByValue(row, keys)
        }
        guard let record = snapshot.record(row, inResultOf: pageSize) else { return true }
        if let visible, !visible(record) { return true }
        if !residual.isEmpty, filter == nil {
            guard matcher.matches(record) else { return true }
        }
        st.passedFilter += 1
        let (admitted, first) =
            if let keys = st.sortKeys, keys.values(row, into: &st.sortValues) {
                ordering.admit(values: st.sortValues)
            } else {
                ordering.admit(record, chord2: st.chord2)
            }
        guard admitted else { return true }
        if let after {
            // At or before the resume position: before it on the first value, or level with
            // it there and not after it on the whole key.
            let c = ordering.compareFirst(first, after)
            if c < 0 { return true }
            if c == 0, let key = ordering.key(record), ordering.compare(key, after) <= 0 { return true }
        }
        if !st.group.isEmpty || !st.rowGroup.isEmpty, !sameFirstValue(st.groupFirst, first) {
            flush()
            if st.results.count >= want {
                st.dropped = row
                return false
            }
        }
        if st.group.isEmpty && st.rowGroup.isEmpty {
            st.groupFirst = first
            st.groupAscending = true
        } else if st.idOrderedTies, let last = st.group.last, row <= last.row {
            // Tracked only where it is used: reading the last pair copies its record.
            st.groupAscending = false
        }
        st.group.append(Taken(record: record, row: row))
        // Ties met in record-id order (`idOrder` `.rows`, rows ascending so far; or merged by
        // id across layers): rows still to come level with these have later ids, and the
        // page is complete.
        if st.idOrderedTies, st.groupAscending, st.results.count + st.group.count >= want { return false }
        if st.tiesInIDOrder, st.results.count + st.group.count >= want { return false }
        return true
    }

    // `take` for the rows of a large tie group of a scan whose ties are ordered by record id
    // alone and whose groups are read whole (rows not in id order, or met backwards by a
    // descending scan): the row's sort value is read from its bytes (`keys`), the row kept
    // without its record, and `flush` orders the group by id and builds only the records
    // the page takes. A tie group holding a popular value (a population of 1 000 in hundreds
    // of rows) was read whole, every record built, to order it. (Small groups are taken with
    // their records: the page needs those records anyway, and reading the value first would
    // be one more read of each row.)
    func takeByValue(_ row: RowID, _ keys: any RowValueReader) -> Bool {
        // Counted as the record path counts: a live row that passed the filters, admitted or not.
        guard keys.values(row, into: &st.keyValues) else { return true }
        st.passedFilter += 1
        guard let v = st.keyValues[0], let first = ordering.firstKey(v) else { return true }
        if let after {
            let c = ordering.compareFirst(first, after)
            if c < 0 { return true }
            if c == 0 {
                guard let id = snapshot.recordID(row),
                    ordering.compare(OrderKey(values: [first], recordID: id), after) > 0
                else { return true }
            }
        }
        if !sameFirstValue(st.groupFirst, first) {
            flush()
            if st.results.count >= want {
                st.dropped = row
                return false
            }
            st.groupFirst = first
        }
        st.rowGroup.append(row)
        return true
    }
}

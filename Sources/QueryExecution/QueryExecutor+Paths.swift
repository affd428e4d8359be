// The two execution shapes: ordered streams and row-id sets.

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
    /// (rows with equal first keys are ordered among themselves).
    mutating func executeStream() throws(ExecutionError) -> QueryPage {
        let shape = Self.streamShape(plan.root)
        let scan = shape.scan
        var memberships: [RowMembership] = []
        for c in shape.intersect?.children.dropFirst() ?? [] { memberships.append(try membership(c)) }
        // A constant: a captured `var` cost a dynamic exclusivity check on every row `take`
        // tested (a quarter of a list CONTAINS + sort page).
        let sets = memberships
        let residual = shape.residual
        let matcher = matcher(residual)
        let want = pageSize + 1  // one more than a page tells whether more follow
        var continuation: StreamContinuation? = nil

        // The scan's state lives in a class the nested functions share: captured local `var`s
        // cost a dynamic exclusivity check on every access (10% of a 20-row stream's samples).
        let st = StreamState()
        let ordering = self.ordering
        let after = self.after
        // Read through locals: the nested functions below then capture these, not `self` (a
        // field of the generic `Run` read per row looked up its metadata for the field's offset).
        let snapshot = self.snapshot
        let pageSize = self.pageSize
        let zone = self.zone
        let visible = self.visible
        // The filters' fields, read before a candidate's record (a row they reject is never built).
        let filter = residual.isEmpty ? nil : matcher.selection.map { snapshot.valueReader($0) }

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
        // at the page): building every tied row's id and sorting the ids was 57% of a range +
        // sort page over two layers.
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
            let (admitted, first) = ordering.admit(record, chord2: st.chord2)
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
            // Ties met in record-id order (`rowsInIDOrder`, rows ascending so far; or merged by
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

        switch scan.op {
        case .indexScan(let field, let range, let descending, _):
            let index = try ordered(field)
            let r = seek(range, descending: descending)
            // One sort descriptor, the scanned field's: ties are ordered by record id alone, and
            // the index lists them in row order.
            let tiesByID = ordering.sorts.count == 1 && ordering.sorts[0].fieldName == field
            st.idOrderedTies = tiesByID && snapshot.rowsInIDOrder
            // Layers that each list their rows in id order, merged by id where they tie: an
            // ascending scan then meets its ties in id order, as one layer would. Only where
            // every row scanned is taken (no set or filter to pass): each tie between layers
            // compares two ids read from the rows, and a scan that rejects most of its rows paid
            // that for rows it dropped (equality + sort at 1M with three layers: 135 → 151 µs).
            st.tiesInIDOrder =
                tiesByID && !descending && sets.isEmpty && residual.isEmpty && !snapshot.rowsInIDOrder
                && snapshot.layersInIDOrder && index.ordersTiesAcrossLayers
            // Large tie groups taken by value (`takeByValue`) where a group is read whole: rows
            // not in id order, or a descending scan (which meets its ties backwards). A user
            // field's value is read from the row's bytes; records are needed first only to test
            // visibility or a filter the bytes cannot answer.
            if tiesByID, !st.tiesInIDOrder, !snapshot.rowsInIDOrder || descending, visible == nil,
                residual.isEmpty || filter != nil, SystemField.named(field) == nil
            {
                st.tieKeys = snapshot.valueReader(FieldSelection([field]))
            }
            if !r.isEmpty {
                let tieOrder: ((RowID, RowID) -> Bool)? = st.tiesInIDOrder ? { snapshot.rowPrecedes($0, $1) } : nil
                let direction: ScanDirection = descending ? .descending : .ascending
                if sets.isEmpty, residual.isEmpty, visible == nil, st.tieKeys == nil {
                    // Every row scanned is taken with its record: the rows are taken in batches
                    // whose records are asked for together (as a nearest-first stream's are).
                    var batch = Batch(first: after == nil ? want + 1 : want + 2, limit: want + 1)
                    var stopped = false
                    index.scan(r.valueRange, direction: direction, tieOrder: tieOrder) { row in
                        guard batch.add(row) else { return true }
                        stopped = batch.drain(snapshot) { row, _ in take(row) } != nil
                        return !stopped
                    }
                    if !stopped { _ = batch.drain(snapshot) { row, _ in take(row) } }
                } else {
                    index.scan(r.valueRange, direction: direction, tieOrder: tieOrder) { take($0) }
                }
            }
        case .nearest(let field, let center, let maxKm):
            let (it, stopped, unread) = try streamNearest(
                // A page's rows and the one after them, which tells the page is complete.
                scan.op, field: field, center: center, maxKm: maxKm, batch: want + 1
            ) { row, c2 in
                st.chord2 = c2
                defer { st.chord2 = nil }
                return take(row)
            }
            if stopped {
                let ahead = st.results.dropFirst(pageSize).map(\.row) + (st.dropped.map { [$0] } ?? []) + unread
                continuation = StreamContinuation(scan: scan.op, iterator: it, pending: ahead)
            }
        default:
            throw ExecutionError(message: "internal: \(scan.op) cannot stream")
        }
        flush()

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
        if let c = resume, c.scan == op {
            it = c.iterator
            // Rows the previous page read ahead: taken first; those after a stop stay pending.
            snapshot.prefetchRecords(c.pending[...])
            for k in c.pending.indices where !take(c.pending[k], nil) {
                return (it, true, Array(c.pending[(k + 1)...]))
            }
            offered = c.pending.count
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

    // MARK: - sets

    mutating func executeSet() throws(ExecutionError) -> QueryPage {
        var node = plan.root
        var orderNode: PlanNode? = nil
        switch node.op {
        case .topK, .sort:  // the page size bounds the heap either way
            orderNode = node
            node = node.children[0]
        default: break
        }
        var filterNode: PlanNode? = nil
        var residual: [QueryFilter] = []
        if case .filter(let fs) = node.op {
            filterNode = node
            residual = fs
            node = node.children[0]
        }
        let rows = try rowSet(node)
        let needRecord = !residual.isEmpty || !plan.query.sortDescriptors.isEmpty || visible != nil
        if !needRecord { return idOrderedPage(rows, orderNode: orderNode) }
        // Made only where records are read: its searchable fields are copied out of the indexes.
        let matcher = matcher(residual)
        if plan.query.sortDescriptors.isEmpty {
            // Record-id order: the candidates are filtered, then paged by id like an unfiltered set.
            let passed = filtered(rows, matcher: matcher, residual: residual)
            if let filterNode { count(filterNode, passed.count) }
            return idOrderedPage(passed, orderNode: orderNode)
        }
        let bound = pageSize + 1
        var heap = BoundedHeap(capacity: bound, ordering: ordering)
        var passed = 0
        // Candidates are read for their filter and sort fields only; the page is fetched whole.
        if visible == nil, let (selection, sortSlots) = valueSelection(matcher, residual: residual) {
            // Read from the rows' bytes into one reused buffer: no record per candidate.
            var values: [FieldValue?] = []
            values.reserveCapacity(selection.count)
            let reader = snapshot.valueReader(selection)
            for row in rows {
                guard inZone(row), reader.values(row, into: &values) else { continue }
                if !residual.isEmpty, !matcher.matches(values: values) { continue }
                passed += 1
                guard let sortValues = ordering.keyValues(values, slots: sortSlots) else { continue }
                // A row placed by its sort values alone (after a full heap's largest key, or
                // before the resume position) needs no id: ids are read only for rows that
                // enter the heap or tie (building every candidate's id was 12% of equality +
                // sort pages).
                if let top = heap.fullTop, ordering.compareValues(sortValues, top) > 0 { continue }
                if let after, ordering.compareValues(sortValues, after) < 0 { continue }
                guard let id = snapshot.recordID(row) else { continue }
                let key = OrderKey(values: sortValues, recordID: id)
                if let after, ordering.compare(key, after) <= 0 { continue }
                heap.insert(key, row)
            }
        } else {
            // A token search, a system field or a per-record read rule: (partly decoded) records.
            let fields = readFields(residual)
            for row in rows {
                guard inZone(row), let record = snapshot.record(row, fields: fields) else { continue }
                if let visible, !visible(record) { continue }
                if !residual.isEmpty, !matcher.matches(record) { continue }
                passed += 1
                guard let key = ordering.key(record) else { continue }
                if let after, ordering.compare(key, after) <= 0 { continue }
                heap.insert(key, row)
            }
        }
        if let filterNode { count(filterNode, passed) }
        let ranked = heap.sorted()
        var page: [(OrderKey, Record)] = []
        let pageRows = ranked.prefix(pageSize)
        page.reserveCapacity(pageRows.count)
        snapshot.forEachRecord(pageRows.map(\.1), inResultOf: pageRows.count) { k, r in
            page.append((pageRows[pageRows.startIndex + k].0, r))
        }
        if let orderNode { count(orderNode, page.count) }
        let more = ranked.count > pageSize
        return QueryPage(records: page.map(\.1), next: more ? page.last?.0 : nil, counts: actual)
    }
}

extension Run {
    /// The selection a sorted set plan reads of each candidate — the residual filters' fields
    /// first (the matcher's slots), then the sort fields — and each sort descriptor's slot; nil
    /// when a filter or a sort key needs the whole record (a token search, a system field).
    func valueSelection(_ matcher: RecordMatcher, residual: [QueryFilter]) -> (FieldSelection, [Int])? {
        let sortFields = plan.query.sortDescriptors.map(\.fieldName)
        guard sortFields.allSatisfy({ SystemField.named($0) == nil }) else { return nil }
        let filterFields: [String]
        if residual.isEmpty {
            filterFields = []
        } else if let s = matcher.selection {
            filterFields = s.names
        } else {
            return nil
        }
        let selection = FieldSelection(filterFields + sortFields)
        return (selection, sortFields.map { selection.slot(of: $0) ?? 0 })
    }

    /// The user fields that `residual` and the sort descriptors read (token searches: every
    /// searchable field).
    func readFields(_ residual: [QueryFilter]) -> Set<String> {
        var fields = Set(plan.query.sortDescriptors.map(\.fieldName))
        for f in residual {
            if f.comparator.isTokenSearch {
                fields.formUnion(snapshot.indexes.searchableFields)
            }
            fields.insert(f.fieldName)
        }
        return fields
    }

    /// The rows (ascending) in the zone whose records pass the read rule and the residual
    /// filter (`matcher`'s), each read for the fields `residual` needs only (the matcher's
    /// selection when it has one; else `readFields(residual)`, made only then).
    func filtered(_ rows: [RowID], matcher: RecordMatcher, residual: [QueryFilter]) -> [RowID] {
        let filters = matcher.predicate != .all
        if filters, visible == nil, let selection = matcher.selection {
            // The filters' fields only, read into one reused buffer: no record per candidate.
            // Values are asked for 16–31 rows ahead (mapped columns or rows are read at random).
            var values: [FieldValue?] = []
            values.reserveCapacity(selection.count)
            var out: [RowID] = []
            let reader = snapshot.valueReader(selection)
            let step = 16
            reader.prefetch(rows[..<min(step, rows.count)])
            for (k, row) in rows.enumerated() {
                if k % step == 0, k + step < rows.count {
                    reader.prefetch(rows[(k + step)..<min(k + 2 * step, rows.count)])
                }
                if inZone(row), reader.values(row, into: &values), matcher.matches(values: values) {
                    out.append(row)
                }
            }
            return out
        }
        // Through locals: a closure reading the generic `Run`'s fields looked up its metadata per row.
        let fields = readFields(residual)
        let snapshot = self.snapshot
        let zone = self.zone
        let visible = self.visible
        return rows.filter { row in
            guard isRow(row, of: snapshot, in: zone), let record = snapshot.record(row, fields: fields) else {
                return false
            }
            if let visible, !visible(record) { return false }
            return !filters || matcher.matches(record)
        }
    }

    /// The page of a set plan ordered by record id alone (no sort, no residual filter, no
    /// per-record access rule): the snapshot picks the first rows by id, and only the page's
    /// records are fetched — no order key per candidate, no heap.
    mutating func idOrderedPage(_ rows: [RowID], orderNode: PlanNode?) -> QueryPage {
        let picked = snapshot.firstRowsByID(rows, after: after?.recordID, zone: zone, limit: pageSize + 1)
        var page: [Record] = []
        let pageRows = Array(picked.prefix(pageSize))
        page.reserveCapacity(pageRows.count)
        snapshot.forEachRecord(pageRows, inResultOf: pageRows.count) { _, r in page.append(r) }
        if let orderNode { count(orderNode, page.count) }
        let next = picked.count > pageSize ? page.last.map { OrderKey(values: [], recordID: $0.recordID) } : nil
        return QueryPage(records: page, next: next, counts: actual)
    }
}

/// Rows of an ordered stream gathered before they are taken, so that their records are asked
/// for together (`QuerySnapshot.prefetchRecords`) and their loads overlap. The first batch
/// holds a page and the row after it, which tells the page is complete (one more after a
/// cursor: the row at the cursor comes again); later ones 2 rows, doubling up to `limit` — a
/// row gathered past the page's end is read for nothing. A nearest-first stream's rows come
/// with their squared chords, handed to `take` with them.
struct Batch {
    private var rows: [RowID] = []
    private var chords: [Double] = []
    private var size: Int
    private let limit: Int
    private var later = false

    init(first: Int, limit: Int) {
        size = max(1, first)
        self.limit = max(1, limit)
        rows.reserveCapacity(max(size, self.limit))
    }

    /// Adds `row` (with its squared chord from a nearest scan); true when the batch is full.
    mutating func add(_ row: RowID, chord2: Double? = nil) -> Bool {
        rows.append(row)
        if let chord2 { chords.append(chord2) }
        return rows.count >= size
    }

    /// Asks for the batch's records, then takes its rows in order until `take` stops; returns
    /// nil when every row was taken, else the rows after the one that stopped it. The batch is
    /// emptied and the next one sized.
    mutating func drain<S: QuerySnapshot>(_ snapshot: S, _ take: (RowID, Double?) -> Bool) -> [RowID]? {
        defer {
            rows.removeAll(keepingCapacity: true)
            chords.removeAll(keepingCapacity: true)
            size = later ? min(limit, 2 * size) : 2
            later = true
        }
        if rows.isEmpty { return nil }
        snapshot.prefetchRecords(rows[...])
        let withChords = chords.count == rows.count
        for k in rows.indices where !take(rows[k], withChords ? chords[k] : nil) {
            return Array(rows[(k + 1)...])
        }
        return nil
    }
}

/// Keeps the `capacity` smallest keys seen: a heap whose top is the largest kept key under the
/// query's order, replaced whenever a smaller one arrives.
struct BoundedHeap {
    struct Reversed: HeapOrder {
        let ordering: Ordering
        @inline(__always)
        func less(_ a: (OrderKey, RowID), _ b: (OrderKey, RowID)) -> Bool { ordering.less(b.0, a.0) }
    }

    let capacity: Int
    let ordering: Ordering
    var heap: BinaryHeap<Reversed>

    init(capacity: Int, ordering: Ordering) {
        self.capacity = capacity
        self.ordering = ordering
        heap = BinaryHeap(order: Reversed(ordering: ordering), capacity: min(capacity, 4096))
    }

    mutating func insert(_ key: OrderKey, _ row: RowID) {
        guard capacity > 0 else { return }
        if heap.count < capacity {
            heap.push((key, row))
        } else if let top = heap.top, ordering.less(key, top.0) {
            heap.replaceTop((key, row))
        }
    }

    /// The largest kept key once `capacity` keys are kept (a key after it is not kept); nil before.
    var fullTop: OrderKey? { capacity > 0 && heap.count >= capacity ? heap.top?.0 : nil }

    /// The kept items in the query's order.
    func sorted() -> [(OrderKey, RowID)] { heap.unordered.sorted { ordering.less($0.0, $1.0) } }
}

/// Whether two rows share the value a stream is ordered by (the first sort value; for record-id
/// order, nil, every row is its own group). Not a static of the generic `Run`: a call through
/// `Self` looked up `Run<S>`'s metadata for every row.
func sameFirstValue(_ a: FieldValue?, _ b: FieldValue?) -> Bool {
    guard let a, let b else { return false }
    return FieldValue.compare(a, b) == 0
}

/// A row an ordered scan took, with its record. (A struct, not a tuple: the executor is not
/// specialized across modules, and arrays of tuples were copied and destroyed through the
/// runtime's generic tuple witnesses.)
struct Taken {
    /// The row's record, as the page returns it.
    let record: Record
    /// The row.
    let row: RowID
}

/// An ordered stream's state while it scans, shared by the scan's nested functions (see
/// `executeStream`). Used by one scan on one thread, so its accesses are not checked.
final class StreamState {
    /// Rows taken, in order, without their keys.
    @exclusivity(unchecked) var results: [Taken] = []
    /// Rows level on the first sort value, not yet ordered among themselves.
    @exclusivity(unchecked) var group: [Taken] = []
    /// The group's first sort value.
    @exclusivity(unchecked) var groupFirst: FieldValue? = nil
    /// Whether the group's rows came in ascending order.
    @exclusivity(unchecked) var groupAscending = true
    /// Whether ascending rows level on the first sort value are in the query's order (one sort
    /// descriptor, the scanned field; rows in record-id order): such a group needs no sort.
    @exclusivity(unchecked) var idOrderedTies = false
    /// Whether rows level on the first sort value come in record-id order though not in row
    /// order (an ascending scan merging its layers' ties by id): such a group needs no sort
    /// either, and the scan stops at a full page.
    @exclusivity(unchecked) var tiesInIDOrder = false
    /// The row that stopped the scan (read ahead for the next page).
    @exclusivity(unchecked) var dropped: RowID? = nil
    @exclusivity(unchecked) var scanned = 0
    @exclusivity(unchecked) var passedSets = 0
    @exclusivity(unchecked) var passedFilter = 0
    /// The residual filters' values of the current row.
    @exclusivity(unchecked) var values: [FieldValue?] = []
    /// Reads the scanned field's value of a row, when ties are ordered by id from the rows'
    /// keys (`takeByValue`); nil otherwise.
    @exclusivity(unchecked) var tieKeys: (any RowValueReader)? = nil
    /// The current row's value of the scanned field (`tieKeys`).
    @exclusivity(unchecked) var keyValues: [FieldValue?] = []
    /// Rows level on the first sort value taken by value, without their records (`tieKeys`):
    /// the rows of the current group after its first `tiesByValueAfter`.
    @exclusivity(unchecked) var rowGroup: [RowID] = []
    /// How many rows of a tie group are taken with their records before the rest are taken by
    /// value (`takeByValue`).
    static let tiesByValueAfter = 16
    /// The current row's squared chord from a nearest scan's centre, as the scan computed it
    /// (nil: not from a nearest scan, or a read-ahead row): its first key without reading its
    /// record's location.
    @exclusivity(unchecked) var chord2: Double? = nil
}

// The second execution shape: row-id sets, filtered, then sorted into a page (a bounded heap
// or a sort); and what a sorted set reads of each candidate.

import Indexes
import QueryPlanner
import RecordModel

extension Run {
    // MARK: - sets

    mutating func executeSet() throws(ExecutionError) -> QueryPage {
        if case .ranked(let rest, let complete)? = resume?.state, complete || rest.count > pageSize {
            return rankedPage(rest, complete: complete)
        }
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
        let bound = keepsRanking ? max(pageSize + 1, StreamContinuation.rankedCapacity) : pageSize + 1
        var heap = BoundedHeap(capacity: bound, ordering: ordering)
        let passed = rank(rows, into: &heap, matcher: matcher, residual: residual)
        if let filterNode { count(filterNode, passed) }
        let ranked = heap.sorted()
        if keepsRanking {
            let rows = ranked.map { RankedRow(key: $0.0, row: $0.1) }
            let page = rankedPage(rows[...], complete: ranked.count < bound)
            if let orderNode { count(orderNode, page.records.count) }
            return page
        }
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

    /// Puts the candidates `rows` that are in the zone, visible and pass `residual` into `heap`
    /// by their sort keys (those after the resume position); returns how many passed. Candidates
    /// are read for their filter and sort fields only; the page is fetched whole afterwards.
    func rank(
        _ rows: [RowID], into heap: inout BoundedHeap, matcher: RecordMatcher, residual: [QueryFilter]
    ) -> Int {
        var passed = 0
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
                // enter the heap or tie, not built for every candidate.
                if let c = heap.compareWithTop(sortValues), c > 0 { continue }
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
        return passed
    }

    /// Whether this page ranks the rows after it too, for the pages that follow (a
    /// ``StreamContinuation``): from the second page on — a result read past its first page is
    /// likely read further — and only without a per-record read rule (the rows kept passed this
    /// reader's rule; the continuation is keyed by the cursor, not the reader).
    var keepsRanking: Bool { after != nil && visible == nil }

    /// The page at the head of `rest` (rows in the query's order that passed every test) and the
    /// continuation after it. `complete`: `rest` ends where the results do; otherwise more rows
    /// may follow it, and the caller serves from it only while it holds more than a page.
    mutating func rankedPage(_ rest: ArraySlice<RankedRow>, complete: Bool) -> QueryPage {
        let pageRows = rest.prefix(pageSize)
        var records: [Record] = []
        records.reserveCapacity(pageRows.count)
        snapshot.forEachRecord(pageRows.map(\.row), inResultOf: pageRows.count) { _, r in records.append(r) }
        let more = rest.count > pageSize || !complete
        guard more, let last = records.last else {
            return QueryPage(records: records, next: nil, counts: actual)
        }
        let next = pageRows.last?.key ?? OrderKey(values: [], recordID: last.recordID)
        let after = rest.dropFirst(pageSize)
        let continuation =
            after.isEmpty && complete ? nil : StreamContinuation(state: .ranked(after, complete: complete))
        return QueryPage(records: records, next: next, counts: actual, continuation: continuation)
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
        if keepsRanking {
            let limit = max(pageSize + 1, StreamContinuation.rankedCapacity)
            let picked = snapshot.firstRowsByID(rows, after: after?.recordID, zone: zone, limit: limit)
            let page = rankedPage(picked.map { RankedRow(key: nil, row: $0) }[...], complete: picked.count < limit)
            if let orderNode { count(orderNode, page.records.count) }
            return page
        }
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

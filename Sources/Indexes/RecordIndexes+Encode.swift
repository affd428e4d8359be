// RecordIndexes+Encode: the index sections of a table's rows, for a checkpoint's index segment
// (docs/index-segment-format.md).

import Foundation
import RecordModel

extension RecordIndexes {
    /// The index sections of a table's rows (given in row order), for a checkpoint's index segment.
    public static func encodeSections<S: Sequence>(
        schema: RecordTypeSchema, rows: S, columnsFrom start: Int? = nil
    ) -> [(name: String, bytes: [UInt8])]
    where S.Element == (RowID, Record) {
        encodeSections(schema: schema, rows: rows, columnsFrom: start, isCancelled: { false }) ?? []
    }

    /// ``encodeSections(schema:rows:columnsFrom:)``, stopped when `isCancelled` answers true
    /// (asked every few thousand rows and before each section is built): nil then.
    public static func encodeSections<S: Sequence>(
        schema: RecordTypeSchema, rows: S, columnsFrom start: Int? = nil, isCancelled: @escaping @Sendable () -> Bool
    ) -> [(name: String, bytes: [UInt8])]?
    where S.Element == (RowID, Record) {
        encodeSections(schema: schema, parts: [rows], columnsFrom: start, isCancelled: isCancelled)
    }

    /// The index sections of a table's rows given as consecutive `parts` (each in row order, the
    /// first rows in the first part): the parts are read on all cores at once, so each must be
    /// safe to iterate beside the others (rows decoded from a mapped file are). Nil when
    /// cancelled.
    public static func encodeSections<S: Sequence>(
        schema: RecordTypeSchema, parts: [S], columnsFrom start: Int? = nil,
        isCancelled: @escaping @Sendable () -> Bool
    ) -> [(name: String, bytes: [UInt8])]?
    where S.Element == (RowID, Record) {
        let plan = IndexPlan(schema)
        if plan.ordered.isEmpty && plan.searchable.isEmpty && plan.spatial.isEmpty { return [] }
        // One pass over each part's rows (they may be decoded from a mapped file on the fly).
        var read: [SectionInputs?] = Array(repeating: nil, count: parts.count)
        if parts.count == 1 {
            read[0] = SectionInputs.read(parts[0], plan: plan, columns: start != nil, isCancelled: isCancelled)
        } else {
            read.withUnsafeMutableBufferPointer { out in
                nonisolated(unsafe) let out = out
                nonisolated(unsafe) let parts = parts
                DispatchQueue.concurrentPerform(iterations: parts.count) { k in
                    out[k] = SectionInputs.read(parts[k], plan: plan, columns: start != nil, isCancelled: isCancelled)
                }
            }
        }
        // Each part is taken out of `read` as it is joined, so that its arrays are not held twice.
        guard var inputs = read[0].take() else { return nil }  // cancelled
        if let f = inputs.first, f != start { inputs.dropColumns() }
        for k in read.indices.dropFirst() {
            guard let part = read[k].take() else { return nil }  // cancelled
            inputs.append(part, columnsFrom: start)
        }
        let values = inputs.values
        let texts = inputs.texts
        let points = inputs.points
        let columnValues = inputs.columnsValid ? inputs.columnValues : []
        // The sections are independent: build them on all cores (each sorts its own entries),
        // longest first — the text section (every string tokenized), then the rest by entry
        // count — so that no core is left with one long job at the end.
        var jobs: [(name: String, cost: Int, build: @Sendable () -> [UInt8])] = []
        for (i, (field, fam)) in plan.ordered.enumerated() {
            let v = values[i]
            jobs.append((sectionName(field), v.count, { StaticOrdered.encode(family: fam, entries: v) }))
        }
        if !plan.searchable.isEmpty {
            let t = texts
            jobs.append(
                (textSectionName(plan.searchable), Int.max, { StaticText.encode(rows: t, isCancelled: isCancelled) }))
        }
        for (i, name) in plan.spatial.enumerated() {
            let p = points[i]
            jobs.append(("spatial:" + name, p.count, { StaticRTree.encode(points: p) }))
        }
        let results = SectionResults(count: jobs.count)
        let builds = jobs.map(\.build)
        let order = jobs.indices.sorted { jobs[$0].cost > jobs[$1].cost }  // the sections stay in plan order
        DispatchQueue.concurrentPerform(iterations: builds.count) { k in
            let i = order[k]
            if !isCancelled() { results.set(i, builds[i]()) }
        }
        if isCancelled() { return nil }
        var out = jobs.indices.map { (name: jobs[$0].name, bytes: results.get($0)) }
        for (i, values) in columnValues.enumerated() {
            if let bytes = StaticColumn.encode(values) { out.append((columnSectionName(plan.columns[i]), bytes)) }
        }
        return out
    }
}

/// The entries one pass over rows collects for `encodeSections`: ordered values, texts, points
/// and column values (kept while the rows are consecutive).
struct SectionInputs {
    var values: [[(FieldValue, RowID)]]
    var texts: [(RowID, [String])] = []
    var points: [[(RowID, Location)]]
    var columnValues: [[FieldValue?]]
    /// The first and last rows seen (nil before any), and whether they were consecutive.
    var first: Int?
    var last: Int?
    var columnsValid: Bool

    init(plan: IndexPlan, columns: Bool) {
        values = Array(repeating: [], count: plan.ordered.count)
        points = Array(repeating: [], count: plan.spatial.count)
        columnValues = Array(repeating: [], count: columns ? plan.columns.count : 0)
        columnsValid = columns
    }

    /// One part's entries; nil when cancelled.
    static func read<S: Sequence>(
        _ rows: S, plan: IndexPlan, columns: Bool, isCancelled: () -> Bool
    ) -> SectionInputs? where S.Element == (RowID, Record) {
        var inputs = SectionInputs(plan: plan, columns: columns)
        var n = 0
        for (row, rec) in rows {
            n &+= 1
            if n & 4095 == 0, isCancelled() { return nil }
            for (i, (field, _)) in plan.ordered.enumerated() {
                if let v = RecordIndexes.value(field, rec) { inputs.values[i].append((v, row)) }
            }
            if inputs.columnsValid {
                if let last = inputs.last, Int(row) != last + 1 {
                    inputs.dropColumns()
                } else {
                    for (i, name) in plan.columns.enumerated() { inputs.columnValues[i].append(rec.fields[name]) }
                }
            }
            if inputs.first == nil { inputs.first = Int(row) }
            inputs.last = Int(row)
            if !plan.searchable.isEmpty { inputs.texts.append((row, RecordIndexes.texts(plan.searchable, rec))) }
            for (i, name) in plan.spatial.enumerated() {
                if let l = RecordIndexes.location(name, rec) { inputs.points[i].append((row, l)) }
            }
        }
        return inputs
    }

    /// No columns: the rows are not one layer's, consecutively from its first.
    mutating func dropColumns() {
        columnsValid = false
        columnValues = []
    }

    /// Appends the next part's entries. Columns stay valid while the rows run on consecutively
    /// from `start` (the layer's first row).
    mutating func append(_ next: SectionInputs, columnsFrom start: Int?) {
        for i in values.indices { values[i] += next.values[i] }
        texts += next.texts
        for i in points.indices { points[i] += next.points[i] }
        if let f = next.first {
            if columnsValid {
                let expected = last.map { $0 + 1 } ?? start
                if next.columnsValid && f == expected {
                    for i in columnValues.indices { columnValues[i] += next.columnValues[i] }
                } else {
                    dropColumns()
                }
            }
            if first == nil { first = f }
            last = next.last
        }
    }
}

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
        let plan = IndexPlan(schema)
        if plan.ordered.isEmpty && plan.searchable.isEmpty && plan.spatial.isEmpty { return [] }
        // One pass over the rows (they may be decoded from a mapped file on the fly).
        var values: [[(FieldValue, RowID)]] = Array(repeating: [], count: plan.ordered.count)
        var texts: [(RowID, [String])] = []
        var points: [[(RowID, Location)]] = Array(repeating: [], count: plan.spatial.count)
        // Columns hold a layer's rows in order from `start`; rows that are not consecutive
        // from there (not a layer) get none.
        var columnValues: [[FieldValue?]] = Array(repeating: [], count: start == nil ? 0 : plan.columns.count)
        var next = start ?? 0
        var read = 0
        for (row, rec) in rows {
            read &+= 1
            if read & 4095 == 0, isCancelled() { return nil }
            for (i, (field, _)) in plan.ordered.enumerated() {
                if let v = value(field, rec) { values[i].append((v, row)) }
            }
            if !columnValues.isEmpty {
                if Int(row) == next {
                    for (i, name) in plan.columns.enumerated() { columnValues[i].append(rec.fields[name]) }
                    next += 1
                } else {
                    columnValues = []
                }
            }
            if !plan.searchable.isEmpty { texts.append((row, Self.texts(plan.searchable, rec))) }
            for (i, name) in plan.spatial.enumerated() { if let l = location(name, rec) { points[i].append((row, l)) } }
        }
        // The sections are independent: build them on all cores (each sorts its own entries).
        var jobs: [(name: String, build: @Sendable () -> [UInt8])] = []
        for (i, (field, fam)) in plan.ordered.enumerated() {
            let v = values[i]
            jobs.append((sectionName(field), { StaticOrdered.encode(family: fam, entries: v) }))
        }
        if !plan.searchable.isEmpty {
            let t = texts
            jobs.append((textSectionName(plan.searchable), { StaticText.encode(rows: t, isCancelled: isCancelled) }))
        }
        for (i, name) in plan.spatial.enumerated() {
            let p = points[i]
            jobs.append(("spatial:" + name, { StaticRTree.encode(points: p) }))
        }
        let results = SectionResults(count: jobs.count)
        let builds = jobs.map(\.build)
        DispatchQueue.concurrentPerform(iterations: builds.count) { i in
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

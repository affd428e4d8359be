// RecordIndexes+Open: a table's indexes over a checkpoint's layers — every index's section mapped
// from each layer's index segment (nothing decoded), the dead rows taken out by their `dead/`
// sections, and each index whose section is missing or fails its checks built from the rows
// instead (`rebuilt`, `damaged`): derived data is never load-bearing.

import Foundation
import RecordModel

extension RecordIndexes {
    /// Builds the indexes of a table whose base rows live in a checkpoint's layers (oldest first,
    /// each layer's rows numbered after the previous one's): each index maps its section from
    /// every layer (by name, see `sectionNames`); an index whose section is missing or unreadable
    /// in any layer (added to the schema after the checkpoint, or damaged) is built in memory
    /// from `rows()` instead, and listed in `rebuilt`.
    public init(schema: RecordTypeSchema, layers: [IndexLayer], nodeSize: Int = 64, rows: () -> [(RowID, Record)]) {
        let plan = IndexPlan(schema)
        parts = DeferredCopyOnWrite(Storage(recordType: schema.name, searchableFields: plan.searchable))
        let starts = BaseLayers(rowCounts: layers.map(\.rowCount))
        var loaded: [(RowID, Record)]?
        func all() -> [(RowID, Record)] {
            if let loaded { return loaded }
            let r = rows()
            loaded = r
            return r
        }
        // Every layer's section, or nil when one is missing or does not open: that index is
        // rebuilt from the rows and named in `rebuilt` (and a section that fails its checks in
        // `damaged`), which the caller reports. Too many layers for the nearest iterator also
        // rebuilds.
        var damaged: [DamagedIndexSection] = []
        func mapped<T>(_ name: String, _ open: (SectionBytes) throws(IndexSectionError) -> T?) -> [T]? {
            guard layers.count <= NearestIterator.maxBaseLayers else { return nil }
            return Self.openEvery(layers.enumerated().map { ($0, $1.sections[name]) }, &damaged, open)
        }
        for (field, fam) in plan.ordered {
            let name = Self.sectionName(field)
            if let bases = mapped(
                name,
                { s throws(IndexSectionError) in
                    let t = try StaticOrdered(s)
                    return t.family == fam ? t : nil
                })
            {
                ordered[field] = OrderedIndex(bases: bases, layers: starts, family: fam, nodeSize: nodeSize)
            } else {
                rebuilt.append(name)
                ordered[field] = OrderedIndex(
                    family: fam,
                    entries: all().lazy.compactMap { (row, rec) in Self.value(field, rec).map { ($0, row) } },
                    nodeSize: nodeSize)
            }
        }
        if !plan.searchable.isEmpty {
            let name = Self.textSectionName(plan.searchable)
            if let bases = mapped(name, { s throws(IndexSectionError) in try StaticText(s) }) {
                text = TextIndex(bases: bases, layers: starts)
            } else {
                rebuilt.append(name)
                text = TextIndex(rows: all().lazy.map { (row, rec) in (row, Self.texts(plan.searchable, rec)) })
            }
        }
        for field in plan.spatial {
            let name = "spatial:" + field
            if let bases = mapped(name, { s throws(IndexSectionError) in try StaticRTree(s) }) {
                spatial[field] = SpatialIndex(bases: bases, layers: starts, nodeSize: nodeSize)
            } else {
                rebuilt.append(name)
                spatial[field] = SpatialIndex(
                    points: all().lazy.compactMap { (row, rec) in Self.location(field, rec).map { (row, $0) } },
                    nodeSize: nodeSize)
            }
        }
        let columns = Self.openColumns(plan.columns, layers, &damaged)
        parts.contents.columns = columns
        parts.contents.baseLayers = starts
        parts.contents.damaged = damaged
        rowCount = starts.rowCount
        removeDeadRows(plan, layers)
    }

    /// Each of `fields`' columns in every layer, for the fields some layer has one for. Columns
    /// are read per layer: a layer without one (written before columns existed, or damaged —
    /// added to `damaged`) has its rows' values decoded from their bytes instead.
    static func openColumns(
        _ fields: [String], _ layers: [IndexLayer], _ damaged: inout [DamagedIndexSection]
    ) -> [(field: String, layers: [StaticColumn?])] {
        var columns: [(field: String, layers: [StaticColumn?])] = []
        for field in fields {
            let perLayer = layers.enumerated().map { (k, l) -> StaticColumn? in
                guard let s = l.sections[Self.columnSectionName(field)] else { return nil }
                do throws(IndexSectionError) {
                    let c = try StaticColumn(s)
                    guard c.count == l.rowCount else {
                        throw IndexSectionError(s.name, offset: 0, "\(c.count) values for \(l.rowCount) rows")
                    }
                    return c
                } catch {
                    damaged.append(DamagedIndexSection(layer: k, error: error))
                    return nil
                }
            }
            if perLayer.contains(where: { $0 != nil }) { columns.append((field, perLayer)) }
        }
        return columns
    }

    /// Every layer's section opened by `open`; nil when one is missing, of another kind (`open`
    /// returns nil) or fails its checks (added to `damaged` with its layer).
    static func openEvery<T>(
        _ sections: [(layer: Int, section: SectionBytes?)], _ damaged: inout [DamagedIndexSection],
        _ open: (SectionBytes) throws(IndexSectionError) -> T?
    ) -> [T]? {
        var out: [T] = []
        for (k, section) in sections {
            guard let s = section else { return nil }
            do {
                guard let t = try open(s) else { return nil }
                out.append(t)
            } catch {
                damaged.append(DamagedIndexSection(layer: k, error: error))
                return nil
            }
        }
        return out
    }

    /// Section name of a field's column.
    static func columnSectionName(_ field: String) -> String { "column:" + field }

    /// The fields with a column in at least one base layer.
    public var columnFields: [String] { parts.contents.columns.map(\.field) }

    /// The share of the rows (0–1) whose values of `field` come from columns: the share of the
    /// base rows whose columns hold their value (not their row only) when every base layer has
    /// a column of the field, else 0 (a planner estimate: removed and overlaid base rows are not
    /// told apart).
    public func columnShare(_ field: String) -> Double {
        guard rowCount > 0, let column = parts.contents.columns.first(where: { $0.field == field }),
            !column.layers.contains(where: { $0 == nil })
        else { return 0 }
        let held = column.layers.reduce(0) { $0 + ($1?.inRowCount ?? 0) }
        return min(1, Double(max(0, parts.contents.baseLayers.rowCount - held)) / Double(rowCount))
    }

    /// Whether some base layer's column of `field` copies strings into its heap or leaves values
    /// in their rows (`StaticColumn`): reading such a value costs a third load (the heap) or the
    /// row itself, no less than reading it from a record whose bytes were just read.
    public func columnCopiesStrings(_ field: String) -> Bool {
        guard let column = parts.contents.columns.first(where: { $0.field == field }) else { return false }
        return column.layers.contains { ($0?.heapCount ?? 0) > 0 || ($0?.inRowCount ?? 0) > 0 }
    }

    /// A reader of `selection`'s values from the base layers' columns, the columns found once
    /// for every row read after; nil when some selected field has no column in any layer (the
    /// values then come from the rows' bytes).
    public func columnReader(_ selection: FieldSelection) -> ColumnReader? {
        parts.contents.columns.isEmpty
            ? nil : ColumnReader(selection, columns: parts.contents.columns, baseLayers: parts.contents.baseLayers)
    }

    /// Takes the layers' dead rows out of the mapped indexes from their `dead/` sections, all
    /// or nothing (see `deadRowsRemoved`); indexes rebuilt from the live rows never had them.
    mutating func removeDeadRows(_ plan: IndexPlan, _ layers: [IndexLayer]) {
        let killing = layers.enumerated().filter { !$0.element.dead.isEmpty }
        guard !killing.isEmpty else { return }
        let dead = RowBitmap(sorted: RowBitmap.union(killing.map(\.element.dead)))
        let skip = Set(rebuilt)
        // A `dead/` section that fails its checks is reported (`damaged`); the dead rows are then
        // decoded instead.
        func sections<T>(_ name: String, _ open: (SectionBytes) throws(IndexSectionError) -> T?) -> [T]? {
            Self.openEvery(killing.map { ($0, $1.deadSections[name]) }, &damaged, open)
        }
        var orderedDead: [(IndexedField, [StaticOrdered])] = []
        for (field, fam) in plan.ordered where !skip.contains(Self.sectionName(field)) {
            guard
                let d = sections(
                    Self.sectionName(field),
                    { s throws(IndexSectionError) in
                        let t = try StaticOrdered(s)
                        return t.family == fam ? t : nil
                    })
            else {
                deadRowsRemoved = false
                return
            }
            orderedDead.append((field, d))
        }
        var textDead: [StaticText]?
        if !plan.searchable.isEmpty, !skip.contains(Self.textSectionName(plan.searchable)) {
            guard
                let d = sections(
                    Self.textSectionName(plan.searchable), { s throws(IndexSectionError) in try StaticText(s) })
            else {
                deadRowsRemoved = false
                return
            }
            textDead = d
        }
        var spatialDead: [(String, Int)] = []
        for field in plan.spatial where !skip.contains("spatial:" + field) {
            guard let d = sections("spatial:" + field, { s throws(IndexSectionError) in try StaticRTree(s) }) else {
                deadRowsRemoved = false
                return
            }
            spatialDead.append((field, d.reduce(0) { $0 + $1.count }))
        }
        for (field, d) in orderedDead { ordered[field]?.setDead(rows: dead, entries: d) }
        if let textDead { text?.setDead(rows: dead, postings: textDead) }
        for (field, n) in spatialDead { spatial[field]?.setDead(rows: dead, points: n) }
        rowCount -= dead.count
    }
}

/// A mapped index section that failed its structure checks when a table's indexes were opened:
/// the base layer it belongs to (oldest first) and what is wrong. The index is rebuilt from the
/// rows instead (columns and `dead/` sections: the rows are decoded instead).
public struct DamagedIndexSection: Sendable, Hashable {
    /// The layer (0 = oldest) whose index segment holds the section.
    public var layer: Int
    /// The section, the offset inside it and the reason.
    public var error: IndexSectionError
}

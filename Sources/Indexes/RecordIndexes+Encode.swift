// RecordIndexes+Encode: the index sections of a table's rows, for a checkpoint's index segment
// (docs/index-segment-format.md).

import CPrefetch
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
        var out: [(name: String, bytes: [UInt8])] = []
        // Collecting never throws: nil only when cancelled.
        let done = try? encodeSections(
            schema: schema, parts: parts, columnsFrom: start, isCancelled: isCancelled,
            emit: { out.append(($0, $1)) })
        return done == true ? out : nil
    }

    /// The index sections of a table's rows given as consecutive `parts`, each handed to `emit`
    /// as soon as it and those scheduled before it are built — so that a checkpoint writes them
    /// to its segment as they come instead of holding every section's bytes. The order is fixed
    /// by the rows (largest first). `emit` is called on one thread at a time; what it throws is
    /// rethrown (and builds still running finish without emitting). False when cancelled.
    ///
    /// With `rows` (how many the parts hold), the sections whose entries would together take more
    /// than `memoryBudget` bytes are built in several passes over the rows, each collecting the
    /// entries of only some sections (grouped by their size estimated from the first rows): the
    /// parts are then iterated once per pass, so they must be re-iterable (a collection, or rows
    /// read from a segment). Without it, one pass.
    public static func encodeSections<S: Sequence>(
        schema: RecordTypeSchema, parts: [S], columnsFrom start: Int? = nil, rows: Int? = nil,
        memoryBudget: Int = sectionMemoryBudget, isCancelled: @escaping @Sendable () -> Bool,
        emit: (String, [UInt8]) throws -> Void
    ) throws -> Bool
    where S.Element == (RowID, Record) {
        let plan = IndexPlan(schema)
        if plan.ordered.isEmpty && plan.searchable.isEmpty && plan.spatial.isEmpty { return true }
        var passes =
            if let rows, let first = parts.first {
                plan.passes(sample: first.prefix(sampleRows), rows: rows, budget: memoryBudget)
            } else {
                [plan]
            }
        if passes.count > 1, !plan.searchable.isEmpty {
            // Bounded: the text section from exact counts (two passes of its own), when the rows
            // ascend; otherwise it stays in its pass.
            if let text = StaticText.encode(parts: parts, fields: plan.searchable, isCancelled: isCancelled) {
                try emit(textSectionName(plan.searchable), text)
                cirrus_malloc_trim()
                passes = passes.compactMap { p in
                    var p = p
                    p.searchable = []
                    return p.ordered.isEmpty && p.spatial.isEmpty && p.columns.isEmpty ? nil : p
                }
            } else if isCancelled() {
                return false
            }
        }
        for pass in passes {
            let bounded = passes.count > 1
            guard
                try encodePass(pass, parts: parts, columnsFrom: start, isCancelled: isCancelled, emit: emit)
            else {
                return false
            }
            // The pass's entries were freed on both cores' heaps, which glibc keeps for reuse:
            // handed back, the next pass starts from what the process holds without them.
            if bounded { cirrus_malloc_trim() }
        }
        return true
    }

    /// The memory the entries of one pass of ``encodeSections(schema:parts:columnsFrom:rows:memoryBudget:isCancelled:emit:)``
    /// may take, as estimated (256 MiB). Passes are made only when all the entries would take
    /// more than 8 times this (2 GiB): below that — about 2M rows of a record type with half a
    /// dozen indexed fields — passes cost time and save little (an import's add phase holds more).
    public static let sectionMemoryBudget = 256 << 20

    /// The rows whose entries estimate the size of each section's entries.
    static let sampleRows = 4096

    /// One pass: the rows read once for the sections of `plan`, then each built and emitted.
    static func encodePass<S: Sequence>(
        _ plan: IndexPlan, parts: [S], columnsFrom start: Int?,
        isCancelled: @escaping @Sendable () -> Bool, emit: (String, [UInt8]) throws -> Void
    ) throws -> Bool
    where S.Element == (RowID, Record) {
        guard var inputs = readParts(parts, plan: plan, columnsFrom: start, isCancelled: isCancelled) else {
            return false
        }
        // The entries move into boxes that each section's job empties, so that a job sorts its
        // entries in place and no array is held twice.
        let costs = zip(inputs.fixed, inputs.variable).map { $0.count + $1.count }
        let fixed = inputs.fixed.map(Taken.init)
        let variable = inputs.variable.map(Taken.init)
        let postings = Taken((inputs.postings, inputs.textsOrdered))
        let columns = (inputs.columnsValid ? inputs.columns : []).map(Taken.init)
        let pointCounts = inputs.points.map(\.count)
        let points = inputs.points.map(Taken.init)
        inputs = SectionInputs(plan: plan, columns: false)
        // The sections are independent: build them on all cores (each sorts its own entries),
        // longest first — the text section, then the rest by entry count, the columns last — so
        // that no core is left with one long job at the end.
        var jobs: [(name: String, cost: Int, build: @Sendable () -> [UInt8]?)] = []
        for (i, (field, fam)) in plan.ordered.enumerated() {
            let (f, v) = (fixed[i], variable[i])
            jobs.append(
                (
                    sectionName(field), costs[i],
                    {
                        fam.isFixed
                            ? StaticOrdered.encode(family: fam, fixed: f.take() ?? [])
                            : StaticOrdered.encode(family: fam, variable: v.take() ?? [])
                    }
                ))
        }
        if !plan.searchable.isEmpty {
            jobs.append(
                (
                    textSectionName(plan.searchable), Int.max,
                    {
                        let (p, ordered) = postings.take() ?? ([:], true)
                        return StaticText.encode(postings: p, ordered: ordered)
                    }
                ))
        }
        for (i, name) in plan.spatial.enumerated() {
            let p = points[i]
            jobs.append(("spatial:" + name, pointCounts[i], { StaticRTree.encode(points: p.take() ?? []) }))
        }
        for (i, c) in columns.enumerated() {
            jobs.append((columnSectionName(plan.columns[i]), -1, { c.take()?.encode() }))
        }
        let order = jobs.indices.sorted { jobs[$0].cost > jobs[$1].cost }
        let names = order.map { jobs[$0].name }
        let builds = order.map { jobs[$0].build }
        // `emit` does not escape: every build has ended (and the emitter is gone) when this returns.
        let error = withoutActuallyEscaping(emit) { emit in
            let emitter = SectionEmitter(names: names, emit: emit)
            DispatchQueue.concurrentPerform(iterations: builds.count) { k in
                emitter.built(k, isCancelled() || emitter.failed ? nil : builds[k]())
            }
            return emitter.error
        }
        if let error { throw error }
        return !isCancelled()
    }

    /// Each part's entries, read on all cores and joined in order; nil when cancelled.
    static func readParts<S: Sequence>(
        _ parts: [S], plan: IndexPlan, columnsFrom start: Int?, isCancelled: @escaping @Sendable () -> Bool
    ) -> SectionInputs? where S.Element == (RowID, Record) {
        // One pass over each part's rows (they may be decoded from a mapped file on the fly).
        var read = parts.mapOnAllCores { part in
            SectionInputs.read(part, plan: plan, columns: start != nil, isCancelled: isCancelled)
        }
        // Each part is taken out of `read` as it is joined, so that its arrays are not held twice.
        guard var inputs = read[0].take() else { return nil }  // cancelled
        if let f = inputs.first, f != start { inputs.dropColumns() }
        for k in read.indices.dropFirst() {
            guard let part = read[k].take() else { return nil }  // cancelled
            inputs.append(part, columnsFrom: start)
        }
        return inputs
    }
}

/// The entries one pass over rows collects for `encodeSections`, already in the form the
/// sections sort: each ordered field's keys, the text postings (tokenized here, on the part's
/// core), the points, and the column values (kept while the rows are consecutive). No record
/// and no string of a row is held past its row.
struct SectionInputs {
    /// Each ordered field's entries (plan order): in `fixed[i]` for a fixed-width family, in
    /// `variable[i]` otherwise (the other stays empty). A list gives one entry per element.
    var fixed: [[(FixedKey, RowID)]]
    var variable: [[(VarKey, RowID)]]
    /// Each token's rows: ascending, a row once, while `textsOrdered`.
    var postings: [String: [RowID]] = [:]
    var textsOrdered = true
    var points: [[(RowID, Location)]]
    /// Each column's values while the rows are consecutive (`columnsValid`).
    var columns: [ColumnBuilder]
    /// The first and last rows seen (nil before any), and whether they were consecutive.
    var first: Int?
    var last: Int?
    var columnsValid: Bool

    init(plan: IndexPlan, columns: Bool) {
        fixed = Array(repeating: [], count: plan.ordered.count)
        variable = Array(repeating: [], count: plan.ordered.count)
        points = Array(repeating: [], count: plan.spatial.count)
        self.columns = Array(repeating: ColumnBuilder(), count: columns ? plan.columns.count : 0)
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
            if let last = inputs.last, Int(row) <= last { inputs.textsOrdered = false }
            for (i, (field, fam)) in plan.ordered.enumerated() {
                guard let v = RecordIndexes.value(field, rec) else { continue }
                forEachElement(v) { e in
                    if fam.isFixed {
                        if let k = OrderedIndex.fixedKey(e, fam) { inputs.fixed[i].append((k, row)) }
                    } else if let k = KeyEncoding.varKey(e, family: fam) {
                        inputs.variable[i].append((k, row))
                    }
                }
            }
            if inputs.columnsValid {
                if let last = inputs.last, Int(row) != last + 1 {
                    inputs.dropColumns()
                } else {
                    for (i, name) in plan.columns.enumerated() { inputs.columns[i].add(rec.fields[name]) }
                }
            }
            if inputs.first == nil { inputs.first = Int(row) }
            inputs.last = Int(row)
            for f in plan.searchable {
                guard let v = rec.fields[f] else { continue }
                forEachElement(v) { e in
                    if case .string(let s) = e { StaticText.post(s, row: row, into: &inputs.postings) }
                }
            }
            for (i, name) in plan.spatial.enumerated() {
                if let l = RecordIndexes.location(name, rec) { inputs.points[i].append((row, l)) }
            }
        }
        return inputs
    }

    /// No columns: the rows are not one layer's, consecutively from its first.
    mutating func dropColumns() {
        columnsValid = false
        columns = []
    }

    /// Appends the next part's entries. Columns stay valid while the rows run on consecutively
    /// from `start` (the layer's first row).
    mutating func append(_ next: SectionInputs, columnsFrom start: Int?) {
        for i in fixed.indices { fixed[i] += next.fixed[i] }
        for i in variable.indices { variable[i] += next.variable[i] }
        // Parts are consecutive: each token's rows stay ascending when this part's come first.
        if let l = last, let f = next.first, f <= l { textsOrdered = false }
        textsOrdered = textsOrdered && next.textsOrdered
        for (t, rows) in next.postings { postings[t, default: []] += rows }
        for i in points.indices { points[i] += next.points[i] }
        if let f = next.first {
            if columnsValid {
                let expected = last.map { $0 + 1 } ?? start
                if next.columnsValid && f == expected {
                    for i in columns.indices { columns[i].append(next.columns[i]) }
                } else {
                    dropColumns()
                }
            }
            if first == nil { first = f }
            last = next.last
        }
    }
}

/// Calls `body` with each element of a list, or with the value itself (without an array).
@inline(__always)
func forEachElement(_ v: FieldValue, _ body: (FieldValue) -> Void) {
    if case .list(let items) = v {
        for e in items { body(e) }
    } else {
        body(v)
    }
}

/// A value one job takes (once), so that it holds the only reference.
final class Taken<T>: @unchecked Sendable {
    // @unchecked: every access holds `lock`.
    private let lock = NSLock()
    private var value: T?
    init(_ value: T) { self.value = value }
    func take() -> T? {
        lock.withLock {
            defer { value = nil }
            return value
        }
    }
}

/// Hands built sections to `emit` in schedule order, each as soon as those before it are out;
/// built sections wait here only until then.
final class SectionEmitter: @unchecked Sendable {
    // @unchecked: every access holds `lock`; `emit` (not Sendable) is called only under it.
    private let lock = NSLock()
    private let names: [String]
    private let emit: (String, [UInt8]) throws -> Void
    private var waiting: [Int: [UInt8]?] = [:]
    private var next = 0
    private var thrown: (any Error)?

    init(names: [String], emit: @escaping (String, [UInt8]) throws -> Void) {
        self.names = names
        self.emit = emit
    }

    /// What `emit` threw, if it did.
    var error: (any Error)? { lock.withLock { thrown } }
    var failed: Bool { error != nil }

    /// Section `k` of the schedule is built (nil: skipped — cancelled, failed, or a column the
    /// layer does not get).
    func built(_ k: Int, _ bytes: [UInt8]?) {
        lock.withLock {
            waiting[k] = .some(bytes)
            while let ready = waiting.removeValue(forKey: next) {
                if thrown == nil, let b = ready {
                    do { try emit(names[next], b) } catch { thrown = error }
                }
                next += 1
            }
        }
    }
}

extension IndexPlan {
    /// This plan's sections split into passes whose entries for `rows` rows — estimated from the
    /// entries of `sample`, the first rows — take at most about `budget` bytes each (a section
    /// larger than the budget is a pass of its own; the columns, a few bytes a row, go with the
    /// first pass). `[self]` when everything fits in 8 times the budget.
    func passes<S: Sequence>(sample: S, rows: Int, budget: Int) -> [IndexPlan] where S.Element == (RowID, Record) {
        let sample = Array(sample)
        guard !sample.isEmpty, rows > sample.count,
            let s = SectionInputs.read(sample, plan: self, columns: false, isCancelled: { false })
        else { return [self] }
        let scale = Double(rows) / Double(sample.count)
        // Bytes held per entry while a section is built: the entry, and as much again for the
        // sort and the section's bytes.
        func bytes(_ b: Int) -> Int { Int(Double(2 * b) * scale) }
        var jobs: [(cost: Int, add: (inout IndexPlan) -> Void)] = []
        for (i, o) in ordered.enumerated() {
            let b =
                o.1.isFixed
                ? s.fixed[i].count * MemoryLayout<(FixedKey, RowID)>.stride
                : s.variable[i].reduce(0) {
                    $0 + MemoryLayout<(VarKey, RowID)>.stride + ($1.0.tail.isEmpty ? 0 : 32 + $1.0.tail.count)
                }
            jobs.append((bytes(b), { $0.ordered.append(o) }))
        }
        if !searchable.isEmpty {
            let b = s.postings.reduce(0) { $0 + 64 + 6 * $1.value.count }
            jobs.append((bytes(b), { [searchable] in $0.searchable = searchable }))
        }
        for (i, name) in spatial.enumerated() {
            jobs.append(
                (bytes(s.points[i].count * MemoryLayout<(RowID, Location)>.stride), { $0.spatial.append(name) }))
        }
        let total = jobs.reduce(0) { $0 + $1.cost } + rows * 9 * columns.count
        guard total > 8 * budget else { return [self] }
        // First fit, largest first.
        var empty = self
        (empty.ordered, empty.searchable, empty.spatial, empty.columns) = ([], [], [], [])
        var passes: [(plan: IndexPlan, cost: Int)] = []
        for job in jobs.sorted(by: { $0.cost > $1.cost }) {
            if let k = passes.firstIndex(where: { $0.cost + job.cost <= budget }) {
                job.add(&passes[k].plan)
                passes[k].cost += job.cost
            } else {
                var p = empty
                job.add(&p)
                passes.append((p, job.cost))
            }
        }
        // The plan's order within each pass (sections are found by name; the order only fixes
        // which are built together).
        var plans = passes.map { p in
            var plan = p.plan
            plan.ordered = ordered.filter { o in p.plan.ordered.contains { $0.0 == o.0 } }
            plan.spatial = spatial.filter(p.plan.spatial.contains)
            return plan
        }
        plans[0].columns = columns
        return plans
    }
}

extension Array {
    /// `body` of each element, on all cores (one element: on this thread); the results in order.
    /// `body` runs concurrently: it must not share mutable state between elements.
    func mapOnAllCores<R>(_ body: @escaping (Element) -> R) -> [R] {
        if count == 1 { return [body(self[0])] }
        var results: [R?] = Array<R?>(repeating: nil, count: count)
        results.withUnsafeMutableBufferPointer { out in
            nonisolated(unsafe) let out = out
            nonisolated(unsafe) let items = self
            nonisolated(unsafe) let body = body
            DispatchQueue.concurrentPerform(iterations: items.count) { k in out[k] = body(items[k]) }
        }
        return results.map { $0! }
    }
}

// encodeSections over rows split into parts (read on all cores): the sections must be byte for
// byte those of one pass over the same rows — columns included when the parts run on
// consecutively from the layer's first row, and dropped exactly when one pass drops them.

import CirrusTestSupport
import RecordModel
import Testing

@testable import Indexes

@Suite struct SectionPartsTests {
    func encode(_ rows: [(RowID, Record)], cuts: [Int], start: Int?) -> [String: [UInt8]] {
        var parts: [ArraySlice<(RowID, Record)>] = []
        var from = 0
        for c in cuts + [rows.count] {
            parts.append(rows[from..<c])
            from = c
        }
        let out = RecordIndexes.encodeSections(
            schema: RecordIndexesTests.schema, parts: parts, columnsFrom: start, isCancelled: { false })
        return Dictionary((out ?? []).map { ($0.name, $0.bytes) }, uniquingKeysWith: { a, _ in a })
    }

    @Test(arguments: 0..<4)
    func partsEncodeLikeOnePass(_ run: Int) {
        let seed = TestSeed.next() &+ UInt64(run)
        var rng = SeededRandom(seed: seed)
        let t = RecordIndexesTests()
        let start = [0, 7, 1000, 3][run]
        let n = [0, 1, 90, 500][run]
        var rows = (0..<n).map { (RowID(start + $0), t.record($0, &rng)) }
        if run == 3 { rows.remove(at: n / 2) }  // a gap: no columns, in one pass or in parts
        let whole = encode(rows, cuts: [], start: start)
        #expect(whole.keys.contains { $0.hasPrefix("column:") } == (run != 3), "seed \(seed)")
        for _ in 0..<5 {
            let cuts = (0..<rng.below(4)).map { _ in rng.below(rows.count + 1) }.sorted()
            #expect(encode(rows, cuts: cuts, start: start) == whole, "seed \(seed) cuts \(cuts)")
        }
        // Rows that do not begin at the layer's first row have no columns, in parts too.
        if n > 1 {
            let shifted = encode(rows, cuts: [n / 3], start: start + 1)
            #expect(!shifted.keys.contains { $0.hasPrefix("column:") }, "seed \(seed)")
        }
    }

    /// Sections handed out one by one come in a fixed order with the bytes collected ones have;
    /// what the receiver throws stops the handing out and is rethrown.
    @Test func sectionsAreHandedOutInOrderAndAThrowStopsThem() throws {
        struct Full: Error {}
        var rng = SeededRandom(seed: TestSeed.next())
        let t = RecordIndexesTests()
        let rows = (0..<600).map { (RowID($0), t.record($0, &rng)) }
        let parts = [rows[0..<250], rows[250...]]
        let out = RecordIndexes.encodeSections(
            schema: RecordIndexesTests.schema, parts: parts, columnsFrom: 0, isCancelled: { false })
        let collected = try #require(out)
        #expect(collected.count > 2)
        var handed: [(String, [UInt8])] = []
        let done = try RecordIndexes.encodeSections(
            schema: RecordIndexesTests.schema, parts: parts, columnsFrom: 0, isCancelled: { false },
            emit: { handed.append(($0, $1)) })
        #expect(done)
        #expect(handed.map(\.0) == collected.map(\.name))
        #expect(handed.map(\.1) == collected.map(\.bytes))
        var received = 0
        #expect(throws: Full.self) {
            _ = try RecordIndexes.encodeSections(
                schema: RecordIndexesTests.schema, parts: parts, columnsFrom: 0, isCancelled: { false },
                emit: { _, _ in
                    received += 1
                    if received == 2 { throw Full() }
                })
        }
        #expect(received == 2)
    }

    @Test func aCancelledPartCancelsTheWhole() {
        var rng = SeededRandom(seed: TestSeed.next())
        let t = RecordIndexesTests()
        let rows = (0..<9000).map { (RowID($0), t.record($0, &rng)) }
        let out = RecordIndexes.encodeSections(
            schema: RecordIndexesTests.schema, parts: [rows[0..<4500], rows[4500...]], columnsFrom: 0,
            isCancelled: { true })
        #expect(out == nil)
    }

    /// `n` random records of run `run` of a parameterized test, record i at row `row(i)`, and
    /// the seed they came from.
    func seededRows(_ run: Int, _ n: Int, row: (Int) -> Int = { $0 }) -> (UInt64, [(RowID, Record)]) {
        let seed = TestSeed.next() &+ UInt64(run)
        var rng = SeededRandom(seed: seed)
        let t = RecordIndexesTests()
        return (seed, (0..<n).map { (RowID(row($0)), t.record($0, &rng)) })
    }

    /// Given the row count and a budget the entries exceed, the sections are built in several
    /// passes over the parts, each holding the entries of some of them: byte for byte the
    /// sections of one pass, whatever the budget; one pass when they fit.
    @Test(arguments: 0..<3)
    func passesEncodeLikeOnePass(_ run: Int) throws {
        let n = [300, 2500, 6000][run]
        let (seed, rows) = seededRows(run, n)
        let parts = [rows[0..<(n / 3)], rows[(n / 3)...]]
        let whole = encode(rows, cuts: [n / 3], start: 0)
        let plan = IndexPlan(RecordIndexesTests.schema)
        let sections = plan.ordered.count + (plan.searchable.isEmpty ? 0 : 1) + plan.spatial.count
        #expect(
            (2...sections).contains(plan.passes(sample: rows.prefix(100), rows: n, budget: 1).count), "seed \(seed)")
        #expect(plan.passes(sample: rows.prefix(100), rows: n, budget: 1 << 40).count == 1)
        for budget in [1, 20_000, 200_000, 1 << 30] {
            var out: [String: [UInt8]] = [:]
            var order: [String] = []
            let done = try RecordIndexes.encodeSections(
                schema: RecordIndexesTests.schema, parts: parts, columnsFrom: 0, rows: n, memoryBudget: budget,
                isCancelled: { false },
                emit: { name, bytes in
                    order.append(name)
                    out[name] = bytes
                })
            #expect(done)
            #expect(order.count == out.count, "a section emitted twice, budget \(budget)")
            #expect(out == whole, "seed \(seed) budget \(budget)")
        }
    }

    /// The text section from exact counts (two passes over the parts, each part's rows written at
    /// their final places) is byte for byte the one from postings; parts whose rows do not
    /// ascend, within or across, are refused (the caller then builds from postings).
    @Test(arguments: 0..<3)
    func textFromCountsIsTextFromPostings(_ run: Int) throws {
        let n = [1, 700, 5000][run]
        let (seed, rows) = seededRows(run, n, row: { 3 * $0 + 1 })
        let fields = ["name", "notes"]
        var postings: [String: [RowID]] = [:]
        for (row, rec) in rows {
            StaticText.forEachToken(rec, fields) { postings[$0, default: []].appendUnlessLast(row) }
        }
        let expected = StaticText.encode(postings: postings, ordered: true)
        for cuts in [[], [n / 2], [n / 4, n / 4, 3 * n / 4]] {
            var parts: [ArraySlice<(RowID, Record)>] = []
            var from = 0
            for c in cuts + [n] {
                parts.append(rows[from..<c])
                from = c
            }
            let built = StaticText.encode(parts: parts, fields: fields, isCancelled: { false })
            #expect(built == expected, "seed \(seed) cuts \(cuts)")
        }
        if n > 2 {
            let swapped = [rows[(n / 2)...], rows[..<(n / 2)]]
            #expect(StaticText.encode(parts: swapped, fields: fields, isCancelled: { false }) == nil)
            var unordered = rows
            unordered.swapAt(0, n - 1)
            #expect(StaticText.encode(parts: [unordered[...]], fields: fields, isCancelled: { false }) == nil)
        }
        // Cancellation is looked at every 4 096 rows: only the largest run has that many.
        if n >= 4096 {
            #expect(StaticText.encode(parts: [rows[...]], fields: fields, isCancelled: { true }) == nil)
        }
    }
}

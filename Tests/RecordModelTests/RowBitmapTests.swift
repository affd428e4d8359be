// RowBitmap against a Set<Int> model: single and sorted bulk inserts agree on membership, count
// and the rows reported as added, and a snapshot taken before a bulk insert keeps its rows; a set
// made from a sorted list (sparse pages as offsets, crowded ones as bits) agrees with the model
// before and after later inserts; the union of sorted lists is the model's.

import Testing

@testable import RecordModel

@Suite struct RowBitmapTests {
    /// Random ascending runs (across page boundaries, with rows already present) inserted in
    /// bulk and one by one give the same set as the model; `added` names exactly the new rows.
    @Test(arguments: [1, 2, 3])
    func sortedBulkInsertsAgreeWithTheModel(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var bulk = RowBitmap()
        var single = RowBitmap()
        var model = Set<Int>()
        for round in 0..<20 {
            let before = bulk
            let beforeModel = model
            let n = Int(rng.next() % 300)
            let span = round % 2 == 0 ? 5_000 : 40_000
            let rows = Set((0..<n).map { _ in UInt32(rng.next() % UInt64(span)) }).sorted()
            var added: [Int] = []
            bulk.insert(sorted: rows) { added.append($0) }
            for r in rows { single.insert(Int(r)) }
            let new = rows.map(Int.init).filter { !model.contains($0) }
            model.formUnion(rows.map(Int.init))
            #expect(added == new, "round \(round): the rows reported added are the new ones, in order")
            #expect(bulk.count == model.count && single.count == model.count)
            #expect(bulk == single)
            for r in 0..<span where bulk.contains(r) != model.contains(r) {
                Issue.record("round \(round): row \(r) membership differs from the model")
            }
            // The copy taken before is unchanged (copy on write, page by page).
            #expect(before.count == beforeModel.count)
            for r in rows.map(Int.init) where before.contains(r) != beforeModel.contains(r) {
                Issue.record("round \(round): the snapshot changed at row \(r)")
            }
        }
    }

    @Test func anEmptyRunChangesNothing() {
        var b = RowBitmap()
        b.insert(7)
        b.insert(sorted: [UInt32]()) { _ in Issue.record("nothing was added") }
        #expect(b.count == 1 && b.contains(7) && !b.contains(8))
    }

    /// Sorted lists whose pages hold 0, a few, exactly the sparse limit, just over it or many
    /// rows (repeats included): the set made from them has the model's rows and count, keeps
    /// them through later single and bulk inserts (which report only rows not yet there), and a
    /// copy taken before the inserts is unchanged.
    @Test(arguments: [1, 2, 3, 4])
    func aSetMadeFromASortedListAgreesWithTheModel(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var rows: [UInt32] = []
        for page in 0..<12 {
            let crowd = [0, 1, 5, RowBitmap.sparsePageLimit, RowBitmap.sparsePageLimit + 1, 300][Int(rng.next() % 6)]
            for _ in 0..<crowd { rows.append(UInt32(page * 4096 + Int(rng.next() % 4096))) }
        }
        rows.sort()
        let model = Set(rows.map(Int.init))
        var b = RowBitmap(sorted: rows)
        #expect(b.count == model.count)
        #expect(b.sortedRows == model.sorted())
        for r in 0..<(13 * 4096) where b.contains(r) != model.contains(r) {
            Issue.record("row \(r) membership differs from the model")
        }
        var byInserts = RowBitmap()
        byInserts.insert(sorted: Array(Set(rows)).sorted())
        #expect(b == byInserts)

        let before = b
        var after = model
        for _ in 0..<200 {
            let r = Int(rng.next() % UInt64(13 * 4096))
            b.insert(r)
            after.insert(r)
        }
        let run = Set((0..<300).map { _ in UInt32(rng.next() % UInt64(13 * 4096)) }).sorted()
        var added: [Int] = []
        b.insert(sorted: run) { added.append($0) }
        #expect(added == run.map(Int.init).filter { !after.contains($0) })
        after.formUnion(run.map(Int.init))
        #expect(b.count == after.count)
        #expect(b.sortedRows == after.sorted())
        for r in 0..<(13 * 4096) {
            if b.contains(r) != after.contains(r) { Issue.record("after inserts: row \(r) differs from the model") }
            if before.contains(r) != model.contains(r) { Issue.record("the copy changed at row \(r)") }
        }
        #expect(before.count == model.count)
    }

    @Test func theUnionOfSortedListsIsTheModels() {
        var rng = SplitMix64(seed: 9)
        let lists = (0..<4).map { k in
            Set((0..<(k * 40)).map { _ in UInt32(rng.next() % 500) }).sorted()
        }
        #expect(RowBitmap.union(lists) == Set(lists.joined()).sorted())
        #expect(RowBitmap.union([[], [3, 5]]) == [3, 5])
        #expect(RowBitmap.union([]) == [])
        #expect(RowBitmap(sorted: []).count == 0 && !RowBitmap(sorted: []).contains(0))
    }
}

// RowBitmap against a Set<Int> model: single and sorted bulk inserts agree on membership, count
// and the rows reported as added, and a snapshot taken before a bulk insert keeps its rows.

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
}

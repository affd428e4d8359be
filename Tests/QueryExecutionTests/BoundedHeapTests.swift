// The bounded top-K of set plans against a full sort: below its capacity (keys only gathered,
// sorted once), at it (the heap built from the gathered keys), and far past it (replacements).

import Indexes
import QueryPlanner
import RecordModel
import Testing

@testable import QueryExecution

@Suite struct BoundedHeapTests {
    @Test(arguments: [0, 1, 2, 7, 33, 100, 101, 500])
    func keepsTheSmallestKeysInTheQuerysOrder(capacity: Int) {
        var rng = SystemRandomNumberGenerator()
        let ordering = Ordering([.field("n", ascending: false), .field("s", ascending: true)])
        for count in [0, 1, capacity - 1, capacity, capacity + 1, 3 * capacity + 5] where count >= 0 {
            var heap = BoundedHeap(capacity: capacity, ordering: ordering)
            var all: [(OrderKey, RowID)] = []
            for i in 0..<count {
                let key = OrderKey(
                    values: [
                        .int64(Int64.random(in: 0..<8, using: &rng)),
                        .string(String(Int.random(in: 0..<5, using: &rng))),
                    ],
                    recordID: RecordID(recordName: "r\(i)"))
                heap.insert(key, RowID(i))
                all.append((key, RowID(i)))
            }
            let want = all.sorted { ordering.compare($0.0, $1.0) < 0 }.prefix(capacity).map(\.1)
            #expect(heap.sorted().map(\.1) == Array(want), "capacity \(capacity), \(count) keys")
            // Once full, the top is the largest kept key: the sort values of the page's last row.
            let top = heap.compareWithTop(want.last.map { all[Int($0)].0.values } ?? [])
            #expect((top != nil) == (capacity > 0 && count >= capacity))
            #expect(top == nil || top == 0)
        }
    }
}

// DeferredCopyOnWrite: parts made at their first use, exactly once however many threads use them
// first, and copied on write like CopyOnWrite's afterwards.

import Synchronization
import Testing

@testable import RecordModel

@Suite struct DeferredCopyOnWriteTests {
    struct Parts: Sendable, Equatable {
        var rows: [Int]
        var name: String
    }

    /// A maker that counts its runs.
    final class Counter: Sendable {
        let runs = Atomic<Int>(0)
        func make() -> Parts {
            runs.add(1, ordering: .relaxed)
            return Parts(rows: Array(0..<1000), name: "made")
        }
    }

    @Test func nothingIsMadeUntilFirstUseAndThenOnce() {
        let counter = Counter()
        let d = DeferredCopyOnWrite(placeholder: Parts(rows: [], name: "placeholder")) { counter.make() }
        let copy = d
        #expect(!d.isMade && !copy.isMade)
        #expect(counter.runs.load(ordering: .relaxed) == 0)
        #expect(copy.name == "made")
        #expect(d.isMade && copy.isMade)
        #expect(d.rows.count == 1000 && d.contents == copy.contents)
        #expect(counter.runs.load(ordering: .relaxed) == 1)
    }

    @Test func concurrentFirstReadersMakeItOnceAndAllSeeIt() async {
        for _ in 0..<20 {
            let counter = Counter()
            let d = DeferredCopyOnWrite(placeholder: Parts(rows: [], name: "placeholder")) { counter.make() }
            let seen = await withTaskGroup(of: Int.self) { group in
                for k in 0..<16 { group.addTask { d.rows[k * 7] + (d.name == "made" ? 0 : 1_000_000) } }
                return await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(seen.sorted() == (0..<16).map { $0 * 7 })
            #expect(counter.runs.load(ordering: .relaxed) == 1)
        }
    }

    @Test func aWriteMakesThenCopiesSharedParts() {
        let counter = Counter()
        let a = DeferredCopyOnWrite(placeholder: Parts(rows: [], name: "placeholder")) { counter.make() }
        var b = a
        b.name = "written"  // the first use is a write: made once, then b's own copy is written
        #expect(counter.runs.load(ordering: .relaxed) == 1)
        #expect(a.name == "made" && b.name == "written")
        #expect(a.rows == b.rows)
        var c = DeferredCopyOnWrite(Parts(rows: [1], name: "now"))
        #expect(c.isMade)
        c.rows.append(2)
        #expect(c.rows == [1, 2])
    }
}

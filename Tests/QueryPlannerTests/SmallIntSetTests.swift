import RecordModel
import Testing

@testable import QueryPlanner

/// The planner's index sets against the model, `Set<Int>`: small and large indices, unions.
@Suite struct SmallIntSetTests {
    @Test func agreesWithSetOfInt() {
        var rng = SplitMix64(seed: 7)
        for _ in 0..<500 {
            var a = SmallIntSet()
            var b = SmallIntSet()
            var ma = Set<Int>()
            var mb = Set<Int>()
            for _ in 0..<Int(rng.next() % 8) {
                let x = Int(rng.next() % 140)  // past 64: the overflow set
                a.insert(x)
                ma.insert(x)
                let y = Int(rng.next() % 70)
                b.insert(y)
                mb.insert(y)
            }
            let u = a.union(b)
            let mu = ma.union(mb)
            for x in 0..<140 {
                #expect(a.contains(x) == ma.contains(x), "\(x)")
                #expect(u.contains(x) == mu.contains(x), "\(x)")
            }
            #expect((a == b) == (ma == mb))
            #expect(!a.contains(-1))
        }
        #expect(SmallIntSet(3) == SmallIntSet(3))
        #expect(SmallIntSet(3) != SmallIntSet(70))
        #expect(SmallIntSet(70).contains(70))
    }
}

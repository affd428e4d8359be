import Testing

@testable import RecordModel

/// A selection's slots: one per distinct name, the first occurrence's, with each name's bytes
/// and length bit.
@Suite struct FieldSelectionTests {
    @Test func duplicatesKeepTheirFirstSlot() {
        let s = FieldSelection(["kind", "population", "kind", "name", "population"])
        #expect(s.names == ["kind", "population", "name"])
        #expect(s.count == 3)
        #expect(s.slot(of: "kind") == 0 && s.slot(of: "population") == 1 && s.slot(of: "name") == 2)
        #expect(s.utf8 == s.names.map { Array($0.utf8) })
        #expect(s.lengths == (1 << 4) | (1 << 10))
    }

    @Test func namesWithoutDuplicatesAreKeptInOrder() {
        let s = FieldSelection(["b", "a", "location"])
        #expect(s.names == ["b", "a", "location"])
        #expect(s.slot(of: "location") == 2 && s.slot(of: "absent") == nil)
        #expect(FieldSelection([]).count == 0)
    }
}

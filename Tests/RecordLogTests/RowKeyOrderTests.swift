import RecordModel
import Testing

@testable import RecordLog

/// `RowKeyOrder.compare` (word at a time) against byte-wise lexicographic order, on strings
/// that share long prefixes and differ anywhere, including in and past an 8-byte word.
@Suite struct RowKeyOrderTests {
    @Test func compareMatchesLexicographicByteOrder() {
        var rng = SplitMix64(seed: 11)
        let alphabet: [UInt8] = [0, 1, 0x41, 0x7F, 0x80, 0xC3, 0xFF]
        for _ in 0..<20_000 {
            let x = (0..<rng.below(20)).map { _ in alphabet[rng.below(alphabet.count)] }
            var y = Array(x.prefix(rng.below(x.count + 1)))
            for _ in 0..<rng.below(4) { y.append(alphabet[rng.below(alphabet.count)]) }
            let expected = x == y ? 0 : (x.lexicographicallyPrecedes(y) ? -1 : 1)
            let got = x.withUnsafeBytes { a in y.withUnsafeBytes { b in RowKeyOrder.compare(a, b) } }
            #expect(got == expected, "\(x) vs \(y)")
        }
    }

    @Test func lessOrdersIDsByZoneThenName() {
        let a = RecordID(recordName: "b", zoneID: ZoneID(zoneName: "A"))
        let b = RecordID(recordName: "a", zoneID: ZoneID(zoneName: "B"))
        let c = RecordID(recordName: "ab", zoneID: ZoneID(zoneName: "B"))
        #expect(RowKeyOrder.less(a, b) && RowKeyOrder.less(b, c) && !RowKeyOrder.less(c, b) && !RowKeyOrder.less(a, a))
    }

    /// A bulk load's run order (`BulkLoad.sortedPositions`, sorted on zone ranks and 16-byte
    /// name keys) is the order of `RowKeyOrder.compare`, equal ids by position — with names
    /// that tie on their first 16 bytes, names that extend others by zero bytes, several zones
    /// and repeated ids.
    @Test func bulkRunOrderIsRowKeyOrder() {
        var rng = SplitMix64(seed: 3)
        let stems = ["", "p", "same-first-16-by", "same-first-16-bytes", "é"]
        let zones = ["_defaultZone", "Z", "_defaultZonf", "a"]
        var items: [(id: RecordID, sequence: UInt64, payload: [UInt8])] = []
        for i in 0..<4000 {
            var name = stems[rng.below(stems.count)] + String(rng.below(30))
            if rng.below(10) == 0 { name += "\u{0}" }
            let id = RecordID(recordName: name, zoneID: ZoneID(zoneName: zones[rng.below(zones.count)]))
            items.append((id, UInt64(i), []))
        }
        let expected = items.indices.sorted { a, b in
            let c = RowKeyOrder.compare(items[a].id, items[b].id)
            return c < 0 || (c == 0 && a < b)
        }
        #expect(BulkLoad.sortedPositions(items) == expected)
    }
}

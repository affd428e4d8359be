import Testing

@testable import RecordModel

/// `RecordID.orderedByID` (integer keys of the first 16 name bytes, names compared on ties)
/// against the model: a plain sort with `RecordID.<`.
@Suite struct RecordIDOrderTests {
    /// Names that stress the key: shared 16-byte prefixes, names that are prefixes of others,
    /// zero bytes (which the key's padding cannot tell from the end), non-ASCII, other zones.
    static func names(seed: UInt64, count: Int) -> [RecordID] {
        var rng = SplitMix64(seed: seed)
        let alphabet: [String] = ["a", "b", "0", "\u{0}", "é", "z", "Z", "_"]
        let zones = [ZoneID.default, ZoneID(zoneName: "Notes"), ZoneID(zoneName: "Notes", ownerName: "_u1")]
        let stems = ["", "c1392685", "place-0000000000", "place-00000000001"]
        return (0..<count).map { _ in
            var name = stems[Int(rng.next() % UInt64(stems.count))]
            for _ in 0..<Int(rng.next() % 6) { name += alphabet[Int(rng.next() % UInt64(alphabet.count))] }
            return RecordID(recordName: name.isEmpty ? "x" : name, zoneID: zones[Int(rng.next() % 3)])
        }
    }

    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func ordersAsTheComparisonDoes(seed: UInt64) {
        let ids = Self.names(seed: seed, count: 2_000)
        let byKey = RecordID.orderedByID(ids).map { ids[$0] }
        let model = ids.sorted()
        #expect(byKey == model)
        #expect(Set(RecordID.orderedByID(ids)).count == ids.count)  // a permutation
    }

    @Test func keysNeverContradictTheComparison() {
        let ids = Self.names(seed: 9, count: 400)
        for a in ids {
            for b in ids where RecordIDOrderKey(a) < RecordIDOrderKey(b) {
                #expect(a < b, "key orders \(a.recordName.debugDescription) before \(b.recordName.debugDescription)")
            }
        }
    }

    @Test func compareUTF8IsByteOrder() {
        #expect(compareUTF8("ab", "abc") == -1)
        #expect(compareUTF8("abc", "ab") == 1)
        #expect(compareUTF8("", "") == 0)
        #expect(compareUTF8("é", "z") == 1)  // 0xC3 > 0x7A
        #expect(compareUTF8("a\u{0}", "a") == 1)
        let bridged = String(decoding: Array("straße".utf8), as: UTF8.self)
        #expect(compareUTF8(bridged, "straße") == 0)
    }
}

import Testing

@testable import RecordModel

/// `RecordFields` (one sorted array) against the model it replaced: `[String: FieldValue]`.
@Suite struct RecordFieldsTests {
    /// Names that share prefixes, differ in case, and are not ASCII.
    static let names = ["a", "b", "ab", "aB", "A", "name", "name2", "nam", "é", "e\u{301}x", "_x", "z9", "zz"]

    static func value(_ rng: inout SplitMix64) -> FieldValue {
        switch rng.below(4) {
        case 0: .int64(Int64(rng.below(5)))
        case 1: .double(Double(rng.below(5)))  // equal to the int64 of the same number
        case 2: .string(names[rng.below(names.count)])
        default: .list([.int64(Int64(rng.below(3)))])
        }
    }

    /// Every field in ascending name order, names unique.
    static func expectSorted(_ f: RecordFields, _ context: String) {
        let keys = Array(f.keys)
        #expect(zip(keys, keys.dropFirst()).allSatisfy { $0 < $1 }, "\(context): \(keys)")
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
    func behavesAsADictionary(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var fields = RecordFields()
        var model: [String: FieldValue] = [:]
        for step in 0..<600 {
            let name = Self.names[rng.below(Self.names.count)]
            let context = "seed \(seed) step \(step)"
            switch rng.below(6) {
            case 0, 1:
                let v = Self.value(&rng)
                fields[name] = v
                model[name] = v
            case 2:
                fields[name] = nil
                model[name] = nil
            case 3:
                let v = Self.value(&rng)
                #expect(fields.updateValue(v, forKey: name) == model.updateValue(v, forKey: name), "\(context)")
            case 4:
                #expect(fields.removeValue(forKey: name) == model.removeValue(forKey: name), "\(context)")
            default:
                var other: [String: FieldValue] = [:]
                for _ in 0..<rng.below(4) { other[Self.names[rng.below(Self.names.count)]] = Self.value(&rng) }
                let keepOld = rng.chance(0.5)
                fields = fields.merging(RecordFields(other)) { old, new in keepOld ? old : new }
                model = model.merging(other) { old, new in keepOld ? old : new }
            }
            #expect(fields.dictionary == model, "\(context)")
            #expect(fields.count == model.count, "\(context)")
            for n in Self.names { #expect(fields[n] == model[n], "\(context): \(n)") }
            Self.expectSorted(fields, context)
            #expect(fields == RecordFields(model), "\(context)")
            #expect(fields.hashValue == RecordFields(model).hashValue, "\(context)")
        }
    }

    @Test func mergingKeepsEveryNameAndLetsTheCombinerChoose() {
        let a: RecordFields = ["a": 1, "b": 2, "d": 4]
        let b: RecordFields = ["b": 20, "c": 30, "e": 50]
        #expect(a.merging(b) { _, new in new }.dictionary == ["a": 1, "b": 20, "c": 30, "d": 4, "e": 50])
        #expect(a.merging(b) { old, _ in old }.dictionary == ["a": 1, "b": 2, "c": 30, "d": 4, "e": 50])
        #expect(RecordFields().merging(b) { _, new in new } == b)
        #expect(a.merging(RecordFields()) { _, new in new } == a)
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func pairsInAnyOrderWithRepeatsKeepTheLastValue(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        for _ in 0..<200 {
            let pairs = (0..<rng.below(12)).map { _ in
                (key: Self.names[rng.below(Self.names.count)], value: Self.value(&rng))
            }
            var model: [String: FieldValue] = [:]
            for p in pairs { model[p.key] = p.value }
            let collected = RecordFields(collecting: pairs.map { RecordFields.Field($0.key, $0.value) })
            #expect(collected.dictionary == model)
            Self.expectSorted(collected, "collecting \(pairs)")
            let fromPairs = RecordFields(pairs.map { ($0.key, $0.value) })
            #expect(fromPairs == collected)
        }
    }

    @Test func filterAndMapValuesKeepNameOrder() {
        let f: RecordFields = ["c": 3, "a": 1, "b": 2]
        #expect(Array(f.keys) == ["a", "b", "c"])
        #expect(f.filter { $0.key != "b" }.dictionary == ["a": 1, "c": 3])
        #expect(f.mapValues { _ in .int64(0) }.dictionary == ["a": 0, "b": 0, "c": 0])
        #expect(f.description == "[\"a\": 1, \"b\": 2, \"c\": 3]")
        #expect(RecordFields().description == "[:]")
    }

    @Test func equalityIsCloudKitsValueEquality() {
        // 1 == 1.0 in CloudKit's comparison; the fields compare (and hash) as their values do.
        let a: RecordFields = ["n": .int64(1)]
        let b: RecordFields = ["n": .double(1)]
        #expect((a == b) == (FieldValue.int64(1) == FieldValue.double(1)))
        if a == b { #expect(a.hashValue == b.hashValue) }
        #expect(a != ["m": .int64(1)])
        #expect(a != ["n": .int64(1), "m": .int64(1)])
    }
}

import CirrusTestSupport
import Foundation
import Testing

@testable import RecordModel

@Suite struct FieldValueOrderingTests {
    @Test func numbersCompareAcrossInt64AndDoubleExactly() {
        #expect(FieldValue.int64(3) == .double(3.0))
        #expect(FieldValue.compare(.int64(3), .double(3.5)) == -1)
        #expect(FieldValue.compare(.double(-0.5), .int64(0)) == -1)
        // 2^53 + 1 is not representable as a Double; it must still be above 2^53 as a Double.
        #expect(FieldValue.compare(.int64(9_007_199_254_740_993), .double(9_007_199_254_740_992)) == 1)
        #expect(FieldValue.compare(.double(9.3e18), .int64(.max)) == 1)
        #expect(FieldValue.compare(.double(-9.3e18), .int64(.min)) == -1)
    }

    @Test func stringsCompareByUnicodeScalarsNotCanonicalEquivalence() {
        let composed = FieldValue.string("\u{E9}")  // é
        let decomposed = FieldValue.string("e\u{301}")  // e + combining acute
        #expect(composed != decomposed)
        #expect(FieldValue.compare(decomposed, composed) == -1)  // 'e' (0x65) < 0xC3
        #expect(FieldValue.compare("Zebra", "apple") == -1)  // case-sensitive, binary
    }

    @Test func referencesCompareByRecordIDOnly() {
        let a = FieldValue.reference(Reference(recordID: RecordID(recordName: "a"), action: .none))
        let a2 = FieldValue.reference(Reference(recordID: RecordID(recordName: "a"), action: .deleteSelf))
        #expect(a == a2)
        #expect(a.hashValue == a2.hashValue)
    }

    /// The order must be a total order consistent with `==` on random values.
    @Test func totalOrderIsConsistentOnRandomValues() {
        let seed = TestSeed.next()
        var rng = SeededRandom(seed: seed)
        func value() -> FieldValue {
            switch rng.below(5) {
            case 0: return .int64(Int64(rng.below(7)) - 3)
            case 1: return .double(Double(rng.below(13)) / 2 - 3)
            case 2: return .string(["", "a", "ab", "b", "é", "B"][rng.below(6)])
            case 3: return .date(Timestamp(millisecondsSince1970: Int64(rng.below(4))))
            default: return .bytes((0..<rng.below(3)).map { _ in UInt8(rng.below(3)) })
            }
        }
        for _ in 0..<2000 {
            let (a, b, c) = (value(), value(), value())
            let ab = FieldValue.compare(a, b)
            #expect(ab == -FieldValue.compare(b, a), "antisymmetry, seed \(seed)")
            #expect((ab == 0) == (a == b), "consistent with ==, seed \(seed): \(a) \(b)")
            if ab <= 0 && FieldValue.compare(b, c) <= 0 {
                #expect(FieldValue.compare(a, c) <= 0, "transitivity, seed \(seed)")
            }
            if a == b { #expect(a.hashValue == b.hashValue, "hash, seed \(seed)") }
        }
    }

    @Test func timestampRoundsDatesToMilliseconds() {
        let t = Timestamp(Date(timeIntervalSince1970: 1.0006))
        #expect(t.millisecondsSince1970 == 1001)
        #expect(Timestamp(Date(timeIntervalSince1970: -0.0004)).millisecondsSince1970 == 0)
    }

    @Test func fieldTypeNamesRoundTrip() {
        for s in ScalarType.allCases {
            for list in [false, true] {
                let t = FieldType(s, isList: list)
                #expect(FieldType(webServicesName: t.webServicesName) == t)
            }
        }
        #expect(FieldType(webServicesName: "LIST<ASSET>") == .list(.asset))
        #expect(FieldType(webServicesName: "BOOLEAN") == nil)
    }
}

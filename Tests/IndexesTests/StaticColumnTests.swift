import RecordModel
import Testing

@testable import Indexes

/// `StaticColumn`: every value round-trips (absent, int64, double, date; extremes), anything
/// else has no column, and a damaged section is refused, never read past its end.
@Suite struct StaticColumnTests {
    func open(_ bytes: [UInt8]) throws(IndexSectionError) -> (StaticColumn, Bytes) {
        let b = Bytes(bytes)
        return (try StaticColumn(SectionBytes(b.view, keepAlive: b, name: "column:x")), b)
    }

    @Test func valuesRoundTrip() throws {
        var rng = SplitMix64(seed: 5)
        var values: [FieldValue?] = [
            nil, .int64(.min), .int64(.max), .int64(0), .double(-0.0), .double(.infinity), .double(-1e300),
            .date(Timestamp(millisecondsSince1970: -1)), .date(Timestamp(millisecondsSince1970: .max)),
        ]
        for _ in 0..<500 {
            switch rng.below(4) {
            case 0: values.append(nil)
            case 1: values.append(.int64(Int64(bitPattern: rng.next())))
            case 2: values.append(.double(Double(bitPattern: rng.next() & ~(0x7FF << 52))))  // finite
            default: values.append(.date(Timestamp(millisecondsSince1970: Int64(bitPattern: rng.next()))))
            }
        }
        let (c, keep) = try open(try #require(StaticColumn.encode(values)))
        #expect(c.count == values.count)
        for (i, v) in values.enumerated() { #expect(c.value(i) == v, "row \(i)") }
        #expect(c.value(-1) == nil && c.value(values.count) == nil)
        withExtendedLifetime(keep) {}
    }

    @Test func onlyNumbersAndDatesHaveAColumn() {
        #expect(StaticColumn.encode([.int64(1), .string("a")]) == nil)
        #expect(StaticColumn.encode([.list([.int64(1)])]) == nil)
        #expect(StaticColumn.encode([nil, nil]) != nil)
    }

    @Test func damagedSectionsAreRefused() throws {
        let good = try #require(StaticColumn.encode((0..<20).map { .int64(Int64($0)) }))
        for cut in [0, 8, 15, 16, 30, good.count - 1] {
            #expect(throws: IndexSectionError.self, "cut at \(cut)") { _ = try open(Array(good.prefix(cut))) }
        }
        var badMagic = good
        badMagic[0] = 0
        #expect(throws: IndexSectionError.self) { _ = try open(badMagic) }
        var hugeCount = good
        for k in 8..<16 { hugeCount[k] = 0xFF }
        #expect(throws: IndexSectionError.self) { _ = try open(hugeCount) }
    }
}

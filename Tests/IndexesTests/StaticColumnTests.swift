import CirrusTestSupport
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
            .string(""), .string("café"), .string("a string longer than fifteen bytes"), .string("日本"),
        ]
        let words = ["cafe", "shop", "", "Zürich", "a much longer value than an inline string"]
        for _ in 0..<500 {
            switch rng.below(5) {
            case 4: values.append(.string(words[rng.below(words.count)]))
            case 0: values.append(nil)
            case 1: values.append(.int64(Int64(bitPattern: rng.next())))
            case 2: values.append(.double(Double(bitPattern: rng.next() & ~(0x7FF << 52))))  // finite
            default: values.append(.date(Timestamp(millisecondsSince1970: Int64(bitPattern: rng.next()))))
            }
        }
        let (c, keep) = try open(try #require(StaticColumn.encode(values)))
        #expect(c.count == values.count)
        let slot = try #require(c.slot)
        for (i, v) in values.enumerated() { #expect(slot.value(i) == v, "row \(i)") }
        #expect(slot.value(-1) == nil && slot.value(values.count) == nil)
        withExtendedLifetime(keep) {}
    }

    /// A reader over layers reads each row from its own layer's columns, in slot order; a row
    /// of a layer that lacks one of the columns, or past every layer, is not read.
    @Test func aReaderReadsEachRowFromItsLayer() throws {
        let n = [3, 4, 2]  // rows per layer
        func layer(_ l: Int, _ field: Int) -> [FieldValue?] {
            (0..<n[l]).map { i in field == 0 ? .int64(Int64(100 * l + i)) : .string("l\(l)r\(i)") }
        }
        var keep: [Bytes] = []
        var columns: [(field: String, layers: [StaticColumn?])] = []
        for f in 0..<2 {
            var perLayer: [StaticColumn?] = []
            for l in n.indices {
                if l == 1 && f == 1 {
                    perLayer.append(nil)  // layer 1 has no column of the second field
                    continue
                }
                let (c, b) = try open(try #require(StaticColumn.encode(layer(l, f))))
                keep.append(b)
                perLayer.append(c)
            }
            columns.append((["n", "s"][f], perLayer))
        }
        columns.insert(("other", [nil, nil, nil]), at: 0)
        let layers = BaseLayers(rowCounts: n)
        #expect(ColumnReader(FieldSelection(["s", "absent"]), columns: columns, baseLayers: layers) == nil)
        // Slots in the selection's order, not the columns'.
        let reader = try #require(ColumnReader(FieldSelection(["s", "n"]), columns: columns, baseLayers: layers))
        var out: [FieldValue?] = [.int64(-1)]
        var row = 0
        for l in n.indices {
            for i in 0..<n[l] {
                let read = reader.values(row, into: &out)
                if l == 1 {
                    #expect(!read, "row \(row) of layer 1 has no column of the second field")
                } else {
                    #expect(read, "row \(row)")
                    #expect(out == [layer(l, 1)[i], layer(l, 0)[i]], "row \(row)")
                }
                row += 1
            }
        }
        #expect(!reader.values(row, into: &out) && !reader.values(-1, into: &out))
        withExtendedLifetime(keep) {}
    }

    @Test func onlyScalarsAndFewDistinctStringsHaveAColumn() {
        #expect(StaticColumn.encode([.list([.int64(1)])]) == nil)
        #expect(StaticColumn.encode([.bytes([1])]) == nil)
        #expect(StaticColumn.encode([nil, nil]) != nil)
        let many = (0...StaticColumn.maxStrings).map { FieldValue.string("s\($0)") }
        #expect(StaticColumn.encode(Array(many.dropLast())) != nil)
        #expect(StaticColumn.encode(many) == nil)
        // Equal as Swift strings, different bytes: a column would return one for the other.
        #expect(StaticColumn.encode([.string("caf\u{E9}"), .string("cafe\u{301}")]) == nil)
    }

    /// A column built from parts joined in order is byte for byte the column of one pass: the
    /// parts' dictionaries are renumbered, and what one pass refuses (too many strings over all
    /// parts, two spellings in different parts, a list) the join refuses.
    @Test func partsJoinedEncodeLikeOnePass() {
        var rng = SeededRandom(seed: TestSeed.next())
        let words = (0..<40).map { FieldValue.string("w\($0)") }
        func value() -> FieldValue? {
            switch rng.below(5) {
            case 0: nil
            case 1: .int64(Int64(rng.below(100)) - 50)
            case 2: .double(Double(rng.below(1000)) / 7)
            default: words[rng.below(words.count)]
            }
        }
        func joined(_ values: [FieldValue?], cuts: [Int]) -> [UInt8]? {
            var whole = ColumnBuilder()
            var from = 0
            for c in cuts + [values.count] {
                var part = ColumnBuilder()
                for v in values[from..<c] { part.add(v) }
                whole.append(part)
                from = c
            }
            return whole.encode()
        }
        for _ in 0..<20 {
            let values = (0..<rng.below(300)).map { _ in value() }
            let cuts = (0..<rng.below(4)).map { _ in rng.below(values.count + 1) }.sorted()
            let one = StaticColumn.encode(values)
            #expect(one != nil)
            #expect(joined(values, cuts: cuts) == one, "cuts \(cuts)")
        }
        let many = (0...StaticColumn.maxStrings).map { FieldValue.string("s\($0)") }
        #expect(joined(many, cuts: [many.count / 2]) == nil)
        #expect(joined([.string("caf\u{E9}"), .string("cafe\u{301}")], cuts: [1]) == nil)
        #expect(joined([.int64(1), .list([.int64(1)]), .int64(2)], cuts: [2]) == nil)
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
        // The first version (no dictionary) is not read.
        var first = good
        first.replaceSubrange(0..<8, with: Array("CRCOL001".utf8))
        #expect(throws: IndexSectionError.self) { _ = try open(first) }
        // A dictionary whose offsets run backwards or past the end.
        let strings = try #require(StaticColumn.encode([.string("abc"), .string("de")]))
        let offsetsAt = strings.count - 5 - 24  // 3 offsets, then 5 bytes of text
        var backwards = strings
        backwards[offsetsAt + 8] = 9
        #expect(throws: IndexSectionError.self) { _ = try open(backwards) }
        var past = strings
        past[offsetsAt + 16] = 200
        #expect(throws: IndexSectionError.self) { _ = try open(past) }
        #expect(throws: IndexSectionError.self) { _ = try open(Array(strings.dropLast())) }
        var huge = strings
        for k in 0..<8 { huge[offsetsAt + 16 + k] = 0xFF }  // an offset near UInt64.max
        #expect(throws: IndexSectionError.self) { _ = try open(huge) }
    }
}

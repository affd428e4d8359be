import CirrusTestSupport
import RecordModel
import Testing

@testable import Indexes

/// `StaticColumn`: every value round-trips (absent, int64, double, date, strings from the
/// dictionary and the heap; extremes), anything else has no column, strings too long to copy are
/// left in their rows, and a damaged section is refused, never read past its end.
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

    @Test func onlyScalarsHaveAColumn() {
        #expect(StaticColumn.encode([.list([.int64(1)])]) == nil)
        #expect(StaticColumn.encode([.bytes([1])]) == nil)
        #expect(StaticColumn.encode([nil, nil]) != nil)
        // Rows mostly holding strings too long to copy: no column (the rows hold them).
        let long = String(repeating: "x", count: StaticColumn.maxHeapString + 1)
        #expect(StaticColumn.encode([.string(long), .string(long), .string("a")]) == nil)
        #expect(StaticColumn.encode([.string(long), .string("b"), .string("a")]) != nil)
    }

    /// Strings past the dictionary (more distinct ones than it numbers, a second spelling of one
    /// text) are read back from the heap byte for byte; strings too long to copy are held in
    /// their rows — the reader says so and reads nothing. A column that needs neither is written
    /// as the version before the heap.
    @Test func stringsPastTheDictionaryComeFromTheHeapAndLongOnesFromTheRow() throws {
        let long = String(repeating: "é", count: StaticColumn.maxHeapString / 2 + 1)  // 2 bytes each
        var values: [FieldValue?] = (0...StaticColumn.maxStrings + 50).map { .string("s\($0)") }
        values += [
            .string("caf\u{E9}"), .string("cafe\u{301}"), .string("caf\u{E9}"), .string(long), nil,
            .string(String(repeating: "z", count: StaticColumn.maxHeapString)), .string("s7"), .int64(3),
        ]
        let bytes = try #require(StaticColumn.encode(values))
        #expect(Array(bytes.prefix(8)) == Array(StaticColumn.heapMagic.utf8))
        let (c, keep) = try open(bytes)
        #expect(c.count == values.count && c.strings.values.count == StaticColumn.maxStrings && c.inRowCount == 1)
        let slot = try #require(c.slot)
        for (i, v) in values.enumerated() {
            var out: [FieldValue?] = []
            let read = slot.read(i, into: &out)
            if v == .string(long) {
                #expect(!read && out.isEmpty, "row \(i) is held in its row")
                continue
            }
            #expect(read && out.count == 1, "row \(i)")
            #expect(out.first == v, "row \(i)")
            if case .string(let want)? = v, case .string(let got)?? = out.first {
                #expect(Array(got.utf8) == Array(want.utf8), "row \(i): the same bytes")
            }
        }
        withExtendedLifetime(keep) {}
        let plain = try #require(StaticColumn.encode([.string("a"), .int64(1), nil]))
        #expect(Array(plain.prefix(8)) == Array(StaticColumn.magic.utf8))
    }

    /// A column built from parts joined in order is byte for byte the column of one pass: the
    /// parts' dictionaries are renumbered (or their strings copied into the heap once the
    /// dictionary is full), their heap strings placed again, and what one pass refuses (a list)
    /// the join refuses.
    @Test func partsJoinedEncodeLikeOnePass() {
        var rng = SeededRandom(seed: TestSeed.next())
        let long = String(repeating: "l", count: StaticColumn.maxHeapString + 1)
        func value(_ distinct: Int) -> FieldValue? {
            switch rng.below(7) {
            case 0: nil
            case 1: .int64(Int64(rng.below(100)) - 50)
            case 2: .double(Double(rng.below(1000)) / 7)
            case 3: rng.below(4) == 0 ? .string(long) : .string(rng.below(2) == 0 ? "caf\u{E9}" : "cafe\u{301}")
            default: .string("w\(rng.below(distinct))")
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
        for round in 0..<24 {
            // Every fourth round has more distinct strings than the dictionary numbers.
            let (n, distinct) = round % 4 == 0 ? (9_000, 2 * StaticColumn.maxStrings) : (rng.below(300), 40)
            let values = (0..<n).map { _ in value(distinct) }
            let cuts = (0..<rng.below(4)).map { _ in rng.below(values.count + 1) }.sorted()
            let one = StaticColumn.encode(values)
            #expect(one != nil)
            #expect(joined(values, cuts: cuts) == one, "round \(round), cuts \(cuts)")
        }
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
        // The heap version: a heap or an in-row count past the section; a heap string's word
        // pointing past the heap is not read (its row is).
        let long = String(repeating: "x", count: StaticColumn.maxHeapString + 1)
        let heap = try #require(
            StaticColumn.encode([.string("caf\u{E9}"), .string("cafe\u{301}"), .string(long), .string("a")]))
        _ = try open(heap)
        for cut in [32, 39, heap.count - 1] {
            #expect(throws: IndexSectionError.self, "cut at \(cut)") { _ = try open(Array(heap.prefix(cut))) }
        }
        var heapPast = heap
        heapPast[24] &+= 1
        #expect(throws: IndexSectionError.self) { _ = try open(heapPast) }
        var inRowPast = heap
        inRowPast[32] = 5
        #expect(throws: IndexSectionError.self) { _ = try open(inRowPast) }
        var wordPast = heap
        let valuesAt = StaticColumn.heapHeaderSize + 8
        wordPast[valuesAt + 8 + 2] = 0x40  // row 1's heap offset far past the heap
        let (c, keep) = try open(wordPast)
        var out: [FieldValue?] = []
        #expect(try #require(c.slot).read(1, into: &out) == false && out.isEmpty)
        #expect(c.slot?.value(0) == .string("caf\u{E9}") && c.slot?.value(3) == .string("a"))
        withExtendedLifetime(keep) {}
    }
}

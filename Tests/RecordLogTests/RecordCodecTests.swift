// Round-trip tests of the record codec: every type, edge values, random records, and damaged
// payloads that must fail with an error (never a crash).

import CirrusTestSupport
import Foundation
import RecordModel
import Testing

@testable import CirrusIO
@testable import RecordLog

@Suite struct RecordCodecTests {
    func roundTrip(_ r: Record) throws -> Record { try RecordCodec.decode(RecordCodec.encode(r)) }

    @Test(arguments: ScalarType.allCases)
    func everyScalarTypeAndListRoundTrips(_ t: ScalarType) throws {
        var g = SeededRandom(seed: UInt64(t.rawValue))
        for _ in 0..<50 {
            var r = Record(recordType: "T", recordID: RecordID(recordName: "x"))
            r["v"] = TestRecords.scalar(t, &g)
            r["l"] = .list((0..<g.below(4) + 1).map { _ in TestRecords.scalar(t, &g) })
            let back = try roundTrip(r)
            #expect(identical(r, back), "\(r) != \(back)")
        }
    }

    /// Varints of every length (1 to 10 bytes) read back as written wherever they lie: with
    /// eight or more bytes after them (read from one load) or fewer (read a byte at a time); a
    /// truncated one is an error, never a wrong value.
    @Test func varintsOfEveryLengthReadBackAnywhere() throws {
        var g = SeededRandom(seed: 31)
        var values: [UInt64] = [0, 1, 127, 128, 1 << 56 - 1, 1 << 56, 1 << 63 - 1, .max]
        for bits in 1...64 {
            for _ in 0..<8 { values.append(g.next() >> UInt64(64 - bits)) }
        }
        for v in values {
            for padding in 0..<10 {
                var w = ByteWriter()
                w.u8(0xAA)
                w.varint(v)
                let end = w.bytes.count
                for _ in 0..<padding { w.u8(0xFF) }
                let (read, offset) = w.bytes.withUnsafeBytes { b in
                    var r = ByteReader(b, offset: 1)
                    return (try? r.varint(), r.offset)
                }
                #expect(read == v && offset == end, "\(v) with \(padding) bytes after")
                let cut = Array(w.bytes[0..<end - 1])
                let truncated = cut.withUnsafeBytes { b in
                    var r = ByteReader(b, offset: 1)
                    return try? r.varint()
                }
                #expect(truncated == nil, "\(v) cut short")
            }
        }
    }

    @Test func edgeValuesRoundTrip() throws {
        var r = Record(
            recordType: "Edge", recordID: RecordID(recordName: "e", zoneID: ZoneID(zoneName: "Z", ownerName: "_owner")),
            creationDate: Timestamp(millisecondsSince1970: .min),
            modificationDate: Timestamp(millisecondsSince1970: .max),
            creatorUserRecordID: RecordID(recordName: "_c"), lastModifiedUserRecordID: RecordID(recordName: "_m"),
            recordChangeTag: "tag")
        r["imin"] = .int64(.min)
        r["imax"] = .int64(.max)
        r["negzero"] = .double(-0.0)
        r["tiny"] = .double(.leastNonzeroMagnitude)
        r["empty"] = .string("")
        r["emptyBytes"] = .bytes([])
        r["emptyList"] = .list([])
        r["loc"] = .location(
            Location(latitude: -90, longitude: 180, altitude: -0.0, timestamp: Timestamp(millisecondsSince1970: -5)))
        let back = try roundTrip(r)
        #expect(identical(r, back))
    }

    /// The decoder reuses the creator's id when the modifier's bytes repeat it: every pairing —
    /// equal, differing only in zone or owner, one name a prefix of the other, either absent —
    /// comes back as written, with a change tag or a field after it whose bytes could extend the
    /// comparison.
    @Test func creatorAndModifierPairsRoundTrip() throws {
        let custom = ZoneID(zoneName: "Z", ownerName: "_o")
        let ids: [RecordID?] = [
            nil, RecordID(recordName: "_u"), RecordID(recordName: "_u", zoneID: custom),
            RecordID(recordName: "_u", zoneID: ZoneID(zoneName: "Z", ownerName: "_p")), RecordID(recordName: "_uu"),
            RecordID(recordName: "_"), RecordID(recordName: String(repeating: "_user", count: 8)),
        ]
        for creator in ids {
            for modifier in ids {
                for tag in [nil, "\u{1}_u"] {
                    var r = Record(
                        recordType: "T", recordID: RecordID(recordName: "x"), creatorUserRecordID: creator,
                        lastModifiedUserRecordID: modifier, recordChangeTag: tag)
                    r["a"] = .string("_u")
                    let bytes = RecordCodec.encode(r)
                    let back = try RecordCodec.decode(bytes)
                    #expect(identical(r, back), "\(String(describing: creator)) / \(String(describing: modifier))")
                    let names = RecordCodec.NameTable(records: [r], recordType: "T")
                    let viaTable = try bytes.withUnsafeBytes { try RecordCodec.decode($0, names: names) }
                    #expect(identical(r, viaTable))
                }
            }
        }
    }

    @Test func randomRecordsRoundTrip() throws {
        let seed = TestSeed.next()
        print("RecordCodecTests.randomRecordsRoundTrip seed \(seed)")
        var g = SeededRandom(seed: seed)
        for i in 0..<2000 {
            let r = TestRecords.record(&g)
            let back = try roundTrip(r)
            #expect(identical(r, back), "seed \(seed) record \(i)")
        }
    }

    /// A row's fields written in the reverse of the codec's order (as a damaged or foreign
    /// writer might): a decoder must still sort them.
    func encodeReversed(_ record: Record) -> [UInt8] {
        var w = ByteWriter(capacity: 128)
        w.u8(RecordCodec.version)
        RecordCodec.encodeRecordID(record.recordID, into: &w)
        w.string(record.recordType)
        w.u8(0)
        w.varint(UInt64(record.fields.count))
        for (name, value) in record.fields.reversed() {
            w.string(name)
            RecordCodec.encodeValue(value, into: &w)
        }
        return w.bytes
    }

    /// Decoding with a segment's name table gives the record decoding without one gives —
    /// names in the table or not, in its order or not, another record type — and lookups by
    /// name find every field.
    @Test func decodingWithANameTableGivesTheSameRecord() throws {
        let seed = TestSeed.next()
        print("RecordCodecTests.decodingWithANameTableGivesTheSameRecord seed \(seed)")
        var g = SeededRandom(seed: seed)
        var tables: [RecordCodec.NameTable] = []
        for _ in 0..<8 {
            let r = TestRecords.record(&g)
            tables.append(RecordCodec.NameTable(records: [r], recordType: r.recordType))
        }
        for i in 0..<2000 {
            let table = tables[i % tables.count]
            // Half the records share the table's names (and type), the others are random.
            var r = TestRecords.record(&g)
            if i % 2 == 0 {
                var same = Record(recordType: table.recordType, recordID: r.recordID)
                for (k, name) in table.names.enumerated() where (k + i) % 3 != 0 {
                    same[name] = r.fields.first?.value ?? .int64(Int64(k))
                }
                r = same
            }
            for bytes in [RecordCodec.encode(r), encodeReversed(r)] {
                let plain = try RecordCodec.decode(bytes)
                let named = try bytes.withUnsafeBytes { b throws(CodecError) in try RecordCodec.decode(b, names: table)
                }
                #expect(identical(plain, named), "seed \(seed) record \(i)")
                for (name, value) in plain.fields { #expect(named[name] == value, "seed \(seed) record \(i) \(name)") }
            }
        }
    }

    /// Reading a selection from the bytes gives each selected field's value of the full decode
    /// (nil where absent), whatever the names, order and duplicates asked; damage is still found.
    @Test func selectedValuesAreTheFullDecodesValues() throws {
        let seed = TestSeed.next()
        print("RecordCodecTests.selectedValuesAreTheFullDecodesValues seed \(seed)")
        var g = SeededRandom(seed: seed)
        var out: [FieldValue?] = []
        for i in 0..<2000 {
            let r = TestRecords.record(&g)
            let pool = r.fields.keys.sorted() + ["absent", "titles", "", String(repeating: "x", count: 70)]
            let names = (0..<g.below(5)).map { _ in pool[g.below(pool.count)] }
            let selection = FieldSelection(names)
            let bytes = RecordCodec.encode(r)
            try bytes.withUnsafeBytes { try RecordCodec.values($0, of: selection, into: &out) }
            #expect(out.count == selection.count)
            for (k, name) in selection.names.enumerated() {
                switch (r.fields[name], out[k]) {
                case (nil, nil): break
                case (let a?, let b?): #expect(identical(a, b), "seed \(seed) record \(i) field \(name)")
                default: Issue.record("seed \(seed) record \(i) field \(name): \(String(describing: out[k]))")
                }
            }
            // A payload cut before its header ends is refused, not read past its end.
            let cut = g.below(max(1, min(bytes.count, 12)))
            #expect(throws: CodecError.self) {
                try Array(bytes.prefix(cut)).withUnsafeBytes { try RecordCodec.values($0, of: selection, into: &out) }
            }
        }
    }

    /// A partial decode holds exactly the kept fields (and every system field) of the full one,
    /// and every value it skips is skipped exactly (the payload still ends where it should).
    @Test func partialDecodeKeepsOnlyTheNamedFields() throws {
        let seed = TestSeed.next()
        print("RecordCodecTests.partialDecodeKeepsOnlyTheNamedFields seed \(seed)")
        var g = SeededRandom(seed: seed)
        for i in 0..<2000 {
            let r = TestRecords.record(&g)
            let names = r.fields.keys.sorted()
            let keep = Set(names.filter { _ in g.below(2) == 0 } + ["absent"])
            let bytes = RecordCodec.encode(r)
            let part = try bytes.withUnsafeBytes { try RecordCodec.decode($0, onlyFields: keep) }
            var expected = r
            expected.fields = r.fields.filter { keep.contains($0.key) }
            #expect(identical(expected, part), "seed \(seed) record \(i) keeping \(keep.sorted())")
            // Damage is still found when the damaged value is skipped.
            let cut = g.below(bytes.count)
            #expect(throws: CodecError.self) {
                try Array(bytes.prefix(cut)).withUnsafeBytes { try RecordCodec.decode($0, onlyFields: []) }
            }
        }
    }

    /// Skipping a list of strings or bytes (`skipValue`, whose leading short bodies are passed
    /// over by their one-byte prefixes alone) ends where skipping body by body ends, or fails
    /// with the same error at the same offset: lists of short, long (two-byte prefix) and empty
    /// bodies, cut anywhere or with a byte changed.
    @Test func skippingAListEndsWhereSkippingEachBodyEnds() {
        let seed = TestSeed.next()
        print("RecordCodecTests.skippingAListEndsWhereSkippingEachBodyEnds seed \(seed)")
        var g = SeededRandom(seed: seed)
        func reference(_ bytes: [UInt8]) -> Result<Int, CodecError> {
            bytes.withUnsafeBytes { b in
                var r = ByteReader(b)
                do throws(CodecError) {
                    let (scalar, count) = try RecordCodec.valueHead(&r)
                    for _ in 0..<count { try RecordCodec.skipBody(scalar, &r) }
                    return .success(r.offset)
                } catch {
                    return .failure(error)
                }
            }
        }
        func skipped(_ bytes: [UInt8]) -> Result<Int, CodecError> {
            bytes.withUnsafeBytes { b in
                var r = ByteReader(b)
                do throws(CodecError) {
                    try RecordCodec.skipValue(&r)
                    return .success(r.offset)
                } catch {
                    return .failure(error)
                }
            }
        }
        for i in 0..<3000 {
            let kind: ScalarType = g.below(2) == 0 ? .string : .bytes
            let items: [FieldValue] = (0..<g.below(40) + 2).map { _ in
                let n = [0, 1, 5, 126, 127, 128, 300][g.below(7)]
                return kind == .string
                    ? .string(String(repeating: "é", count: n / 2) + String(repeating: "a", count: n % 2))
                    : .bytes((0..<n).map { _ in UInt8(g.below(256)) })
            }
            var w = ByteWriter()
            RecordCodec.encodeValue(.list(items), into: &w)
            var bytes = w.bytes + [0xFF, 0x01]  // bytes after the value are not part of it
            switch g.below(3) {
            case 0: break
            case 1: bytes = Array(bytes.prefix(g.below(bytes.count)))
            default: bytes[g.below(bytes.count)] ^= UInt8(1 << g.below(8))
            }
            let (a, b) = (reference(bytes), skipped(bytes))
            switch (a, b) {
            case (.success(let x), .success(let y)): #expect(x == y, "seed \(seed) list \(i)")
            case (.failure(let x), .failure(let y)):
                #expect(x.offset == y.offset && x.message == y.message, "seed \(seed) list \(i): \(x) / \(y)")
            default: Issue.record("seed \(seed) list \(i): \(a) against \(b)")
            }
        }
    }

    @Test func damagedPayloadsThrowNeverCrash() {
        let seed = TestSeed.next()
        print("RecordCodecTests.damagedPayloadsThrowNeverCrash seed \(seed)")
        var g = SeededRandom(seed: seed)
        for _ in 0..<500 {
            let bytes = RecordCodec.encode(TestRecords.record(&g))
            // Every strict prefix is an error.
            let cut = g.below(bytes.count)
            #expect(throws: CodecError.self) { try RecordCodec.decode(Array(bytes.prefix(cut))) }
            // Random corruption either decodes to something or throws; it must not trap.
            var bad = bytes
            bad[g.below(bad.count)] ^= UInt8(1 << g.below(8))
            _ = try? RecordCodec.decode(bad)
        }
    }

    /// A string whose bytes are not UTF-8 is an error naming its offset, wherever the bad byte
    /// sits (in the eight-byte steps of the ASCII check or in its tail); valid strings, ASCII or
    /// not, of every length around those steps read back as written.
    @Test func stringsThatAreNotUTF8AreErrors() throws {
        func read(_ bytes: [UInt8]) throws -> String {
            var w = ByteWriter()
            w.varint(UInt64(bytes.count))
            for b in bytes { w.u8(b) }
            return try w.bytes.withUnsafeBytes { p in
                var r = ByteReader(p)
                return try r.string()
            }
        }
        for n in 0..<20 {
            let ascii = String(repeating: "a", count: n)
            #expect(try read(Array(ascii.utf8)) == ascii)
            let accented = String(repeating: "a", count: n) + "é" + String(repeating: "z", count: n % 5)
            #expect(try read(Array(accented.utf8)) == accented)
            for bad in [[0xFF], [0xC3], [0xE2, 0x82], [0xC0, 0xAF], [0xED, 0xA0, 0x80]] as [[UInt8]] {
                for at in [0, n / 2, n] {
                    var bytes = Array(ascii.utf8)
                    bytes.insert(contentsOf: bad, at: at)
                    #expect(throws: CodecError.self, "\(bad) at \(at) of \(n)") { try read(bytes) }
                }
            }
        }
    }

    @Test func entriesRoundTrip() throws {
        let schema = Schema(
            environment: .production,
            recordTypes: [
                RecordTypeSchema(name: "Note", fields: [FieldSchema(name: "t", type: .string, options: .queryable)])
            ])
        let entries: [LogEntry] = [
            .deletion(RecordID(recordName: "a", zoneID: ZoneID(zoneName: "Z")), recordType: "Note"),
            .zoneCreate(ZoneID(zoneName: "Z", ownerName: "o")), .zoneDelete(.default), .schemaChange(schema),
            .checkpoint(highestSequence: 99, horizon: 7),
        ]
        for e in entries {
            var w = ByteWriter()
            try e.encodePayload(into: &w)
            let back = try w.bytes.withUnsafeBytes { try LogEntry.decode(kind: e.kind.rawValue, payload: $0) }
            #expect(back == e)
        }
    }
}

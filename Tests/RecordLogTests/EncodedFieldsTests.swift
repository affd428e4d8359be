// Records whose fields are held encoded (RecordCodec.decode(…, encodedFields: true)) against
// the same bytes decoded eagerly — the model: every read (by name, absent names, iteration,
// count, equality, hashing, `keeping`, writes) agrees; damaged bytes fail at the read exactly
// when eager decoding fails; and the UTF-8 check agrees with the standard library's.

import CirrusTestSupport
import Foundation
import RecordModel
import Testing

@testable import CirrusIO

@Suite struct EncodedFieldsTests {
    func both(
        _ bytes: [UInt8], names: RecordCodec.NameTable? = nil
    ) -> (Result<Record, CodecError>, Result<Record, CodecError>) {
        bytes.withUnsafeBytes { p in
            let eager = Result { () throws(CodecError) -> Record in try RecordCodec.decode(p, names: names) }
            let lazy = Result { () throws(CodecError) -> Record in
                try RecordCodec.decode(p, names: names, encodedFields: true)
            }
            return (eager, lazy)
        }
    }

    @Test func encodedFieldsReadAsDecodedOnes() throws {
        let seed = TestSeed.next()
        print("EncodedFieldsTests.encodedFieldsReadAsDecodedOnes seed \(seed)")
        var g = SeededRandom(seed: seed)
        var heldEncoded = 0
        for round in 0..<400 {
            let record = TestRecords.record(&g)
            let table = round % 2 == 0 ? RecordCodec.NameTable(records: [record], recordType: record.recordType) : nil
            let (eagerResult, lazyResult) = both(RecordCodec.encode(record), names: table)
            let eager = try eagerResult.get()
            let lazy = try lazyResult.get()
            if lazy.fields.isEncoded { heldEncoded += 1 }
            #expect(lazy.fields.count == eager.fields.count)
            for name in TestRecords.fieldNames + ["absent", "", "zzz", "A"] {
                #expect(lazy[name].map { v in eager[name].map { identical(v, $0) } ?? false } ?? (eager[name] == nil))
            }
            #expect(lazy.fields.isEncoded || lazy.fields.isEmpty, "reads by name and count decode nothing else")
            let keep = Set(TestRecords.fieldNames.filter { _ in g.chance(0.4) })
            #expect(lazy.fields.keeping(keep) == eager.fields.keeping(keep))
            #expect(identical(lazy, eager))
            #expect(lazy == eager && lazy.hashValue == eager.hashValue)
            #expect(Array(lazy.fields.keys) == Array(eager.fields.keys))
            // A write leaves the record decoded, and the copy it was made from unchanged.
            var written = lazy
            written["title"] = .string("written")
            #expect(!written.fields.isEncoded && written["title"] == .string("written"))
            #expect(identical(lazy, eager))
        }
        #expect(heldEncoded > 300, "records with fields are held encoded: \(heldEncoded)")
    }

    /// Fields the check refuses to hold encoded — names out of order, repeated, not ASCII — are
    /// decoded at the read as before, with the same result.
    @Test func fieldsNotInOrderAreDecodedAtTheRead() throws {
        var w = ByteWriter()
        w.u8(RecordCodec.version)
        RecordCodec.encodeRecordID(RecordID(recordName: "r"), into: &w)
        w.string("T")
        w.u8(0)
        let names = ["b", "a", "a", "é"]
        w.varint(UInt64(names.count))
        for (k, n) in names.enumerated() {
            w.string(n)
            RecordCodec.encodeValue(.int64(Int64(k)), into: &w)
        }
        let (eager, lazy) = both(w.bytes)
        let e = try eager.get()
        let l = try lazy.get()
        #expect(!l.fields.isEncoded)
        #expect(identical(e, l) && l["a"] == .int64(2) && l.fields.count == 3)
    }

    /// The writer's check (`fieldsHoldEncoded`, kept per row in `rowsums`) accepts exactly the
    /// payloads whose fields the reader's walk holds encoded, damaged ones included; and such a
    /// payload decoded without the walk (`fieldsChecked`) reads as the eager decoding.
    @Test func theWritersCheckAgreesWithTheReadersWalk() throws {
        let seed = TestSeed.next()
        print("EncodedFieldsTests.theWritersCheckAgreesWithTheReadersWalk seed \(seed)")
        var g = SeededRandom(seed: seed)
        var accepted = 0
        var refused = 0
        for round in 0..<3000 {
            var bytes = RecordCodec.encode(TestRecords.record(&g))
            if round % 2 == 1 {
                for _ in 0..<(1 + g.below(3)) { bytes[g.below(bytes.count)] ^= UInt8(1 << g.below(8)) }
            }
            let holds = bytes.withUnsafeBytes { RecordCodec.fieldsHoldEncoded($0) }
            let (eager, lazy) = both(bytes)
            let walked = (try? lazy.get()).map { $0.fields.isEncoded || $0.fields.isEmpty } ?? false
            #expect(holds == walked, "round \(round)")
            guard holds else {
                refused += 1
                continue
            }
            accepted += 1
            let trusted = try bytes.withUnsafeBytes { p in
                try RecordCodec.decode(p, encodedFields: true, fieldsChecked: true)
            }
            #expect(identical(trusted, try eager.get()), "round \(round)")
        }
        #expect(accepted > 1500 && refused > 500, "accepted \(accepted), refused \(refused)")
    }

    /// Damaged bytes: held encoded or not, a record reads only when eager decoding reads it,
    /// and then identically; no read of a record that was returned traps.
    @Test func damagedBytesFailAtTheReadAsEagerDecodingDoes() {
        let seed = TestSeed.next()
        print("EncodedFieldsTests.damagedBytesFailAtTheReadAsEagerDecodingDoes seed \(seed)")
        var g = SeededRandom(seed: seed)
        var failed = 0
        for _ in 0..<2000 {
            var bytes = RecordCodec.encode(TestRecords.record(&g))
            for _ in 0..<(1 + g.below(3)) { bytes[g.below(bytes.count)] ^= UInt8(1 << g.below(8)) }
            if g.chance(0.2) { bytes.removeLast(g.below(bytes.count)) }
            let (eager, lazy) = both(bytes)
            switch (eager, lazy) {
            case (.success(let e), .success(let l)):
                #expect(identical(e, l))
                for (k, v) in l.fields { #expect(l[k] == v) }
            case (.failure, .failure): failed += 1
            default: Issue.record("eager \(eager) but encoded \(lazy)")
            }
        }
        #expect(failed > 100, "damage was found: \(failed)")
    }

    /// A rows section's name-table sample reads a record's type and field names without its
    /// values: the decoded record's type and names, in stored order; damaged bytes that decoding
    /// accepts give the same type and names; a truncated record (every length) is refused; and the table of a
    /// sample's names is the table of its records.
    @Test func typeAndNamesAreTheDecodedRecords() throws {
        let seed = TestSeed.next()
        print("EncodedFieldsTests.typeAndNamesAreTheDecodedRecords seed \(seed)")
        var g = SeededRandom(seed: seed)
        for _ in 0..<300 {
            let record = TestRecords.record(&g)
            let bytes = RecordCodec.encode(record)
            let (type, names) = try bytes.withUnsafeBytes { p in try RecordCodec.typeAndFieldNames(p) }
            #expect(type == record.recordType)
            #expect(names == record.fields.map(\.0))
            for cut in 0..<bytes.count {
                let refused = bytes.withUnsafeBytes { p in
                    (try? RecordCodec.typeAndFieldNames(UnsafeRawBufferPointer(rebasing: p[0..<cut]))) == nil
                }
                #expect(refused, "a record cut to \(cut) of \(bytes.count) bytes read as whole")
            }
            let table = RecordCodec.NameTable(names: Set(names), recordType: type)
            #expect(table.names == RecordCodec.NameTable(records: [record], recordType: type).names)
        }
        for _ in 0..<2000 {
            var bytes = RecordCodec.encode(TestRecords.record(&g))
            for _ in 0..<(1 + g.below(3)) { bytes[g.below(bytes.count)] ^= UInt8(1 << g.below(8)) }
            let decoded = bytes.withUnsafeBytes { p in try? RecordCodec.decode(p) }
            let walked = bytes.withUnsafeBytes { p in try? RecordCodec.typeAndFieldNames(p) }
            if let decoded {
                #expect(walked?.recordType == decoded.recordType)
                // Decoding puts a damaged name back in order; the table sorts the names anyway.
                #expect(walked.map { Set($0.names) } == Set(decoded.fields.map(\.0)))
            }
        }
    }

    /// The UTF-8 check accepts exactly what `String(validating:)` accepts: random bytes biased
    /// towards lead and continuation bytes, and the edges of every range.
    @Test func utf8CheckAgreesWithTheStandardLibrary() {
        var g = SeededRandom(seed: 7)
        let interesting: [UInt8] = [
            0x00, 0x7F, 0x80, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3,
            0xF4, 0xF5, 0xFF, 0x8F, 0x90, 0x9F, 0xA0, 0x41,
        ]
        for _ in 0..<200_000 {
            let n = g.below(7)
            let bytes = (0..<n).map { _ in g.chance(0.7) ? interesting[g.below(interesting.count)] : UInt8(g.below(256))
            }
            let want = String(validating: bytes, as: UTF8.self) != nil
            let got = bytes.withUnsafeBytes { ByteReader.isValidUTF8($0) }
            #expect(got == want, "\(bytes.map { String($0, radix: 16) })")
            if got != want { return }
        }
        // Longer strings: ASCII runs (read eight bytes at a time) with a few other bytes in them.
        for _ in 0..<50_000 {
            let n = g.below(40)
            let bytes = (0..<n).map { _ in
                g.chance(0.85) ? UInt8(0x20 + g.below(0x5F)) : interesting[g.below(interesting.count)]
            }
            let want = String(validating: bytes, as: UTF8.self) != nil
            let got = bytes.withUnsafeBytes { ByteReader.isValidUTF8($0) }
            #expect(got == want, "\(bytes.map { String($0, radix: 16) })")
            if got != want { return }
        }
    }

    /// A string list's body is checked in one pass when every length prefix is one byte: it
    /// fails exactly when checking string by string fails (sequences cut at a string's end,
    /// continuation bytes at a string's start, lengths of 128 and more taking the other path).
    @Test func stringListCheckAgreesWithCheckingEachString() {
        var g = SeededRandom(seed: 8)
        let pieces: [[UInt8]] = [
            [0x41], [0x61, 0x62], [0xC3, 0xA9], [0xC3], [0xA9], [0xE2, 0x82, 0xAC], [0xE2, 0x82],
            [0xF0, 0x9F, 0x98, 0x80],
            [0xF0, 0x9F], [0x80], [0xFF], [0xED, 0xA0, 0x80],
        ]
        var failed = 0
        for _ in 0..<20_000 {
            let count = 2 + g.below(6)
            var strings: [[UInt8]] = []
            for _ in 0..<count {
                var b: [UInt8] = []
                let long = g.chance(0.05)
                for _ in 0..<(long ? 70 : g.below(5)) { b += pieces[g.below(g.chance(0.8) ? 3 : pieces.count)] }
                strings.append(b)
            }
            var w = ByteWriter()
            w.u8(ScalarType.string.rawValue | 0x10)  // a list of strings
            w.varint(UInt64(count))
            for b in strings { w.byteString(b) }
            let want = strings.allSatisfy { String(validating: $0, as: UTF8.self) != nil }
            let got = w.bytes.withUnsafeBytes { buf -> Bool in
                var r = ByteReader(buf)
                do throws(CodecError) {
                    try RecordCodec.checkValue(&r)
                    return r.isAtEnd
                } catch { return false }
            }
            #expect(got == want, "\(strings)")
            if !want { failed += 1 }
            if got != want { return }
        }
        #expect(failed > 1000, "some lists were damaged: \(failed)")
    }
}

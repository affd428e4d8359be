import CirrusTestSupport
import RecordModel
import Testing

@testable import CirrusIO
@testable import RecordLog

/// The `rownames` section: the writer's sample of the rows' type and field names (rows 0, 1, 2,
/// 4, … and every 1 024th) is the layer's name table; without the section the rows are sampled
/// at open as before; a section that does not parse is reported and not used; no bytes make the
/// reader crash or read past the section.
@Suite struct RowNamesTests {
    /// Writes `records` as the rows of a segment at `path`; `sums: false` writes the older form
    /// (no `rowsums`, no `rownames`); `extra` sections follow.
    func write(
        _ records: [Record], _ fs: InMemoryFileSystem, _ path: String, sums: Bool = true,
        extra: [(String, [UInt8])] = []
    ) throws -> RowSection {
        var w = try DataSegmentWriter(fileSystem: fs, path: path)
        var rw = try RowSectionWriter(into: &w)
        for (i, r) in records.enumerated() {
            let id = RecordID(recordName: "r" + String(String(100_000 + i).dropFirst()))
            try RecordCodec.encode(r).withUnsafeBytes { try rw.add(id, sequence: UInt64(i), payload: $0, into: &w) }
        }
        try rw.finish(into: &w, sums: sums)
        for (name, bytes) in extra { try w.addSection(name, bytes) }
        try w.finish()
        return try RowSection(segment: try DataSegment.open(path, fileSystem: fs))
    }

    /// Rows whose field names vary with their position: row i has `f<i % 7>` and, when i is a
    /// multiple of 1 024, `wide<i>`.
    func records(_ n: Int) -> [Record] {
        (0..<n).map { i in
            var fields: [String: FieldValue] = ["f\(i % 7)": .int64(Int64(i)), "name": .string("row \(i)")]
            if i % 1024 == 0 { fields["wide\(i)"] = .string("w") }
            return rec("r\(i)", "Thing", RecordFields(fields))
        }
    }

    @Test func theTableIsTheWritersSampleOfTheRows() throws {
        let fs = InMemoryFileSystem()
        let all = records(5000)
        let rows = try write(all, fs, "/s")
        let sampled = all.indices.filter { $0 & ($0 - 1) == 0 || $0 % 1024 == 0 }
        let expected = Set(sampled.flatMap { all[$0].fields.keys })
        let table = try #require(rows.names)
        #expect(table.recordType == "Thing")
        #expect(Set(table.names) == expected)
        #expect(expected.contains("wide4096") && expected.contains("f6") && !expected.contains("wide4097"))
        #expect(rows.namesDamage == nil)
        for i in [0, 1, 2500, 4096, 4999] { #expect(try rows.record(i).fields == all[i].fields) }

        // The older form: nine rows sampled at open, the same records.
        let old = try write(all, fs, "/o", sums: false)
        let nine = Set([0, 4999] + (1..<8).map { $0 * 5000 / 8 })
        #expect(Set(try #require(old.names).names) == Set(nine.flatMap { all[$0].fields.keys }))
        for i in [0, 1, 2500, 4096, 4999] { #expect(try old.record(i).fields == all[i].fields) }
    }

    @Test func aSectionThatDoesNotParseIsReportedAndTheRowsSampled() throws {
        let fs = InMemoryFileSystem()
        let all = records(300)
        var good = RowNames.Writer()
        for (i, r) in all.enumerated() { RecordCodec.encode(r).withUnsafeBytes { good.add(i, $0) } }
        let sound = try #require(good.encoded())
        let soundType = sound.withUnsafeBytes { b in
            try? RowNames.read(b) { .badSegment(path: "", offset: 0, reason: $0) }.recordType
        }
        #expect(soundType == "Thing")
        let cases: [(String, [UInt8])] = [
            ("bad header", Array("CRNAME99".utf8) + Array(sound.dropFirst(8))),
            ("runs past the section", Array(sound.dropLast(1))),
            ("follow the names", sound + [0]),
            ("cannot fit", RowNames.magic + [0xFF, 0xFF, 0, 0, 0, 0, 0, 0] + Array(sound.dropFirst(16))),
            ("not UTF-8", Array(sound[0..<16]) + [1, 0, 0xFF] + Array(sound.dropFirst(16 + 2 + 5))),
        ]
        for (what, bytes) in cases {
            let rows = try write(all, fs, "/d", sums: false, extra: [("rownames", bytes)])
            guard case .badSegment(let path, let offset, let reason) = rows.namesDamage else {
                Issue.record("\(what): no damage reported")
                continue
            }
            #expect(path == "/d" && offset > 0 && reason.contains("rownames section: ") && reason.contains(what))
            #expect(try #require(rows.names).recordType == "Thing")
            for i in all.indices { #expect(try rows.record(i).fields == all[i].fields) }
        }
    }

    /// Every prefix of a sound section, and every byte of it changed: refused with a reason, or
    /// read as a type and names that are the bytes' own strings.
    @Test func mangledSectionsAreRefusedOrReadWithinTheirBytes() {
        var good = RowNames.Writer()
        for (i, r) in records(2100).enumerated() { RecordCodec.encode(r).withUnsafeBytes { good.add(i, $0) } }
        guard let sound = good.encoded() else {
            Issue.record("no section")
            return
        }
        var g = SplitMix64(seed: 0x726f_776e)
        var variants = (0..<sound.count).map { Array(sound[..<$0]) }
        for i in sound.indices {
            var b = sound
            b[i] ^= UInt8.random(in: 1...255, using: &g)
            variants.append(b)
        }
        for v in variants {
            let read = v.withUnsafeBytes { b in
                Result { () throws(LogError) in try RowNames.read(b) { .badSegment(path: "", offset: 0, reason: $0) } }
            }
            if case .success(let (type, names)) = read {
                #expect(type.utf8.count + names.reduce(0) { $0 + $1.utf8.count } <= v.count)
            }
        }
    }
}

import CirrusIO
import CirrusTestSupport
import RecordModel
import Testing

@testable import RecordLog

/// The `rowsums` section: the writer's verdict on each row agrees with the codec's check, a row
/// it checked reads through its CRC exactly as the walked row reads, a changed byte the walk
/// cannot see (a letter for another) is damage, and a damaged section is reported and not used
/// (rows are walked as before).
@Suite struct RowSumsTests {
    /// Writes `payloads` as the rows of a segment at `path` (ids r0000, r0001, … in order).
    func write(
        _ payloads: [[UInt8]], _ fs: InMemoryFileSystem, _ path: String, extra: [(String, [UInt8])] = []
    ) throws -> RowSection {
        var w = try DataSegmentWriter(fileSystem: fs, path: path)
        var rw = try RowSectionWriter(into: &w)
        for (i, p) in payloads.enumerated() {
            let id = RecordID(recordName: "r" + String(String(10_000 + i).dropFirst()))
            try p.withUnsafeBytes { try rw.add(id, sequence: UInt64(i), payload: $0, into: &w) }
        }
        try rw.finish(into: &w, sums: extra.isEmpty)
        for (name, bytes) in extra { try w.addSection(name, bytes) }
        try w.finish()
        return try RowSection(segment: try DataSegment.open(path, fileSystem: fs))
    }

    /// Records, records whose fields cannot be held encoded (names out of order) and bytes that
    /// are no record at all.
    func payloads(_ g: inout SeededRandom) -> [[UInt8]] {
        var out: [[UInt8]] = []
        for i in 0..<300 {
            switch i % 10 {
            case 7:
                var w = ByteWriter()
                w.u8(RecordCodec.version)
                RecordCodec.encodeRecordID(RecordID(recordName: "x\(i)"), into: &w)
                w.string("T")
                w.u8(0)
                w.varint(2)
                for n in ["b", "a"] {
                    w.string(n)
                    RecordCodec.encodeValue(.string(n), into: &w)
                }
                out.append(w.bytes)
            case 9: out.append(Array("not a record \(i)".utf8))
            default: out.append(RecordCodec.encode(TestRecords.record(&g)))
            }
        }
        return out
    }

    @Test func checkedRowsReadAsWalkedRowsRead() throws {
        let seed = TestSeed.next()
        print("RowSumsTests.checkedRowsReadAsWalkedRowsRead seed \(seed)")
        var g = SeededRandom(seed: seed)
        let fs = InMemoryFileSystem()
        let all = payloads(&g)
        let rows = try write(all, fs, "/s")
        let sums = try #require(rows.sums)
        #expect(rows.sumsDamage == nil)
        var checked = 0
        for (i, p) in all.enumerated() {
            let holds = p.withUnsafeBytes { RecordCodec.fieldsHoldEncoded($0) }
            #expect(sums.checked(i) == holds, "row \(i)")
            #expect(sums.sum(i) == CRC32C.checksum(p))
            if holds { checked += 1 }
            let eager = Result { () throws(LogError) in try rows.record(i) }
            let held = Result { () throws(LogError) in try rows.record(i, encodedFields: true) }
            switch (eager, held) {
            case (.success(let e), .success(let h)):
                #expect(identical(e, h), "row \(i)")
                #expect((h.fields.isEncoded || h.fields.isEmpty) == holds, "row \(i)")
            case (.failure, .failure): #expect(i % 10 == 9, "row \(i) is a record")
            default: Issue.record("row \(i): eager \(eager), held \(held)")
            }
        }
        #expect(checked >= 200, "\(checked) rows checked")
    }

    /// A row's CRC is checked at its first read in the process and remembered (`RowSums.Seen`):
    /// a bit is set for each row read that the writer checked, none for rows not read or not
    /// checked, and later reads return the same records. A section opened anew checks again.
    @Test func aRowsCRCIsCheckedAtItsFirstReadOnly() throws {
        var g = SeededRandom(seed: 23)
        let fs = InMemoryFileSystem()
        let all = payloads(&g)
        let rows = try write(all, fs, "/s")
        let sums = try #require(rows.sums)
        let seen = try #require(sums.seen)
        func isSeen(_ i: Int) -> Bool { seen[i / 64] & (1 << UInt64(i % 64)) != 0 }
        let read = Set(all.indices.filter { $0 % 3 == 0 })
        var first: [Int: Record] = [:]
        for i in read.sorted() { first[i] = try? rows.record(i, encodedFields: true) }
        for i in all.indices {
            #expect(isSeen(i) == (read.contains(i) && sums.checked(i)), "row \(i)")
        }
        for i in read.sorted() {
            let again = try? rows.record(i, encodedFields: true)
            #expect((first[i] == nil) == (again == nil), "row \(i)")
            if let a = first[i], let b = again { #expect(identical(a, b), "row \(i)") }
        }
        let reopened = try RowSection(segment: try DataSegment.open("/s", fileSystem: fs))
        let fresh = try #require(reopened.sums?.seen)
        #expect((0..<(all.count + 63) / 64).allSatisfy { fresh[$0] == 0 }, "a new open has checked nothing")
    }

    /// A bulk load's runs take their entries from `BulkLoad.rowSums`, worked out on every core:
    /// each item's own CRC and verdict, in item order (more items than one chunk of work).
    @Test func bulkRunEntriesAreEachItemsOwn() {
        var g = SeededRandom(seed: 5)
        var all: [[UInt8]] = []
        while all.count < 9_000 { all += payloads(&g) }
        let items = all.enumerated().map { (id: RecordID(recordName: "r\($0)"), sequence: UInt64($0), payload: $1) }
        let entries = BulkLoad.rowSums(items)
        #expect(entries.count == all.count)
        for (i, p) in all.enumerated() {
            let own = p.withUnsafeBytes(RowSums.Entry.init)
            #expect(entries[i].sum == own.sum && entries[i].holdsEncoded == own.holdsEncoded, "item \(i)")
        }
        #expect(entries.contains { $0.holdsEncoded } && entries.contains { !$0.holdsEncoded })
    }

    /// A letter changed into another inside a string: still well-formed, so the walk (and eager
    /// decoding) would return the changed value; the row's CRC finds it.
    @Test func aChangedLetterIsDamageTheWalkCannotSee() throws {
        let fs = InMemoryFileSystem()
        var record = Record(recordType: "Note", recordID: RecordID(recordName: "n"))
        record["title"] = .string("hello world")
        let rows = try write([RecordCodec.encode(record)], fs, "/c")
        #expect(try rows.record(0, encodedFields: true)["title"] == .string("hello world"))
        let payload = try #require(rows.payload(0))
        let at = try #require(
            (0..<payload.count - 4).first { o in Array(payload[o..<o + 5]) == Array("hello".utf8) })
        let offset = payload.baseAddress! - rows.segment.file.bytes.baseAddress! + at
        fs.flipBit("/c", atByte: offset, bit: 0)  // "h" becomes "i"

        let damaged = try RowSection(segment: try DataSegment.open("/c", fileSystem: fs))
        let changed = try RecordCodec.decode(try #require(damaged.payload(0)), encodedFields: true)
        #expect(changed["title"] == .string("iello world"), "the bytes still decode, walked or not")
        for encoded in [true, false] {
            #expect(throws: LogError.self) { try damaged.record(0, encodedFields: encoded) }
            do {
                _ = try damaged.record(0, encodedFields: encoded)
            } catch {
                #expect("\(error)".contains("CRC") && "\(error)".contains("row 0"), "\(error)")
            }
        }
    }

    /// A `rowsums` section that does not fit the rows is not used: `sumsDamage` names the file,
    /// offset and reason, and every row reads as the walked row reads.
    @Test func aDamagedSectionIsReportedAndRowsAreWalked() throws {
        var g = SeededRandom(seed: 11)
        let fs = InMemoryFileSystem()
        let all = (0..<10).map { _ in RecordCodec.encode(TestRecords.record(&g)) }
        var good = RowSums.Writer()
        for p in all { p.withUnsafeBytes { good.add(RowSums.Entry($0)) } }
        let sound = good.encoded()
        for (what, bytes) in [
            ("bad header", Array("CRSUMS99".utf8) + sound.dropFirst(8)),
            ("sums for 10 rows", Array(sound.dropLast(8))),
            ("sums for 10 rows", RowSums.magic + [9, 0, 0, 0, 0, 0, 0, 0] + sound.dropFirst(16)),
        ] {
            let rows = try write(all, fs, "/d", extra: [("rowsums", bytes)])
            #expect(rows.sums == nil)
            guard case .badSegment(let path, let offset, let reason) = rows.sumsDamage else {
                Issue.record("\(what): no damage reported")
                continue
            }
            #expect(path == "/d" && offset > 0 && reason.contains("rowsums section: ") && reason.contains(what))
            for i in all.indices { #expect(identical(try rows.record(i, encodedFields: true), try rows.record(i))) }
        }
        #expect(try write(all, fs, "/e", extra: [("rowsums", sound)]).sums != nil)
    }
}

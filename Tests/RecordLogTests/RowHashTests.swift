import CirrusIO
import RecordModel
import Testing

@testable import RecordLog

/// The `rowhash` section: a fetch by id through it finds exactly the row the binary search over
/// the same rows finds, for ids present and absent, across zones and tables of every size
/// (clusters wrapping past the last slot included); a damaged header is an error at open, and a
/// damaged slot can miss an id but never return another id's row. (With them, a damaged row
/// entry: an error, never a read outside the section.)
@Suite struct RowHashTests {
    /// Writes rows `ids` (any order) as a rows segment at `path`, with or without `rowhash`.
    func write(
        _ ids: [RecordID], _ fs: InMemoryFileSystem, _ path: String, hashIndex: Bool,
        extra: [(String, [UInt8])] = []
    ) throws -> RowSection {
        var w = try DataSegmentWriter(fileSystem: fs, path: path)
        var rw = try RowSectionWriter(into: &w)
        for (i, id) in ids.sorted(by: RowKeyOrder.less).enumerated() {
            try Array("payload \(i)".utf8).withUnsafeBytes {
                try rw.add(id, sequence: UInt64(i), payload: $0, into: &w)
            }
        }
        try rw.finish(into: &w, hashIndex: hashIndex)
        for (name, bytes) in extra { try w.addSection(name, bytes) }
        try w.finish()
        return try RowSection(segment: try DataSegment.open(path, fileSystem: fs))
    }

    func randomIDs(_ n: Int, _ rng: inout SplitMix64) -> [RecordID] {
        let zones = ["_defaultZone", "Z", "zone-with-a-long-name", ""]
        var seen = Set<RecordID>()
        while seen.count < n {
            let length = rng.below(24)
            let name = String((0..<length).map { _ in "abcXYZ-_09é".randomElement(using: &rng)! })
            seen.insert(RecordID(recordName: name, zoneID: ZoneID(zoneName: zones[rng.below(zones.count)])))
        }
        return Array(seen)
    }

    @Test func findsWhatTheBinarySearchFinds() throws {
        var rng = SplitMix64(seed: 7)
        let fs = InMemoryFileSystem()
        var wrapped = 0
        for (k, n) in [1, 2, 3, 5, 8, 40, 333, 2_000, 2_001, 5_000].enumerated() {
            let all = randomIDs(n + n / 2 + 1, &rng)
            let (stored, absent) = (Array(all.prefix(n)), Array(all.dropFirst(n)))
            let hashed = try write(stored, fs, "/h\(k)", hashIndex: true)
            let plain = try write(stored, fs, "/p\(k)", hashIndex: false)
            let table = try #require(hashed.hash, "\(n) rows: no rowhash section")
            #expect(plain.hash == nil)
            #expect(table.slots == RowHash.slotCount(rows: n))
            for id in stored {
                let row = try #require(plain.row(of: id), "\(n) rows: \(id) by binary search")
                #expect(hashed.row(of: id) == row, "\(n) rows: \(id)")
            }
            for id in absent { #expect(hashed.row(of: id) == nil && plain.row(of: id) == nil, "\(n) rows: \(id)") }
            let first = table.bytes.loadUnaligned(fromByteOffset: RowHash.headerSize, as: UInt32.self)
            let last = table.bytes.loadUnaligned(
                fromByteOffset: RowHash.headerSize + (table.slots - 1) * RowHash.slotSize, as: UInt32.self)
            if first != 0 && last != 0 { wrapped += 1 }
        }
        #expect(wrapped > 0, "no table had a cluster running past its last slot")
    }

    /// The table is derived from the rows: a damaged one is not used (lookups binary-search and
    /// still find every row) and `hashDamage` names the file, offset and reason for the open report.
    @Test func aDamagedHeaderIsReportedAndLookupsBinarySearch() throws {
        let fs = InMemoryFileSystem()
        let ids = (0..<10).map { RecordID(recordName: "r\($0)") }
        for (what, bytes) in [
            ("bad header", Array("CRHASH99".utf8) + [UInt8](repeating: 0, count: 8 + 16 * 8)),
            ("slots for 10 rows", RowHash.magic + le(5) + [UInt8](repeating: 0, count: 5 * 8)),
            ("slots for 10 rows", RowHash.magic + le(16) + [UInt8](repeating: 0, count: 15 * 8)),
        ] {
            let rows = try write(ids, fs, "/d", hashIndex: false, extra: [("rowhash", bytes)])
            guard case .badSegment(let path, let offset, let reason) = rows.hashDamage else {
                Issue.record("\(what): no damage reported")
                continue
            }
            #expect(path == "/d" && offset > 0 && reason.contains("rowhash section: ") && reason.contains(what))
            for (row, id) in ids.sorted(by: RowKeyOrder.less).enumerated() { #expect(rows.row(of: id) == row) }
        }
        #expect(try write(ids, fs, "/e", hashIndex: true).hashDamage == nil)
    }

    @Test func aDamagedSlotNeverReturnsAnotherRow() throws {
        let fs = InMemoryFileSystem()
        let ids = (0..<10).map { RecordID(recordName: "r\($0)") }
        let asked = ids[3]
        let h = asked.zoneID.zoneName.utf8.withContiguousStorageIfAvailable { z in
            asked.recordName.utf8.withContiguousStorageIfAvailable { n in
                RowHash.hash(UnsafeRawBufferPointer(z), UnsafeRawBufferPointer(n))
            }
        }
        let hash = try #require(h ?? nil)
        // Every slot carries the asked id's fingerprint: one names another row, one a row past
        // the end; the rest are empty.
        let slots = RowHash.slotCount(rows: ids.count)
        var table = [UInt64](repeating: 0, count: slots)
        let home = RowHash.home(hash, slots: slots)
        table[home] = (hash >> 32) << 32 | 6
        table[(home + 1) % slots] = (hash >> 32) << 32 | 99
        let bytes = RowHash.magic + le(UInt64(slots)) + table.flatMap(le)
        let rows = try write(ids, fs, "/s", hashIndex: false, extra: [("rowhash", bytes)])
        #expect(rows.hash != nil)
        #expect(rows.row(of: asked) == nil)
        #expect(rows.row(of: ids[5]) == nil)  // its slot is missing: a miss, not a wrong row
    }

    /// A row entry whose payload lies outside its section (mapped rows are not checksummed on
    /// every read) reads as absent, and decoding it is an error naming the file and the row,
    /// through the section and through the table's layers alike: never a read out of bounds.
    @Test func aRowWhosePayloadLiesOutsideTheSectionIsAnError() throws {
        let fs = InMemoryFileSystem()
        let ids = (0..<4).map { RecordID(recordName: "r\($0)") }
        let good = try write(ids, fs, "/e", hashIndex: true)
        let section = try #require(good.segment.sections.first { $0.name == "rows" })
        var bytes = try #require(fs.contents("/e"))
        // Row 1: its offset far past the end. Row 2: its length past the end.
        let e1 = Int(section.offset) + good.entriesAt + RowSection.entrySize
        for (k, b) in le(1 << 40).enumerated() { bytes[e1 + k] = b }
        let e2 = e1 + RowSection.entrySize + 8
        for (k, b) in le(UInt64(UInt32.max)).prefix(4).enumerated() { bytes[e2 + k] = b }
        try fs.writeAtomically("/e", bytes)
        let rows = try RowSection(segment: try DataSegment.open("/e", fileSystem: fs))
        let layers = BaseRows(layers: [
            BaseLayer(files: TableFiles(rows: 1, indexes: nil), rows: rows, indexes: nil, start: 0, dead: [])
        ])
        for bad in [1, 2] {
            #expect(rows.payload(bad) == nil && layers.payload(bad) == nil, "row \(bad)")
            for read in [{ try rows.record(bad) }, { try layers.record(bad) }] {
                #expect {
                    _ = try read()
                } throws: { error in
                    guard case .badSegment(let path, _, let reason) = error as? LogError else { return false }
                    return path == "/e" && reason == "row \(bad): row payload lies outside the section"
                }
            }
        }
        for fine in [0, 3] {
            #expect(rows.payload(fine).map { Array($0) } == Array("payload \(fine)".utf8))
            #expect(layers.payload(fine).map { Array($0) } == Array("payload \(fine)".utf8))
        }
    }

    func le(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
}

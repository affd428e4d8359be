// RowSalvage: what `repair` can still read of one layer's rows segment, row by row
// (docs/storage-format.md, "Damage and repair").
//
// A row is kept when every byte it uses — its entry, its key, its payload — lies in a block whose
// CRC matches (its payload may instead match its own CRC in `rowsums`: damage elsewhere in its
// block), its payload decodes, and the id in the payload is the id in the key. A segment whose
// footer or directory is damaged (a truncated file) has no CRC table to go by: its `rows` section
// is found by its own header and trailer, and each row is checked by decoding it and comparing ids.
//
// Rows the layer can no longer serve are *dropped* from it (the caller marks them dead) and, when
// their bytes still hold a whole record, *recovered* into a run:
// - a row whose key is damaged but whose entry and payload are sound (its sequence is known);
// - rows whose entries are damaged: their payloads lie back to back between the neighbouring
//   sound rows' payloads, so they are decoded one after the other from the end of the previous
//   sound payload, each checked to sort between the neighbouring ids and to lie in sound blocks
//   (their sequences are lost: the caller gives them the checkpoint's);
// - every row of a section whose trailer is lost, the same way from the section's start.
// Every other row is a loss, named by its key when that is readable, else counted and bounded by
// the neighbouring ids.

import CirrusIO
import RecordModel

/// A record salvaged out of a damaged layer, for a run.
struct RecoveredRow {
    var id: RecordID
    /// The sequence that wrote it, nil when its entry was lost.
    var sequence: UInt64?
    var payload: [UInt8]
}

/// The salvage of one rows segment.
struct RowSalvage {
    /// The layer's rows as a section (nil when the section's structure is lost).
    var rows: RowSection?
    /// Rows of `rows` (layer-relative) the layer must not serve: damaged, or recovered.
    var dropped: [Int] = []
    /// Whole records read out of damaged rows.
    var recovered: [RecoveredRow] = []
    /// The layer's `dead` section (older layers' rows), nil when it is damaged or unreadable.
    var dead: [UInt32]? = []
    /// What is lost, and where.
    var losses: [RepairLoss] = []
    /// Why the segment did not open normally (the salvage read it without its CRC table).
    var openDamage: LogError?
    /// Whether the file opened normally and every block of every section checks: a layer that is
    /// not sound is written out again even when no row of it was lost (its damage may lie in a
    /// section the reads do not need, or past the rows: the file itself would not verify).
    var sound = false
    /// Whether the rows section's end was not found (the file is cut inside it): its payloads
    /// are read from its start.
    var trailerLost = false
    /// The run of rows the last loss covers and its reason (consecutive losses merge).
    var lastDrop: (first: Int, last: Int, why: String)?

    /// Reads the rows segment at `path` of a layer starting at table row `start`.
    init(path: String, fileSystem fs: any FileSystem, start: Int) {
        let seg: DataSegment
        switch Result(catching: { () throws(LogError) in try DataSegment.open(path, fileSystem: fs) }) {
        case .success(let s): seg = s
        case .failure(let e):
            openDamage = e
            guard let file = try? fs.map(path) else {
                losses.append(RepairLoss(file: path, reason: "\(e); the file cannot be read", what: .records))
                dead = nil
                return
            }
            let located = Self.locateSections(file.bytes)
            seg = DataSegment(salvaging: file, sections: located.sections)
            trailerLost = !located.trailerFound
        }
        guard let section = seg.sections.first(where: { $0.name == "rows" }) else {
            losses.append(
                RepairLoss(
                    file: path, offset: 0, length: seg.file.bytes.count,
                    reason: "\(openDamage.map { "\($0); " } ?? "")no rows section could be found", what: .records))
            dead = nil
            return
        }
        let status = seg.blockStatus(section)
        sound = openDamage == nil && seg.verifyBlocks().isEmpty
        readDead(seg, start: start, fileCut: openDamage != nil)
        var check = BlockCheck(status: status, sectionLength: section.length)
        if !trailerLost, let r = try? RowSection(segment: seg),
            check.sound(r.entriesAt..<(r.entriesAt + r.count * 32 + 16)) || status == nil
                || Self.trailerFits(r, section.length)
        {
            rows = r
            classify(r, path: path, sectionOffset: section.offset, check: &check)
        } else {
            // The trailer is gone: every payload is read from the section's start.
            let bytes = UnsafeRawBufferPointer(
                rebasing: seg.file.bytes[section.offset..<(section.offset + section.length)])
            var found = 0
            scan(
                bytes, from: RowSection.headerSize, to: bytes.count, after: nil, before: nil, check: check,
                path: path, sectionOffset: section.offset, found: &found)
            let end = section.offset + section.length
            losses.append(
                trailerLost
                    ? RepairLoss(
                        file: path, offset: end, length: 0,
                        reason: "the file ends inside its rows section; \(found) records were read back from "
                            + "their payloads, the rows past the last of them are lost",
                        records: nil, what: .records)
                    : RepairLoss(
                        file: path, offset: end - RowSection.trailerSize, length: RowSection.trailerSize,
                        reason:
                            "the rows section's trailer is damaged; \(found) records were read back from their payloads",
                        records: nil, what: .records))
        }
    }

    /// Whether a section's trailer agrees with its length exactly (entries end where it starts).
    static func trailerFits(_ r: RowSection, _ length: Int) -> Bool {
        r.entriesAt + r.count * RowSection.entrySize + RowSection.trailerSize == length
    }

    /// Sorts every row into kept, recovered or lost.
    mutating func classify(_ r: RowSection, path: String, sectionOffset: Int, check: inout BlockCheck) {
        var i = 0
        while i < r.count {
            let e = r.entriesAt + i * RowSection.entrySize
            guard check.sound(e..<(e + RowSection.entrySize)) else {
                // A run of rows whose entries are damaged.
                var j = i
                while j + 1 < r.count, !check.sound(entryRange(r, j + 1)) { j += 1 }
                salvageEntries(r, i...j, path: path, sectionOffset: sectionOffset, check: check)
                i = j + 1
                continue
            }
            classifyRow(r, i, path: path, sectionOffset: sectionOffset, check: check)
            i += 1
        }
    }

    func entryRange(_ r: RowSection, _ i: Int) -> Range<Int> {
        let e = r.entriesAt + i * RowSection.entrySize
        return e..<(e + RowSection.entrySize)
    }

    /// One row whose entry is sound.
    mutating func classifyRow(_ r: RowSection, _ i: Int, path: String, sectionOffset: Int, check: BlockCheck) {
        let rb = RowBytes(r)
        let key = rb.keyBytes(i).flatMap { k in
            check.sound(Self.range(r, k.zone, k.name)) ? (zone: k.zone, name: k.name) : nil
        }
        let keyName = key.map { Self.name(zone: $0.zone, name: $0.name) }
        let e = r.entriesAt + i * RowSection.entrySize
        guard let p = rb.payload(i), check.sound(Self.range(r, p)) || Self.provenIntact(r, i, p) else {
            // Where the damage is: the first bad block the payload touches (or the entry, when
            // the payload lies outside the section).
            let bad = rb.payload(i).flatMap { check.firstBadBlock(Self.range(r, $0)) }
            drop(
                i, path: path, at: bad.map { sectionOffset + $0 } ?? sectionOffset + e,
                length: bad == nil ? RowSection.entrySize : DataSegmentFormat.blockSize,
                "payloads lie in a damaged block" + (r.sums == nil ? "" : " and fail their CRCs"), names: keyName)
            return
        }
        let rec: Record
        do {
            rec = try RecordCodec.decode(p)
        } catch {
            // Rows are grouped by reason: the codec's message would split them.
            drop(i, path: path, at: sectionOffset + e, "payloads do not decode", names: keyName)
            return
        }
        guard let key else {
            // The key is damaged but the record says who it is: recovered with its sequence.
            dropped.append(i)
            recovered.append(RecoveredRow(id: rec.recordID, sequence: r.sequence(i), payload: Array(p)))
            return
        }
        guard Self.matches(rec.recordID, zone: key.zone, name: key.name) else {
            drop(i, path: path, at: sectionOffset + e, "payloads name other ids than their keys", names: keyName)
            return
        }
    }

    /// Whether row `i`'s payload is exactly what its writer wrote, by the row's own CRC in the
    /// segment's `rowsums` section, though a block it touches fails its CRC: the damage is
    /// elsewhere in the block (another row's bytes), so this row is kept. A stored sum that the
    /// damage changed matches nothing, and the row is lost as before.
    static func provenIntact(_ r: RowSection, _ i: Int, _ p: UnsafeRawBufferPointer) -> Bool {
        guard let sums = r.sums, i < sums.rows else { return false }
        return CRC32C.checksum(p) == sums.sum(i)
    }

    /// Row `i` is lost (`why` says of which rows, in the plural); consecutive rows lost for the
    /// same reason make one loss.
    mutating func drop(
        _ i: Int, path: String, at: Int, length: Int = RowSection.entrySize, _ why: String, names: String?
    ) {
        dropped.append(i)
        if let (first, last, reason) = lastDrop, last == i - 1, reason == why, var loss = losses.last,
            at >= loss.offset, at <= loss.offset + loss.length
        {
            loss.length = max(loss.length, at + length - loss.offset)
            loss.records = (loss.records ?? 0) + 1
            loss.reason = "rows \(first)–\(i): " + why
            if let names { loss.names.append(names) }
            losses[losses.count - 1] = loss
            lastDrop = (first, i, why)
            return
        }
        lastDrop = (i, i, why)
        losses.append(
            RepairLoss(
                file: path, offset: at, length: length, reason: "row \(i): " + why, records: 1,
                names: names.map { [$0] } ?? [], what: .records))
    }

    /// Rows `rows` have damaged entries: their payloads are decoded back to back from the end of
    /// the previous sound row's payload (or the section's first payload).
    mutating func salvageEntries(
        _ r: RowSection, _ rows: ClosedRange<Int>, path: String, sectionOffset: Int, check: BlockCheck
    ) {
        let rb = RowBytes(r)
        dropped += Array(rows)
        let before = rows.lowerBound > 0 ? rb.payload(rows.lowerBound - 1) : nil
        let from: Int? =
            rows.lowerBound == 0 ? RowSection.headerSize : before.map { Self.offset(r, $0) + $0.count }
        let after = rows.upperBound + 1 < r.count ? rb.payload(rows.upperBound + 1) : nil
        let to = after.map { Self.offset(r, $0) } ?? keysStart(r)
        let lowID = rows.lowerBound > 0 ? r.recordID(rows.lowerBound - 1, owner: "") : nil
        let highID = rows.upperBound + 1 < r.count ? r.recordID(rows.upperBound + 1, owner: "") : nil
        var found = 0
        if let from, let to, from <= to {
            scan(
                r.bytes, from: from, to: to, after: lowID, before: highID, check: check, path: path,
                sectionOffset: sectionOffset, found: &found)
        }
        let expected = rows.count
        if found < expected {
            losses.append(
                RepairLoss(
                    file: path, offset: sectionOffset + r.entriesAt + rows.lowerBound * RowSection.entrySize,
                    length: expected * RowSection.entrySize,
                    reason: "the entries of rows \(rows.lowerBound)–\(rows.upperBound) are damaged; "
                        + "\(found) of their \(expected) records were read back from their payloads",
                    records: expected - found, names: [],
                    after: lowID.map { Self.name($0) }, before: highID.map { Self.name($0) }, what: .records))
        }
    }

    /// Where the keys start: the first row's key offset when its entry is sound.
    func keysStart(_ r: RowSection) -> Int? {
        guard r.count > 0, let k = RowBytes(r).keyBytes(0), let base = r.bytes.baseAddress,
            let z = k.zone.baseAddress
        else { return nil }
        return base.distance(to: z)
    }

    /// Decodes records back to back in `bytes[from..<to]`, each in sound blocks and sorting
    /// strictly between `after` and `before` and after the previous one; stops at the first that
    /// is not.
    mutating func scan(
        _ bytes: UnsafeRawBufferPointer, from: Int, to: Int, after: RecordID?, before: RecordID?, check: BlockCheck,
        path: String, sectionOffset: Int, found: inout Int
    ) {
        var pos = from
        var last = after
        while pos < to {
            var reader = ByteReader(UnsafeRawBufferPointer(rebasing: bytes[pos..<to]))
            let rec: Record
            do {
                rec = try RecordCodec.decodeRecord(&reader)
            } catch {
                break  // the scan ends at the first bytes that are not a record
            }
            guard reader.offset > 0,
                check.sound(pos..<(pos + reader.offset)),
                last.map({ RowKeyOrder.less(Self.bare($0), Self.bare(rec.recordID)) }) ?? true,
                before.map({ RowKeyOrder.less(Self.bare(rec.recordID), Self.bare($0)) }) ?? true
            else { break }
            recovered.append(
                RecoveredRow(
                    id: rec.recordID, sequence: nil,
                    payload: Array(UnsafeRawBufferPointer(rebasing: bytes[pos..<(pos + reader.offset)]))))
            found += 1
            last = rec.recordID
            pos += reader.offset
        }
    }

    /// The layer's `dead` section: nil (and a loss) when it is damaged, or when the file lost its
    /// directory (`fileCut`) and no section was found though older layers exist: a layer without
    /// dead rows writes none, so whether one was cut off cannot be told.
    mutating func readDead(_ seg: DataSegment, start: Int, fileCut: Bool) {
        guard let s = seg.sections.first(where: { $0.name == "dead" }) else {
            dead = []
            if fileCut && start > 0 {
                dead = nil
                losses.append(
                    RepairLoss(
                        file: seg.file.path, offset: 0, length: seg.file.bytes.count,
                        reason: "the file's directory is lost and no dead section was found: if the layer had one, "
                            + "records deleted or replaced before it was written may come back in an older version",
                        records: 0, what: .deletions))
            }
            return
        }
        if let status = seg.blockStatus(s), status.contains(false) {
            dead = nil
        } else {
            dead = try? BaseLayer.readDead(seg, start: start)
        }
        if dead == nil {
            losses.append(
                RepairLoss(
                    file: seg.file.path, offset: s.offset, length: s.length,
                    reason: "the layer's dead section is damaged: records deleted or replaced before it was written "
                        + "may come back in an older version",
                    records: 0, what: .deletions))
        }
    }

    // MARK: helpers

    static func offset(_ r: RowSection, _ p: UnsafeRawBufferPointer) -> Int {
        guard let base = r.bytes.baseAddress, let at = p.baseAddress else { return 0 }
        return base.distance(to: at)
    }

    static func range(_ r: RowSection, _ p: UnsafeRawBufferPointer) -> Range<Int> {
        let o = offset(r, p)
        return o..<(o + p.count)
    }

    static func range(_ r: RowSection, _ zone: UnsafeRawBufferPointer, _ name: UnsafeRawBufferPointer) -> Range<Int> {
        let o = offset(r, zone)
        return o..<(o + zone.count + name.count)
    }

    static func matches(_ id: RecordID, zone: UnsafeRawBufferPointer, name: UnsafeRawBufferPointer) -> Bool {
        var z = id.zoneID.zoneName
        var n = id.recordName
        return z.withUTF8 { RowKeyOrder.compare(UnsafeRawBufferPointer($0), zone) == 0 }
            && n.withUTF8 { RowKeyOrder.compare(UnsafeRawBufferPointer($0), name) == 0 }
    }

    /// The id without its owner (rows sort by zone name and record name).
    static func bare(_ id: RecordID) -> RecordID {
        RecordID(recordName: id.recordName, zoneID: ZoneID(zoneName: id.zoneID.zoneName, ownerName: ""))
    }

    /// `name`, or `zone:name` outside the default zone.
    static func name(_ id: RecordID) -> String {
        id.zoneID.zoneName == ZoneID.defaultZoneName ? id.recordName : id.zoneID.zoneName + ":" + id.recordName
    }

    static func name(zone: UnsafeRawBufferPointer, name: UnsafeRawBufferPointer) -> String {
        let z = String(decoding: zone, as: UTF8.self)
        let n = String(decoding: name, as: UTF8.self)
        return z == ZoneID.defaultZoneName ? n : z + ":" + n
    }

    /// The sections of a segment whose footer or directory is lost, found by their own headers:
    /// `rows` right after the file header (its end found where a trailer fits), then `dead`. When
    /// no trailer fits (the file is cut inside the rows section), `rows` runs to the end of the
    /// file and `trailerFound` is false: its payloads are then read from its start.
    static func locateSections(_ b: UnsafeRawBufferPointer) -> (sections: [DataSegment.Section], trailerFound: Bool) {
        let h = DataSegmentFormat.headerSize
        guard b.count >= h + RowSection.headerSize, Array(b[h..<(h + 8)]) == RowSection.magic else { return ([], true) }
        var out: [DataSegment.Section] = []
        // The trailer is the last 16 bytes of the section: u64 entries offset, u32 count, u32 0,
        // with the entries ending where the trailer starts. Try every 8-aligned end, last first.
        var t = ((b.count - h - RowSection.trailerSize) / 8) * 8
        while t >= RowSection.headerSize && b.count >= h + RowSection.headerSize + RowSection.trailerSize {
            let at = Int(
                truncatingIfNeeded: UInt64(littleEndian: b.loadUnaligned(fromByteOffset: h + t, as: UInt64.self)))
            let n = Int(UInt32(littleEndian: b.loadUnaligned(fromByteOffset: h + t + 8, as: UInt32.self)))
            let zero = UInt32(littleEndian: b.loadUnaligned(fromByteOffset: h + t + 12, as: UInt32.self))
            if zero == 0, at >= RowSection.headerSize, at <= t, at + n * RowSection.entrySize == t,
                n == 0
                    || UInt64(littleEndian: b.loadUnaligned(fromByteOffset: h + at, as: UInt64.self))
                        == UInt64(RowSection.headerSize)
            {
                let length = t + RowSection.trailerSize
                out.append(DataSegment.Section(name: "rows", offset: h, length: length, firstBlock: 0, blocks: 0))
                break
            }
            t -= 8
        }
        guard !out.isEmpty else {
            return (
                [DataSegment.Section(name: "rows", offset: h, length: b.count - h, firstBlock: 0, blocks: 0)], false
            )
        }
        // A `dead` section: its magic at an 8-aligned offset after the rows.
        var o = (out[0].offset + out[0].length + 7) / 8 * 8
        while o + 16 <= b.count {
            if Array(b[o..<(o + 8)]) == BaseLayer.deadMagic {
                let n = Int(
                    truncatingIfNeeded: UInt64(littleEndian: b.loadUnaligned(fromByteOffset: o + 8, as: UInt64.self)))
                if n >= 0, n <= (b.count - o - 16) / 4 {
                    out.append(
                        DataSegment.Section(name: "dead", offset: o, length: 16 + 4 * n, firstBlock: 0, blocks: 0))
                }
                break
            }
            o += 8
        }
        return (out, true)
    }
}

/// Which byte ranges of a section lie wholly in blocks whose CRC matches (everything, when the
/// segment has no CRC table: the caller then checks by decoding).
struct BlockCheck {
    let status: [Bool]?
    let sectionLength: Int

    /// The section offset of the first damaged block `r` touches, nil when none is.
    func firstBadBlock(_ r: Range<Int>) -> Int? {
        guard let status, !r.isEmpty, r.lowerBound >= 0 else { return nil }
        let first = r.lowerBound / DataSegmentFormat.blockSize
        let last = min((r.upperBound - 1) / DataSegmentFormat.blockSize, status.count - 1)
        guard first <= last else { return nil }
        return (first...last).first { !status[$0] }.map { $0 * DataSegmentFormat.blockSize }
    }

    func sound(_ r: Range<Int>) -> Bool {
        guard r.lowerBound >= 0, r.upperBound <= sectionLength else { return false }
        guard let status, !r.isEmpty else { return true }
        let first = r.lowerBound / DataSegmentFormat.blockSize
        let last = (r.upperBound - 1) / DataSegmentFormat.blockSize
        guard last < status.count else { return false }
        return !status[first...last].contains(false)
    }
}

// RowSection: the `rows` section of a table's data segment — every record of one record type in
// one database at a checkpoint, sorted by record id, each with the sequence that wrote it.
// Format (docs/storage-format.md, "rows"):
//
//   header   = "CRROWS02" u64 0                                                   never change
//   payloads = RecordCodec bytes per row (the same as a log frame's payload), in row order
//   keys     = zone name bytes, record name bytes, per row
//   (zero padding to 8)
//   entries  = u64 payload-offset u32 payload-length u16 zone-len u16 name-len
//              u64 sequence u64 key-offset                       (32 bytes, in row order)
//   trailer  = u64 entries-offset u32 row-count u32 0                              (16 bytes)
//
// Payloads come first so a writer streams them to the file as rows arrive and keeps only the
// keys and entries (~50 bytes a row) in memory. Offsets are relative to the section. Rows are
// ordered by (zone name, record name) as bytes: row i is RowID i of the table's base.
// Construction bounds-checks header, trailer and entry table; each accessor bounds-checks what
// it follows, so a damaged section yields nil or an error, never a read outside the file.

import CPrefetch
import CirrusIO
import RecordModel

#if canImport(Glibc)
    import Glibc
#else
    import Darwin
#endif

/// Byte order of record ids inside a table (zone name, then record name, as UTF-8 bytes).
public enum RowKeyOrder {
    /// Compares two ids the way `rows` sections are sorted.
    public static func less(_ a: RecordID, _ b: RecordID) -> Bool { compare(a, b) < 0 }

    /// Compares two ids the way `rows` sections are sorted: <0, 0 (same zone and record names),
    /// >0.
    public static func compare(_ a: RecordID, _ b: RecordID) -> Int {
        let z = compareBytes(a.zoneID.zoneName, b.zoneID.zoneName)
        return z != 0 ? z : compareBytes(a.recordName, b.recordName)
    }

    static func compareBytes(_ a: String, _ b: String) -> Int {
        var a = a
        var b = b
        return a.withUTF8 { x in b.withUTF8 { y in compare(UnsafeRawBufferPointer(x), UnsafeRawBufferPointer(y)) } }
    }

    /// Compares two byte strings: <0, 0, >0 (shorter first on a common prefix).
    ///
    /// Eight bytes at a time as big-endian words (their order is the bytes' order), the rest
    /// byte by byte: ids are short, and a `memcmp` call cost more than the comparison in a
    /// binary search over a table's keys.
    @inline(__always)
    public static func compare(_ x: UnsafeRawBufferPointer, _ y: UnsafeRawBufferPointer) -> Int {
        let n = min(x.count, y.count)
        if n > 0, let a = x.baseAddress, let b = y.baseAddress {
            var i = 0
            while i + 8 <= n {
                let p = UInt64(bigEndian: a.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                let q = UInt64(bigEndian: b.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                if p != q { return p < q ? -1 : 1 }
                i += 8
            }
            while i < n {
                let p = a.load(fromByteOffset: i, as: UInt8.self)
                let q = b.load(fromByteOffset: i, as: UInt8.self)
                if p != q { return p < q ? -1 : 1 }
                i += 1
            }
        }
        return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
    }
}

/// Streams a `rows` section into a data segment writer from rows given in key order.
public struct RowSectionWriter {
    var entries = ByteWriter()
    var keys = ByteWriter()
    var payloadBytes = 0
    var sums = RowSums.Writer()
    var names = RowNames.Writer()
    /// Rows written so far.
    public private(set) var count = 0

    /// Begins the section `rows` in `w`.
    public init(into w: inout DataSegmentWriter) throws {
        try w.beginSection("rows")
        var h = ByteWriter(capacity: 16)
        h.bytes += RowSection.magic
        h.u64(0)
        try w.append(h.bytes)
    }

    /// Adds the next row (ids must come in `RowKeyOrder`); `sum`: its `rowsums` entry when the
    /// caller has it (else it is worked out here).
    mutating func add(
        _ id: RecordID, sequence: UInt64, payload: UnsafeRawBufferPointer, sum: RowSums.Entry? = nil,
        into w: inout DataSegmentWriter
    ) throws {
        let zone = Array(id.zoneID.zoneName.utf8)
        let name = Array(id.recordName.utf8)
        entries.u64(UInt64(RowSection.headerSize + payloadBytes))
        entries.u32(UInt32(payload.count))
        entries.u16(UInt16(zone.count))
        entries.u16(UInt16(name.count))
        entries.u64(sequence)
        entries.u64(UInt64(keys.bytes.count))  // relative to the keys block; fixed up in finish
        keys.bytes += zone
        keys.bytes += name
        try w.append(Array(payload))
        sums.add(sum ?? RowSums.Entry(payload))
        names.add(count, payload)
        payloadBytes += payload.count
        count += 1
    }

    /// Writes keys, entries and trailer and ends the section; then the `rowsums` section
    /// (`RowSums`), with `hashIndex` the `rowhash` section over the rows' ids (`RowHash`), and
    /// the `rownames` section (`RowNames`). A bulk load's runs, read only in order, go without
    /// the hash. (`sums: false` writes segments as they were before `rowsums` and `rownames`,
    /// for tests of readers of those.)
    public mutating func finish(into w: inout DataSegmentWriter, hashIndex: Bool = true, sums: Bool = true) throws {
        let keysAt = RowSection.headerSize + payloadBytes
        try w.append(keys.bytes)
        let pad = (8 - (keysAt + keys.bytes.count) % 8) % 8
        try w.append([UInt8](repeating: 0, count: pad))
        let entriesAt = keysAt + keys.bytes.count + pad
        var e = ByteWriter(capacity: entries.bytes.count + 16)
        entries.bytes.withUnsafeBytes { b in
            for i in 0..<count {
                let o = i * RowSection.entrySize
                e.bytes.append(contentsOf: b[o..<(o + 24)])
                e.u64(b.loadUnaligned(fromByteOffset: o + 24, as: UInt64.self) + UInt64(keysAt))
            }
        }
        e.u64(UInt64(entriesAt))
        e.u32(UInt32(count))
        e.u32(0)
        try w.append(e.bytes)
        w.endSection()
        if sums { try w.addSection("rowsums", self.sums.encoded()) }
        if hashIndex, count > 0 { try w.addSection("rowhash", hashTable()) }
        if sums, let n = names.encoded() { try w.addSection("rownames", n) }
    }

    /// The `rowhash` section over the rows' ids.
    func hashTable() -> [UInt8] {
        entries.bytes.withUnsafeBytes { e in
            keys.bytes.withUnsafeBytes { k in
                RowHash.encode(count: count) { i in
                    let o = i * RowSection.entrySize
                    let z = Int(UInt16(littleEndian: e.loadUnaligned(fromByteOffset: o + 12, as: UInt16.self)))
                    let n = Int(UInt16(littleEndian: e.loadUnaligned(fromByteOffset: o + 14, as: UInt16.self)))
                    let at = Int(UInt64(littleEndian: e.loadUnaligned(fromByteOffset: o + 24, as: UInt64.self)))
                    return (
                        UnsafeRawBufferPointer(rebasing: k[at..<(at + z)]),
                        UnsafeRawBufferPointer(rebasing: k[(at + z)..<(at + z + n)])
                    )
                }
            }
        }
    }
}

/// A read-only view of a `rows` section inside a mapped data segment.
public struct RowSection: @unchecked Sendable {
    // @unchecked: `bytes` points into `segment.file`, which this value keeps alive and which is
    // immutable, so sharing the view between threads is sound.
    static let magic: [UInt8] = Array("CRROWS02".utf8)  //                         never change
    static let headerSize = 16
    static let trailerSize = 16
    static let entrySize = 32

    /// The segment the rows live in (kept alive by this view).
    public let segment: DataSegment
    let bytes: UnsafeRawBufferPointer
    /// Where the entry table starts.
    let entriesAt: Int
    /// Number of rows.
    public let count: Int
    /// The field names of a sample of the rows, which the rows' decoding reuses (nil: no rows,
    /// or none of the sample decodes — every row then reads its names as usual).
    private(set) var names: RecordCodec.NameTable?
    /// The segment's `rowhash` section, nil when it has none (`row(of:)` then binary-searches).
    let hash: RowHash.Table?
    /// The segment's `rowsums` section, nil when it has none (returned rows are then walked).
    let sums: RowSums.Table?
    /// The rows whose CRC this process has checked (`sums.seen` points into it).
    private let seen: RowSums.Seen?
    /// The zone name of every row when all rows are in one zone, else nil: worked out at the
    /// first call (it reads the first and the last row's keys — page faults an open that only
    /// fetches by id need not take) and kept for every copy of this view (a query asks, and
    /// decoding two keys each time would cost more than the lock).
    public var singleZoneName: String? { zone.contents }
    private var zone = DeferredCopyOnWrite<String?>(nil)

    /// The `rows` section of `segment`; throws naming the file and offset when it is damaged.
    public init(segment: DataSegment) throws(LogError) {
        self.segment = segment
        guard let b = segment.section("rows"), let s = segment.sections.first(where: { $0.name == "rows" }) else {
            throw .badSegment(path: segment.file.path, offset: 0, reason: "no rows section")
        }
        func bad(_ r: String) -> LogError {
            .badSegment(path: segment.file.path, offset: s.offset, reason: "rows section: " + r)
        }
        guard b.count >= Self.headerSize + Self.trailerSize, Array(b[0..<8]) == Self.magic else {
            throw bad("bad header")
        }
        let t = b.count - Self.trailerSize
        let at = Int(truncatingIfNeeded: UInt64(littleEndian: b.loadUnaligned(fromByteOffset: t, as: UInt64.self)))
        let n = Int(UInt32(littleEndian: b.loadUnaligned(fromByteOffset: t + 8, as: UInt32.self)))
        guard at >= Self.headerSize, at <= t, n <= (t - at) / Self.entrySize else {
            throw bad("trailer names \(n) rows at \(at), outside the \(b.count)-byte section")
        }
        bytes = b
        entriesAt = at
        count = n
        names = nil
        // The hash table is derived from the rows: one that does not fit them is not used (lookups
        // binary-search), and the open reports it (`hashDamage`) rather than fail.
        hash = try? Self.hashTable(segment, rows: n)
        // Likewise the sums: without them a returned row is walked, as in segments written before.
        var sums = try? Self.sumsTable(segment, rows: n)
        seen = sums == nil ? nil : RowSums.Seen(rows: n)
        sums?.seen = seen?.words
        self.sums = sums
        let keys = RowBytes(self)
        zone = DeferredCopyOnWrite(placeholder: nil) { [segment] in
            withExtendedLifetime(segment) { Self.singleZoneName(keys) }
        }
        // The writer's sample of the rows' names (`rownames`); without it (an older segment, or
        // one that does not parse: `namesDamage`), nine rows spread over the section — a page
        // fault each.
        if let (type, all) = try? Self.namesSection(segment) {
            names = RecordCodec.NameTable(names: all, recordType: type)
            return
        }
        let sample = Set([0, n - 1] + (1..<8).map { $0 * n / 8 }).filter { $0 >= 0 && $0 < n }.sorted()
        var sampled = RowNames.Writer()
        for i in sample { if let p = payload(i) { sampled.add(p) } }
        names = sampled.table
    }

    /// The type and names of the segment's `rownames` section; nil when it has none, throws
    /// naming the file and offset when it does not parse.
    static func namesSection(_ segment: DataSegment) throws(LogError) -> (String, Set<String>)? {
        guard let b = segment.section("rownames"), let bs = segment.sections.first(where: { $0.name == "rownames" })
        else { return nil }
        return try RowNames.read(b) { r in
            .badSegment(path: segment.file.path, offset: bs.offset, reason: "rownames section: " + r)
        }
    }

    /// Why the segment's `rownames` section is not used — it does not parse — or nil when it is
    /// sound or absent. Its names are a hint: the layer's name table is sampled from its rows.
    public var namesDamage: LogError? {
        do {
            _ = try Self.namesSection(segment)
            return nil
        } catch {
            return error
        }
    }

    /// The segment's `rowhash` section for a `rows` section of `rows` rows; nil when it has none,
    /// throws naming the file and offset when it does not fit them.
    static func hashTable(_ segment: DataSegment, rows n: Int) throws(LogError) -> RowHash.Table? {
        guard let h = segment.section("rowhash"), let hs = segment.sections.first(where: { $0.name == "rowhash" })
        else { return nil }
        return try RowHash.Table(h, rows: n) { r in
            .badSegment(path: segment.file.path, offset: hs.offset, reason: "rowhash section: " + r)
        }
    }

    /// The segment's `rowsums` section for a `rows` section of `rows` rows; nil when it has none,
    /// throws naming the file and offset when it does not fit them.
    static func sumsTable(_ segment: DataSegment, rows n: Int) throws(LogError) -> RowSums.Table? {
        guard let b = segment.section("rowsums"), let bs = segment.sections.first(where: { $0.name == "rowsums" })
        else { return nil }
        return try RowSums.Table(b, rows: n) { r in
            .badSegment(path: segment.file.path, offset: bs.offset, reason: "rowsums section: " + r)
        }
    }

    /// Why the segment's `rowsums` section is not used — it does not fit the rows — or nil when
    /// it is sound or absent. Rows are then checked by walking them, as without the section.
    public var sumsDamage: LogError? {
        do {
            _ = try Self.sumsTable(segment, rows: count)
            return nil
        } catch {
            return error
        }
    }

    /// Why the segment's `rowhash` section is not used — it does not fit the rows — or nil when it
    /// is sound or absent. The table is derived data: lookups binary-search without it.
    public var hashDamage: LogError? {
        do {
            _ = try Self.hashTable(segment, rows: count)
            return nil
        } catch {
            return error
        }
    }

    @inline(__always) func u64(_ o: Int) -> Int {
        Int(truncatingIfNeeded: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: o, as: UInt64.self)))
    }
    @inline(__always) func u32(_ o: Int) -> Int {
        Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: o, as: UInt32.self)))
    }
    @inline(__always) func u16(_ o: Int) -> Int {
        Int(UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: o, as: UInt16.self)))
    }
    @inline(__always) func entry(_ i: Int) -> Int { entriesAt + i * Self.entrySize }

    /// The zone-name and record-name bytes of row `i` (in the mapped segment: valid while the
    /// section is), nil when damaged.
    public func keyBytes(_ i: Int) -> (zone: UnsafeRawBufferPointer, name: UnsafeRawBufferPointer)? {
        RowBytes(self).keyBytes(i)
    }

    /// The encoded record of row `i` (RecordCodec bytes), nil when damaged.
    public func payload(_ i: Int) -> UnsafeRawBufferPointer? { RowBytes(self).payload(i) }

    /// Takes the pages that only rows `range` use — their payloads and their entries — out of
    /// the resident set (`MappedFile.releaseResidentPages(_:)`): what a pass over the rows in
    /// order has read, so that a pass over a section larger than memory holds little of it. A
    /// hint: the bytes stay valid (a later read faults them back in).
    public func releaseResidentPages(rows range: Range<Int>) {
        let r = range.clamped(to: 0..<count)
        guard !r.isEmpty, let first = payload(r.lowerBound), let last = payload(r.upperBound - 1),
            let f = first.baseAddress, let l = last.baseAddress, let file = segment.file.bytes.baseAddress,
            let section = bytes.baseAddress, f <= l
        else { return }
        let at = section - file
        segment.file.releaseResidentPages((f - file)..<(l - file + last.count))
        segment.file.releaseResidentPages((at + entry(r.lowerBound))..<(at + entry(r.upperBound)))
    }

    /// The sequence number that wrote row `i`.
    public func sequence(_ i: Int) -> UInt64 {
        guard i >= 0, i < count else { return 0 }
        return UInt64(truncatingIfNeeded: u64(entry(i) + 16))
    }

    /// The record of row `i`, decoded (storage form: zone owner as stored); `encodedFields` as
    /// in `BaseRows.record(_:encodedFields:)`.
    public func record(_ i: Int, encodedFields: Bool = false) throws(LogError) -> Record {
        try RowBytes(self).record(i, names: names, encodedFields: encodedFields, owner: segment.file) {
            damage(i, $0)
        }
    }

    /// The record id of row `i` with the given zone owner.
    public func recordID(_ i: Int, owner: String) -> RecordID? {
        guard i >= 0, i < count, let (z, n) = keyBytes(i) else { return nil }
        return RecordID(
            recordName: String(decoding: n, as: UTF8.self),
            zoneID: ZoneID(zoneName: String(decoding: z, as: UTF8.self), ownerName: owner))
    }

    func damage(_ i: Int, _ r: String) -> LogError {
        let start = segment.sections.first(where: { $0.name == "rows" })?.offset ?? 0
        return .badSegment(path: segment.file.path, offset: start + entry(i), reason: "row \(i): " + r)
    }

    /// Compares row `i`'s key with (zone, name): <0, 0, >0.
    func compare(_ i: Int, _ zone: UnsafeRawBufferPointer, _ name: UnsafeRawBufferPointer) -> Int {
        RowBytes(self).compare(i, zone, name)
    }

    /// Compares row `i`'s id with `id` in `RecordID` order — record name, then zone name (the
    /// owner is the table's) — without making strings: <0, 0, >0. A damaged key sorts first.
    public func compareID(_ i: Int, _ id: RecordID) -> Int {
        guard i >= 0, i < count, let (z, n) = keyBytes(i) else { return -1 }
        var name = id.recordName
        let c = name.withUTF8 { RowKeyOrder.compare(n, UnsafeRawBufferPointer($0)) }
        if c != 0 { return c }
        var zone = id.zoneID.zoneName
        return zone.withUTF8 { RowKeyOrder.compare(z, UnsafeRawBufferPointer($0)) }
    }

    /// The zone name of every row when all rows are in one zone, else nil. Rows sort by zone
    /// first, so the first and last rows tell: O(1), read when the section is opened.
    static func singleZoneName(_ rows: RowBytes) -> String? {
        guard rows.count > 0, let (first, _) = rows.keyBytes(0), let (last, _) = rows.keyBytes(rows.count - 1),
            RowKeyOrder.compare(first, last) == 0
        else { return nil }
        return String(decoding: first, as: UTF8.self)
    }

    /// Starts loading row `i`'s entry (`key: false`) or its key bytes (`key: true`, which reads
    /// the entry: issue it a few rows after the entry's). A hint: nothing outside the section is
    /// read, and a row out of range loads nothing.
    public func prefetch(_ i: Int, key: Bool) {
        let b = RowBytes(self)
        guard key else { return b.prefetch(i, payload: false) }
        b.prefetchKey(i)
    }

    /// The row of a record id (its zone name and record name), nil when absent: O(1) expected
    /// through the `rowhash` section, O(log n) by binary search without one.
    public func row(of id: RecordID) -> Int? { RowBytes(self).row(of: id) }

    /// The first row whose key is not less than (zone, name).
    func lowerBound(_ zone: UnsafeRawBufferPointer, _ name: UnsafeRawBufferPointer) -> Int {
        RowBytes(self).lowerBound(zone, name)
    }

    /// The rows of one zone (a contiguous range, since zone names sort first).
    public func rows(inZone zoneName: String) -> Range<Int> {
        var zone = zoneName
        return zone.withUTF8 { z in
            let zb = UnsafeRawBufferPointer(z)
            let lo = lowerBound(zb, UnsafeRawBufferPointer(start: nil, count: 0))
            var hi = lo
            while hi < count, let (k, _) = keyBytes(hi), RowKeyOrder.compare(k, zb) == 0 { hi += 1 }
            return lo..<hi
        }
    }
}

/// A row section's bytes as plain values (no reference to retain), valid while the section's
/// segment is mapped: what finding a row by id and prefetching read (`BaseRows` keeps one per
/// layer, so a lookup copies no `RowSection`, whose references a copy retains and releases).
struct RowBytes: @unchecked Sendable {
    // @unchecked: pointers into an immutable mapped segment that the owning section keeps.
    let bytes: UnsafeRawBufferPointer
    let count: Int
    let entriesAt: Int
    /// The segment's `rowhash` section, nil when it has none.
    let hash: RowHash.Table?
    /// The segment's `rowsums` section, nil when it has none.
    let sums: RowSums.Table?

    var base: UnsafeRawPointer? { bytes.baseAddress }
    var size: Int { bytes.count }

    init(_ section: RowSection) {
        bytes = section.bytes
        count = section.count
        entriesAt = section.entriesAt
        hash = section.hash
        sums = section.sums
    }

    /// Where row `i`'s entry starts in the section (`i` in range).
    @inline(__always) func entry(_ i: Int) -> Int { entriesAt + i * RowSection.entrySize }

    /// The little-endian u64 at `o`, as an Int: an offset, negative when damaged (callers check).
    @inline(__always) func u64(_ o: Int) -> Int {
        Int(truncatingIfNeeded: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: o, as: UInt64.self)))
    }

    /// Row `i`'s encoded record (RecordCodec bytes), nil when damaged (as `RowSection.payload`).
    @inline(__always)
    func payload(_ i: Int) -> UnsafeRawBufferPointer? {
        guard i >= 0, i < count, let base else { return nil }
        let e = entry(i)
        let o = u64(e)
        let n = Int(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: e + 8, as: UInt32.self)))
        guard o >= 0, o <= size - n else { return nil }
        return UnsafeRawBufferPointer(start: base + o, count: n)
    }

    /// Row `i`'s record, decoded (storage form), with `names` for its field names; `encodedFields`
    /// as in `BaseRows.record(_:encodedFields:)`. A row the writer checked (`rowsums`) has its CRC
    /// checked, however it is decoded: one that matches is held encoded without being walked
    /// again; one that does not is damage (which the walk and eager decoding may not see: a
    /// letter changed into another). Fields held encoded stay in the mapping, which `owner` (the segment's mapped file)
    /// keeps. `damage(reason)` makes the error naming the row.
    @inline(__always)
    func record(
        _ i: Int, names: RecordCodec.NameTable?, encodedFields: Bool, owner: MappedFile,
        damage: (String) -> LogError
    ) throws(LogError) -> Record {
        guard let p = payload(i) else { throw damage("row payload lies outside the section") }
        var checked = false
        if let sums {
            switch sums.verdict(i, p) {
            case .checked: checked = true
            case .damaged: throw damage("the row's bytes do not match the CRC written with them")
            case .unchecked: break
            }
        }
        do {
            return try RecordCodec.decode(
                p, names: names, encodedFields: encodedFields, fieldsChecked: checked, owner: owner)
        } catch {
            throw damage("row does not decode: \(error)")
        }
    }

    /// Row `i`'s zone-name and record-name bytes, nil when damaged (as `RowSection.keyBytes`).
    @inline(__always)
    func keyBytes(_ i: Int) -> (zone: UnsafeRawBufferPointer, name: UnsafeRawBufferPointer)? {
        guard i >= 0, i < count, let base else { return nil }
        let e = entry(i)
        let z = Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: e + 12, as: UInt16.self)))
        let n = Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: e + 14, as: UInt16.self)))
        let o = u64(e + 24)
        guard o >= 0, o <= size - (z + n) else { return nil }
        return (
            UnsafeRawBufferPointer(start: base + o, count: z), UnsafeRawBufferPointer(start: base + o + z, count: n)
        )
    }

    /// Compares row `i`'s key with (zone, name): <0, 0, >0; a damaged key sorts first.
    @inline(__always)
    func compare(_ i: Int, _ zone: UnsafeRawBufferPointer, _ name: UnsafeRawBufferPointer) -> Int {
        guard let (z, n) = keyBytes(i) else { return -1 }
        let c = RowKeyOrder.compare(z, zone)
        return c != 0 ? c : RowKeyOrder.compare(n, name)
    }

    /// The first row whose key is not less than (zone, name).
    func lowerBound(_ zone: UnsafeRawBufferPointer, _ name: UnsafeRawBufferPointer) -> Int {
        var lo = 0
        var hi = count
        while lo < hi {
            let m = (lo + hi) / 2
            if compare(m, zone, name) < 0 { lo = m + 1 } else { hi = m }
        }
        return lo
    }

    /// The row of (zone, name), nil when absent: through `hash` when the segment has one, else
    /// by binary search.
    func row(zone z: UnsafeRawBufferPointer, name n: UnsafeRawBufferPointer) -> Int? {
        if let hash { return hash.find(RowHash.hash(z, n), rows: count) { compare($0, z, n) == 0 } }
        let i = lowerBound(z, n)
        return i < count && compare(i, z, n) == 0 ? i : nil
    }

    /// The row of a record id (its zone name and record name), nil when absent.
    func row(of id: RecordID) -> Int? {
        var zone = id.zoneID.zoneName
        var name = id.recordName
        return zone.withUTF8 { z in
            name.withUTF8 { n in row(zone: UnsafeRawBufferPointer(z), name: UnsafeRawBufferPointer(n)) }
        }
    }

    /// Starts loading row `i`'s key bytes (reading its entry: issue it after the entry's hint).
    @inline(__always) func prefetchKey(_ i: Int) {
        guard i >= 0, i < count, let base else { return }
        let o = u64(entry(i) + 24)
        guard o >= 0, o < size else { return }
        cirrus_prefetch(base + o)
    }

    /// Starts loading row `i`'s entry (`payload: false`) or its payload's first 256 bytes
    /// (`payload: true`, which reads the entry: issue it a few rows after the entry's). A hint:
    /// nothing is read that is not in the section, and a damaged row loads nothing.
    @inline(__always) func prefetch(_ i: Int, payload load: Bool) {
        guard i >= 0, i < count, let base else { return }
        guard load else { return cirrus_prefetch(base + entry(i)) }
        guard let p = payload(i), let start = p.baseAddress else { return }
        // One hint per 64-byte cache line the bytes touch.
        let o = start - base
        let end = o + min(p.count, 256)
        var line = o & ~63
        while line < end {
            cirrus_prefetch(base + max(line, o))
            line += 64
        }
    }
}

// DataSegment: the container format of the immutable, checksummed, memory-mapped files a
// checkpoint writes — named sections, a CRC-32C per 64 KiB block, a directory and a footer.
// The full grammar with rationale is docs/storage-format.md; keep the two in step.
//
//   file      = header(16) section* crc-table directory footer(48)
//   header    = "CIRRUSDS" u16 version=1 u16 flags=0 u32 0                       never change
//   section   = bytes, starting 8-byte aligned (zero padding before)
//   crc-table = u32 CRC-32C per 64 KiB block of each section, sections in order
//   directory = u32 count, per section: u16 name-len name u64 offset u64 length
//               u32 first-crc-index u32 block-count
//   footer    = u64 dir-offset u64 dir-length u64 crc-table-offset u32 block-size
//               u32 dir-crc u32 crc-table-crc u32 footer-crc(of the 36 bytes before)
//               "CIRRUSDF"                                                          never change
//
// Opening checks header, footer, directory and CRC table — O(sections), never the data; block
// CRCs are checked by `verifyBlocks()` (cirrus verify, and checkpoint merges that read a whole
// segment). What this type does not know: what a section means (RowSection, CheckpointState,
// the index sections of the Indexes module).

import CirrusIO

/// Wire constants of data segments.                                          never change
public enum DataSegmentFormat {
    /// Header magic, "CIRRUSDS".
    public static let headerMagic: [UInt8] = Array("CIRRUSDS".utf8)
    /// Footer magic, "CIRRUSDF" (the file's last 8 bytes).
    public static let footerMagic: [UInt8] = Array("CIRRUSDF".utf8)
    /// The format version this code writes and reads.
    public static let version: UInt16 = 1
    /// Header size in bytes.
    public static let headerSize = 16
    /// Footer size in bytes.
    public static let footerSize = 48
    /// Bytes per checksummed block of a section (64 KiB).
    public static let blockSize = 65536

    /// `dat-<16 hex digits>.seg`.
    public static func fileName(_ n: UInt64) -> String { NumberedFileName(prefix: "dat-", suffix: ".seg").name(n) }

    /// The number of a data segment file name, or nil.
    public static func number(fileName: String) -> UInt64? {
        NumberedFileName(prefix: "dat-", suffix: ".seg").number(fileName)
    }
}

/// Writes one data segment to a new file: sections streamed in, then `finish()`.
///
/// ```swift
/// var w = try DataSegmentWriter(fileSystem: fs, path: dir + "/dat-…seg")
/// try w.addSection("rows", bytes)
/// try w.finish()        // CRC table, directory, footer, fsync
/// ```
public struct DataSegmentWriter {
    struct Entry {
        var name: String
        var offset: Int
        var length: Int
        var firstBlock: Int
        var blocks: Int
    }
    let file: any AppendableFile
    /// The file being written.
    public let path: String
    var offset = 0
    var entries: [Entry] = []
    var crcs: [UInt32] = []
    // The open section:
    var open: Entry?
    var blockCRC = CRC32C.start
    var blockFill = 0
    var pending: [UInt8] = []

    /// Creates the file (replacing a leftover of the same name).
    public init(fileSystem fs: any FileSystem, path: String) throws {
        if fs.exists(path) { try fs.remove(path) }
        file = try fs.openForAppend(path, create: true)
        self.path = path
        var h = ByteWriter(capacity: DataSegmentFormat.headerSize)
        h.bytes += DataSegmentFormat.headerMagic
        h.u16(DataSegmentFormat.version)
        h.u16(0)
        h.u32(0)
        try write(h.bytes)
    }

    /// Buffers `b` (written in 1 MiB batches). Bytes of 1 MiB or more are written from where
    /// they are, without a copy: a 10M-row index section is hundreds of MB, which the buffer
    /// would double and then keep as its capacity for the rest of the file.
    mutating func write(_ b: [UInt8]) throws {
        offset += b.count
        if b.count >= 1 << 20 {
            try flush()
            try b.withUnsafeBytes { try writeInPieces($0) }
            return
        }
        pending += b
        if pending.count >= 1 << 20 { try flush() }
    }

    /// Bytes per write(2). The page cache keeps what one write brings in as one folio, and a
    /// fault on a mapped file maps the whole folio: segments written in 1 MiB writes would cost
    /// about 1 MiB of resident memory per row a query touches, where with 64 KiB writes a fault
    /// maps no more than the kernel's fault-around window. So writes stay at 64 KiB.
    static let writeSize = 1 << 16

    mutating func flush() throws {
        try pending.withUnsafeBytes { try writeInPieces($0) }
        pending.removeAll(keepingCapacity: true)
    }

    /// Writes `p` to the file in `writeSize` pieces.
    func writeInPieces(_ p: UnsafeRawBufferPointer) throws {
        var start = 0
        while start < p.count {
            let end = min(p.count, start + Self.writeSize)
            try file.append(UnsafeRawBufferPointer(rebasing: p[start..<end]))
            start = end
        }
    }

    /// Starts a section named `name` (unique in the file).
    public mutating func beginSection(_ name: String) throws {
        precondition(open == nil, "a section is already open")  // a programming error, not input
        let pad = (8 - offset % 8) % 8
        if pad > 0 { try write([UInt8](repeating: 0, count: pad)) }
        open = Entry(name: name, offset: offset, length: 0, firstBlock: crcs.count, blocks: 0)
        blockCRC = CRC32C.start
        blockFill = 0
    }

    /// Appends bytes to the open section.
    public mutating func append(_ bytes: [UInt8]) throws {
        guard open != nil else { return }
        bytes.withUnsafeBytes { p in
            var i = 0
            while i < p.count {
                let n = min(DataSegmentFormat.blockSize - blockFill, p.count - i)
                blockCRC = CRC32C.update(blockCRC, UnsafeRawBufferPointer(rebasing: p[i..<(i + n)]))
                blockFill += n
                i += n
                if blockFill == DataSegmentFormat.blockSize {
                    crcs.append(CRC32C.finalize(blockCRC))
                    blockCRC = CRC32C.start
                    blockFill = 0
                }
            }
        }
        open?.length += bytes.count
        try write(bytes)
    }

    /// Ends the open section.
    public mutating func endSection() {
        guard var e = open else { return }
        if blockFill > 0 { crcs.append(CRC32C.finalize(blockCRC)) }
        e.blocks = crcs.count - e.firstBlock
        entries.append(e)
        open = nil
    }

    /// A whole section at once.
    public mutating func addSection(_ name: String, _ bytes: [UInt8]) throws {
        try beginSection(name)
        try append(bytes)
        endSection()
    }

    /// Writes the CRC table, directory and footer, fsyncs and closes the file. The caller
    /// fsyncs the directory before naming the file in a manifest.
    public mutating func finish() throws {
        endSection()
        let crcOffset = offset
        var t = ByteWriter(capacity: crcs.count * 4)
        for c in crcs { t.u32(c) }
        let crcTableCRC = CRC32C.checksum(t.bytes)
        try write(t.bytes)
        let dirOffset = offset
        var d = ByteWriter(capacity: 64 * entries.count)
        d.u32(UInt32(entries.count))
        for e in entries {
            let name = Array(e.name.utf8)
            d.u16(UInt16(name.count))
            d.bytes += name
            d.u64(UInt64(e.offset))
            d.u64(UInt64(e.length))
            d.u32(UInt32(e.firstBlock))
            d.u32(UInt32(e.blocks))
        }
        try write(d.bytes)
        var f = ByteWriter(capacity: DataSegmentFormat.footerSize)
        f.u64(UInt64(dirOffset))
        f.u64(UInt64(d.bytes.count))
        f.u64(UInt64(crcOffset))
        f.u32(UInt32(DataSegmentFormat.blockSize))
        f.u32(CRC32C.checksum(d.bytes))
        f.u32(crcTableCRC)
        f.u32(CRC32C.checksum(f.bytes))
        f.bytes += DataSegmentFormat.footerMagic
        try write(f.bytes)
        try flush()
        try file.sync()
        try file.close()
    }
}

/// A data segment opened for reading: its sections as views of the mapped file.
///
/// ```swift
/// let segment = try DataSegment.open(dir + "/" + DataSegmentFormat.fileName(7), fileSystem: fs)
/// if let rows = segment.section("rows") { /* read in place, while `segment.file` lives */ }
/// let damaged = segment.verifyBlocks()   // [(section, offset)] of blocks whose CRC fails
/// ```
public struct DataSegment: Sendable {
    /// One section's place in the file.
    public struct Section: Sendable, Hashable {
        /// The section's name, unique in the segment.
        public var name: String
        /// Byte offset of the section in the file (8-byte aligned).
        public var offset: Int
        /// The section's length in bytes.
        public var length: Int
        var firstBlock: Int
        var blocks: Int
    }

    /// The mapped file; keep it alive as long as any section bytes are used.
    public let file: MappedFile
    /// The sections, in file order.
    public let sections: [Section]
    let crcTableOffset: Int
    let crcTableEnd: Int
    /// The block CRC table's checksum, from the footer.
    let crcTableCRC: UInt32

    /// Checks header, footer and directory (not the block CRC table, nor the blocks) and lists
    /// the sections.
    public init(file: MappedFile) throws(LogError) {
        self.file = file
        let b = file.bytes
        func bad(_ o: Int, _ r: String) -> LogError { .badSegment(path: file.path, offset: o, reason: r) }
        let minSize = DataSegmentFormat.headerSize + DataSegmentFormat.footerSize
        guard b.count >= minSize else { throw bad(0, "\(b.count) bytes is shorter than header + footer (\(minSize))") }
        guard Array(b[0..<8]) == DataSegmentFormat.headerMagic else {
            throw bad(0, "not a data segment (bad header magic)")
        }
        var r = ByteReader(b, offset: 8)
        guard let version = try? r.u16(), version == DataSegmentFormat.version else {
            throw bad(8, "unknown data segment version")
        }
        let fo = b.count - DataSegmentFormat.footerSize
        guard Array(b[(fo + 40)..<(fo + 48)]) == DataSegmentFormat.footerMagic else {
            throw bad(fo + 40, "no footer magic (a torn or truncated write)")
        }
        let footerCRC = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: b[fo..<(fo + 36)]))
        r = ByteReader(b, offset: fo)
        do {
            let dirOffset = Int(try r.u64())
            let dirLength = Int(try r.u64())
            let crcOffset = Int(try r.u64())
            let blockSize = Int(try r.u32())
            let dirCRC = try r.u32()
            let tableCRC = try r.u32()
            guard try r.u32() == footerCRC else { throw bad(fo, "footer checksum mismatch") }
            guard blockSize == DataSegmentFormat.blockSize else {
                throw bad(fo + 24, "unsupported block size \(blockSize)")
            }
            guard crcOffset >= DataSegmentFormat.headerSize, crcOffset <= dirOffset, dirLength >= 4,
                dirOffset <= fo, dirLength <= fo - dirOffset
            else { throw bad(fo, "directory or CRC table outside the file") }
            let dir = UnsafeRawBufferPointer(rebasing: b[dirOffset..<(dirOffset + dirLength)])
            guard CRC32C.checksum(dir) == dirCRC else { throw bad(dirOffset, "directory checksum mismatch") }
            // The block CRC table's own checksum is checked where the table is used (`verify`,
            // repair's salvage), not here: it covers 4 bytes per 64 KiB of file, which at 10M
            // rows is 400 KB read and summed at every open for nothing a read needs.
            guard (dirOffset - crcOffset) % 4 == 0 else { throw bad(crcOffset, "block CRC table of a partial entry") }
            var d = ByteReader(dir)
            let count = Int(try d.u32())
            var list: [Section] = []
            for _ in 0..<count {
                let n = Int(try d.u16())
                guard n <= d.remaining else {
                    throw bad(dirOffset + d.offset, "directory entry name runs past the directory")
                }
                let name = String(
                    decoding: UnsafeRawBufferPointer(rebasing: dir[d.offset..<(d.offset + n)]), as: UTF8.self)
                d.offset += n
                let s = Section(
                    name: name, offset: Int(try d.u64()), length: Int(try d.u64()),
                    firstBlock: Int(try d.u32()), blocks: Int(try d.u32()))
                let expectBlocks = (s.length + DataSegmentFormat.blockSize - 1) / DataSegmentFormat.blockSize
                guard s.offset >= DataSegmentFormat.headerSize, s.offset % 8 == 0, s.length <= crcOffset - s.offset,
                    s.blocks == expectBlocks, s.firstBlock + s.blocks <= (dirOffset - crcOffset) / 4
                else {
                    throw bad(
                        dirOffset + d.offset, "section '\(name)' lies outside the file or its block list is wrong")
                }
                list.append(s)
            }
            sections = list
            crcTableOffset = crcOffset
            crcTableEnd = dirOffset
            crcTableCRC = tableCRC
        } catch let e as LogError {
            throw e
        } catch {
            throw bad(fo, "footer or directory is truncated")
        }
    }

    /// A segment whose footer or directory is damaged, read as the salvage found it: `sections`
    /// located by their own headers, no CRC table (`blockStatus` is nil: the bytes are checked by
    /// decoding them). For `repair` only.
    init(salvaging file: MappedFile, sections: [Section]) {
        self.file = file
        self.sections = sections
        crcTableOffset = -1
        crcTableEnd = -1
        crcTableCRC = 0
    }

    /// Opens the file at `path` through the file system (mapped on POSIX).
    public static func open(_ path: String, fileSystem: any FileSystem) throws(LogError) -> DataSegment {
        let f: MappedFile
        do { f = try fileSystem.map(path) } catch {
            throw .badSegment(path: path, offset: 0, reason: "cannot map: \(error)")
        }
        return try DataSegment(file: f)
    }

    /// What `verifyBlocks` names as the section of a damaged block CRC table.
    public static let blockCRCTable = "(block CRC table)"

    /// The bytes of a section, or nil when the file has none of that name.
    public func section(_ name: String) -> UnsafeRawBufferPointer? {
        guard let s = sections.first(where: { $0.name == name }) else { return nil }
        return UnsafeRawBufferPointer(rebasing: file.bytes[s.offset..<(s.offset + s.length)])
    }

    /// Whether the block CRC table matches its checksum (false for a segment salvaged without it).
    var crcTableIsSound: Bool {
        guard crcTableOffset >= 0 else { return false }
        return CRC32C.checksum(UnsafeRawBufferPointer(rebasing: file.bytes[crcTableOffset..<crcTableEnd]))
            == crcTableCRC
    }

    /// Whether each block of `section` matches its CRC (block `i` covers the section's bytes
    /// `i * blockSize ..< (i + 1) * blockSize`); nil when the segment has no sound CRC table
    /// (salvaged without it, or the table fails its checksum).
    func blockStatus(_ section: Section) -> [Bool]? {
        guard crcTableIsSound else { return nil }
        let b = file.bytes
        return (0..<section.blocks).map { i in
            let start = section.offset + i * DataSegmentFormat.blockSize
            let end = min(start + DataSegmentFormat.blockSize, section.offset + section.length)
            let want = b.loadUnaligned(fromByteOffset: crcTableOffset + 4 * (section.firstBlock + i), as: UInt32.self)
            return CRC32C.checksum(UnsafeRawBufferPointer(rebasing: b[start..<end])) == UInt32(littleEndian: want)
        }
    }

    /// Checks every block of every section against its CRC; the damaged blocks as
    /// (section, file offset) pairs, empty when the file is sound. A CRC table that fails its
    /// own checksum is itself the damage: (`blockCRCTable`, its offset).
    public func verifyBlocks() -> [(section: String, offset: Int)] {
        guard crcTableOffset >= 0 else { return [] }
        guard crcTableIsSound else { return [(Self.blockCRCTable, crcTableOffset)] }
        var damaged: [(String, Int)] = []
        let b = file.bytes
        for s in sections {
            for i in 0..<s.blocks {
                let start = s.offset + i * DataSegmentFormat.blockSize
                let end = min(start + DataSegmentFormat.blockSize, s.offset + s.length)
                let want = b.loadUnaligned(fromByteOffset: crcTableOffset + 4 * (s.firstBlock + i), as: UInt32.self)
                if CRC32C.checksum(UnsafeRawBufferPointer(rebasing: b[start..<end])) != UInt32(littleEndian: want) {
                    damaged.append((s.name, start))
                }
            }
        }
        return damaged
    }
}

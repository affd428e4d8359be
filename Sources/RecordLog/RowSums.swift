// RowSums: the `rowsums` section of a table's rows segment — each row's CRC-32C, and whether the
// writer found the row's fields fit to be held encoded. Format (docs/storage-format.md,
// "rowsums"):
//
//   header  = "CRSUMS01" u32 row-count u32 0                                      never change
//   sums    = u32 CRC-32C of row i's payload, × row-count
//   (zero padding to 8)
//   checked = u64 words, bit i % 64 of word i / 64 set when row i's payload passed
//             `RecordCodec.fieldsHoldEncoded` when it was written
//
// Why: a record a query returns keeps its fields' bytes (`RecordFields` held encoded), which
// must decode without error, so every returned row was walked and its strings' UTF-8 checked
// (`RecordCodec.checkFields`) — on real data the largest part of an all-matches query. The writer
// now makes that check once; a reader proves the bytes unchanged since with the row's CRC (one
// CPU instruction per eight bytes) and skips the walk. A CRC that does not match is damage,
// reported as such (the walk caught only damage that broke the structure or UTF-8).
//
// A process checks a row's CRC the first time it reads the row, and remembers it (`Seen`: a bit
// a row, set atomically): the segment is immutable and mapped read-only, so bytes that matched
// once match at every later read in the process. `verify` and repair check every block's CRC
// regardless. A row read again — a hot query's results — then costs no pass over its bytes.
//
// The section is optional: a rows segment without it (written before it existed) is read as
// before, every returned row walked. A reader checks the header and size at open; one that does
// not fit its rows is not used (the open reports it).

import CPrefetch
import CirrusIO

#if canImport(Glibc)
    import Glibc
#endif

/// A `rowsums` section: its writer's accumulator and its validated reader.
public enum RowSums {
    static let magic: [UInt8] = Array("CRSUMS01".utf8)  //                         never change
    static let headerSize = 16

    /// A row's entry: the CRC of its payload, and whether its fields can be held encoded.
    struct Entry: Sendable {
        let sum: UInt32
        let holdsEncoded: Bool

        init(_ payload: UnsafeRawBufferPointer) {
            sum = CRC32C.checksum(payload)
            holdsEncoded = RecordCodec.fieldsHoldEncoded(payload)
        }
    }

    /// The bytes of the section, accumulated row by row.
    struct Writer {
        var sums: [UInt32] = []
        var checked: [UInt64] = []

        /// Adds the next row: its entry, worked out from its payload unless given.
        mutating func add(_ entry: Entry) {
            let i = sums.count
            sums.append(entry.sum)
            if i % 64 == 0 { checked.append(0) }
            if entry.holdsEncoded { checked[i / 64] |= 1 << UInt64(i % 64) }
        }

        /// The section's bytes.
        func encoded() -> [UInt8] {
            var w = ByteWriter(capacity: Table.size(rows: sums.count))
            w.bytes += RowSums.magic
            w.u32(UInt32(sums.count))
            w.u32(0)
            for s in sums { w.u32(s) }
            if sums.count % 2 != 0 { w.u32(0) }
            for word in checked { w.u64(word) }
            return w.bytes
        }
    }

    /// The rows of one section whose CRC this process has checked and found matching: a bit a
    /// row, zeroed at open (`calloc`: pages never written cost nothing), set by the first read
    /// that checks the row. Readers hold `words` (the section keeps this object).
    final class Seen: @unchecked Sendable {
        // @unchecked: the words are only read and set through relaxed atomic operations.
        let words: UnsafeMutablePointer<UInt64>
        /// The words' memory: zero pages until a row of theirs is read (a table of 10M rows
        /// would otherwise clear 1.25 MB at every open).
        private let memory: ZeroedMemory

        /// A bitmap for `rows` rows, nil when the memory cannot be had (rows are then checked at
        /// every read).
        init?(rows: Int) {
            guard let m = ZeroedMemory(byteCount: max((rows + 63) / 64, 1) * 8) else { return nil }
            memory = m
            words = m.base.bindMemory(to: UInt64.self, capacity: m.byteCount / 8)
        }
    }

    /// A validated `rowsums` section of a segment with `rows` rows.
    struct Table {
        let bytes: UnsafeRawBufferPointer
        let rows: Int
        /// Where the `checked` bitmap starts.
        let checkedAt: Int
        /// The section's `Seen` bits (nil: every read checks the CRC); its owner outlives this view.
        var seen: UnsafeMutablePointer<UInt64>? = nil

        /// The section's size for `rows` rows.
        static func size(rows: Int) -> Int { headerSize + (rows + rows % 2) * 4 + (rows + 63) / 64 * 8 }

        /// Checks the header and size, throwing `bad(reason)` when they are wrong.
        init(_ b: UnsafeRawBufferPointer, rows: Int, bad: (String) -> LogError) throws(LogError) {
            guard b.count >= headerSize, Array(b[0..<8]) == magic else { throw bad("bad header") }
            let n = Int(UInt32(littleEndian: b.loadUnaligned(fromByteOffset: 8, as: UInt32.self)))
            guard n == rows, b.count == Self.size(rows: rows) else {
                throw bad("\(n) sums for \(rows) rows in \(b.count) bytes")
            }
            bytes = b
            self.rows = rows
            checkedAt = headerSize + (rows + rows % 2) * 4
        }

        /// Whether row `i` (in range) passed the writer's check of its fields.
        @inline(__always) func checked(_ i: Int) -> Bool {
            let w = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: checkedAt + i / 64 * 8, as: UInt64.self))
            return w & (1 << UInt64(i % 64)) != 0
        }

        /// Row `i`'s CRC (in range).
        @inline(__always) func sum(_ i: Int) -> UInt32 {
            UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: headerSize + i * 4, as: UInt32.self))
        }
    }

    /// What a reader may assume of a row's payload.
    enum Verdict {
        /// No sum, or the writer's check failed: walk the fields before holding them encoded.
        case unchecked
        /// The payload is the one the writer checked: its fields may be held encoded as they are.
        case checked
        /// The payload's CRC is not the one written: damage.
        case damaged
    }
}

extension RowSums.Table {
    /// What row `i`'s `payload` may be taken for (`i` in range).
    /// The CRC is checked at the row's first read in this process (`seen`), not again.
    @inline(__always) func verdict(_ i: Int, _ payload: UnsafeRawBufferPointer) -> RowSums.Verdict {
        guard checked(i) else { return .unchecked }
        let bit: UInt64 = 1 << UInt64(i % 64)
        if let seen, cirrus_load_relaxed(seen + i / 64) & bit != 0 { return .checked }
        guard CRC32C.checksum(payload) == sum(i) else { return .damaged }
        if let seen { cirrus_or_relaxed(seen + i / 64, bit) }
        return .checked
    }
}

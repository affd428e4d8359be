// RowHash: the `rowhash` section of a table's rows segment — a hash table from record id to row,
// so a fetch by id probes a slot or two instead of binary-searching the rows' keys (twenty steps
// at 1M rows, each reading an entry and a key from the mapped file). Format
// (docs/storage-format.md, "rowhash"):
//
//   header = "CRHASH01" u64 slot-count                                             never change
//   slots  = (u32 row + 1, 0 = empty | u32 fingerprint) × slot-count
//
// hash(zone, name) is `RowHash.hash` (below, never change); a key's home slot is
// (low 32 bits × slot-count) >> 32, its fingerprint the high 32 bits; collisions probe the
// following slots (linear probing, wrapping at the end). The writer makes slot-count
// = count + count / 2 + 1, so at least a third of the slots are empty and every probe sequence
// ends at one. The section is optional: a rows segment without it (written before it existed,
// or a bulk load's run) is searched as before. A reader checks the header and size at open; a
// slot naming a row outside the section is skipped, and a found row's key is always compared
// with the one asked for, so a damaged table can miss an id but never return another's row.

import CirrusIO

/// A `rowhash` section's hash and probing, shared by its writer and reader.
public enum RowHash {
    static let magic: [UInt8] = Array("CRHASH01".utf8)  //                         never change
    static let headerSize = 16
    static let slotSize = 8

    /// The 64-bit hash of an id's zone-name and record-name bytes.                  never change
    ///
    /// Starting from 0x9E3779B97F4A7C15 xor (zone length << 32 | name length), each byte string
    /// in turn is taken as little-endian 64-bit words (the last one zero-padded), and each word
    /// is xored in and the state mixed; the result is mixed once more. The mix is
    /// x ^= x >> 32; x *= 0xD6E8FEB86659FD93; twice; then x ^= x >> 32.
    @inline(__always)
    public static func hash(_ zone: UnsafeRawBufferPointer, _ name: UnsafeRawBufferPointer) -> UInt64 {
        var h: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ (UInt64(zone.count) << 32 | UInt64(name.count))
        absorb(&h, zone)
        absorb(&h, name)
        return mix(h)
    }

    @inline(__always) static func mix(_ v: UInt64) -> UInt64 {
        var x = v
        x ^= x >> 32
        x &*= 0xD6E8_FEB8_6659_FD93
        x ^= x >> 32
        x &*= 0xD6E8_FEB8_6659_FD93
        x ^= x >> 32
        return x
    }

    @inline(__always) static func absorb(_ h: inout UInt64, _ b: UnsafeRawBufferPointer) {
        guard let p = b.baseAddress else { return }
        var i = 0
        while i + 8 <= b.count {
            h = mix(h ^ UInt64(littleEndian: p.loadUnaligned(fromByteOffset: i, as: UInt64.self)))
            i += 8
        }
        if i < b.count {
            var w: UInt64 = 0
            var shift: UInt64 = 0
            while i < b.count {
                w |= UInt64(p.load(fromByteOffset: i, as: UInt8.self)) << shift
                shift += 8
                i += 1
            }
            h = mix(h ^ w)
        }
    }

    /// The home slot of a hash in a table of `slots` slots.
    @inline(__always) static func home(_ h: UInt64, slots: Int) -> Int {
        Int((UInt64(UInt32(truncatingIfNeeded: h)) &* UInt64(slots)) >> 32)
    }

    /// The number of slots the writer gives `count` rows (load at most 2/3, never full).
    static func slotCount(rows count: Int) -> Int { count + count / 2 + 1 }

    /// The section's bytes for rows whose keys are given in row order by `key(i)`.
    static func encode(
        count: Int, key: (Int) -> (zone: UnsafeRawBufferPointer, name: UnsafeRawBufferPointer)
    ) -> [UInt8] {
        let slots = slotCount(rows: count)
        var table = [UInt64](repeating: 0, count: slots)  // row + 1 in the low half, fingerprint high
        for i in 0..<count {
            let (z, n) = key(i)
            let h = hash(z, n)
            var s = home(h, slots: slots)
            while table[s] != 0 { s = s + 1 == slots ? 0 : s + 1 }
            table[s] = (h >> 32) << 32 | UInt64(i + 1)
        }
        var w = ByteWriter(capacity: headerSize + slots * slotSize)
        w.bytes += magic
        w.u64(UInt64(slots))
        for v in table { w.u64(v) }  // little-endian: u32 row + 1, then u32 fingerprint
        return w.bytes
    }

    /// A validated `rowhash` section of a segment with `rows` rows.
    struct Table {
        let bytes: UnsafeRawBufferPointer
        let slots: Int

        /// Checks the header and size, throwing `bad(reason)` when they are wrong.
        init(_ b: UnsafeRawBufferPointer, rows: Int, bad: (String) -> LogError) throws(LogError) {
            guard b.count >= headerSize, Array(b[0..<8]) == magic else { throw bad("bad header") }
            let n = UInt64(littleEndian: b.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            guard n > UInt64(rows), n <= UInt64((b.count - headerSize) / slotSize),
                b.count == headerSize + Int(n) * slotSize
            else { throw bad("\(n) slots for \(rows) rows in \(b.count) bytes") }
            bytes = b
            slots = Int(n)
        }

        /// The rows whose fingerprint matches `h`, from its home slot to the first empty slot,
        /// each passed to `matches` until it returns true: that row, else nil.
        @inline(__always) func find(_ h: UInt64, rows: Int, _ matches: (Int) -> Bool) -> Int? {
            let fingerprint = UInt32(truncatingIfNeeded: h >> 32)
            var s = home(h, slots: slots)
            for _ in 0..<slots {
                let o = headerSize + s * slotSize
                let v = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: o, as: UInt32.self))
                if v == 0 { return nil }
                if UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: o + 4, as: UInt32.self)) == fingerprint,
                    Int(v) <= rows, matches(Int(v) - 1)
                {
                    return Int(v) - 1
                }
                s = s + 1 == slots ? 0 : s + 1
            }
            return nil
        }
    }
}

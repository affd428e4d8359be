// CRC32C: CRC-32C (Castagnoli), as used by every frame, segment block and row.
//
// Reflected polynomial 0x82F63B78, initial value and final xor 0xFFFFFFFF. The check value
// `crc32c("123456789") == 0xE3069283` is a test. With the CPU's CRC-32C instruction (SSE 4.2,
// the Arm CRC extension; CCRC32C) eight bytes take one instruction; without it, slicing-by-8
// over tables computed once into a `let` (immutable globals, so no shared mutable state). Both
// compute the same running value, so they may be mixed mid-stream.

import CCRC32C

/// CRC-32C over byte buffers, incrementally: `update` with the running value, `finalize` once.
///
/// ```swift
/// CRC32C.checksum(Array("123456789".utf8))   // 0xE3069283
/// // The same, in pieces:
/// let crc = CRC32C.update(CRC32C.update(CRC32C.start, part1), part2)
/// CRC32C.finalize(crc)
/// ```
public enum CRC32C {
    static let tables: [[UInt32]] = {
        var t = [[UInt32]](repeating: [UInt32](repeating: 0, count: 256), count: 8)
        for i in 0..<256 {
            var c = UInt32(i)
            for _ in 0..<8 { c = (c & 1) != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
            t[0][i] = c
        }
        for i in 0..<256 {
            for k in 1..<8 { t[k][i] = (t[k - 1][i] >> 8) ^ t[0][Int(t[k - 1][i] & 0xFF)] }
        }
        return t
    }()
    static let flat: [UInt32] = tables.flatMap { $0 }

    /// The CRC of `bytes`.
    public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 { finalize(update(start, bytes)) }

    /// The CRC of an array.
    public static func checksum(_ bytes: [UInt8]) -> UInt32 { bytes.withUnsafeBytes { checksum($0) } }

    /// The running value before any byte.
    public static let start: UInt32 = 0xFFFF_FFFF

    /// The final CRC from a running value.
    @inline(__always) public static func finalize(_ crc: UInt32) -> UInt32 { crc ^ 0xFFFF_FFFF }

    /// Whether ``update(_:_:)`` uses the CPU's instruction (decided once per process).
    public static let hardware = cirrus_crc32c_hardware() != 0

    /// Feeds `bytes` into the running value `crc`.
    @inline(__always)
    public static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard hardware, let base = bytes.baseAddress else { return tableUpdate(crc, bytes) }
        let n = bytes.count
        guard n >= 3 * Int(CIRRUS_CRC32C_STREAM) else { return cirrus_crc32c_update(crc, base, n) }
        return shift.withUnsafeBufferPointer { cirrus_crc32c_update3(crc, base, n, $0.baseAddress) }
    }

    /// The length of each of the three streams ``update(_:_:)`` runs side by side on long input.
    static let streamLength = Int(CIRRUS_CRC32C_STREAM)

    /// The map "feed ``streamLength`` zero bytes" on a running value, by byte of the value
    /// (entry 256 × k + b: from b << 8k), for ``update(_:_:)``'s three streams. Computed once,
    /// at a process's first checksum of three streams' length (its open reads one).
    ///
    /// Feeding zero bytes is linear over GF(2) (a table step xors entries of a table that is itself
    /// linear, `T[a ^ b] == T[a] ^ T[b]`), so an entry is the xor of the images of its set bits:
    /// 32 runs over the zeros, not one per entry.
    static let shift: [UInt32] = {
        let zeros = [UInt8](repeating: 0, count: streamLength)
        let bits = zeros.withUnsafeBytes { z in (0..<32).map { i in update(1 << UInt32(i), z) } }
        var table = [UInt32](repeating: 0, count: 4 * 256)
        for k in 0..<4 {
            for b in 1..<256 {
                // The entry of b is the entry of b without its lowest set bit, xor that bit's image.
                let low = b & -b
                table[256 * k + b] = table[256 * k + (b ^ low)] ^ bits[8 * k + low.trailingZeroBitCount]
            }
        }
        return table
    }()

    /// ``update(_:_:)`` without the CPU's instruction: slicing-by-8 over the tables.
    static func tableUpdate(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var c = crc
        let n = bytes.count
        guard n > 0, let base = bytes.baseAddress else { return c }
        var i = 0
        flat.withUnsafeBufferPointer { t in
            while n - i >= 8 {
                let lo = base.loadUnaligned(fromByteOffset: i, as: UInt32.self).littleEndian ^ c
                let hi = base.loadUnaligned(fromByteOffset: i + 4, as: UInt32.self).littleEndian
                c =
                    t[7 * 256 + Int(lo & 0xFF)] ^ t[6 * 256 + Int((lo >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((lo >> 16) & 0xFF)] ^ t[4 * 256 + Int(lo >> 24)]
                    ^ t[3 * 256 + Int(hi & 0xFF)] ^ t[2 * 256 + Int((hi >> 8) & 0xFF)]
                    ^ t[1 * 256 + Int((hi >> 16) & 0xFF)] ^ t[Int(hi >> 24)]
                i += 8
            }
            while i < n {
                c = t[Int((c ^ UInt32(base.load(fromByteOffset: i, as: UInt8.self))) & 0xFF)] ^ (c >> 8)
                i += 1
            }
        }
        return c
    }
}

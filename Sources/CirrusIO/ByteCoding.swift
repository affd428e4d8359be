// ByteCoding: the little-endian, varint and length-prefixed primitives of the log format.
//
// `ByteWriter` appends to a growable byte array; `ByteReader` reads a buffer with bounds checks
// and throws `CodecError` (with the offset) instead of trapping on damaged input.

/// Structural damage found while decoding a payload.
public struct CodecError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Offset within the payload.
    public var offset: Int
    /// What is wrong, e.g. `unexpected end of data` or `varint overflows 64 bits`.
    public var message: String
    /// An error at payload byte `offset`.
    public init(_ message: String, offset: Int) {
        self.message = message
        self.offset = offset
    }
    /// `<message> at payload byte <offset>`.
    public var description: String { "\(message) at payload byte \(offset)" }
}

/// Appends encoded primitives.
///
/// ```swift
/// var w = ByteWriter()
/// w.varint(300)            // AC 02
/// w.string("hé")           // 03 68 C3 A9
/// w.u32(1)                 // 01 00 00 00
/// w.bytes.count            // 10
/// ```
public struct ByteWriter: Sendable {
    /// The bytes written so far.
    public var bytes: [UInt8]

    /// An empty writer with room for `capacity` bytes.
    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Appends one byte.
    @inline(__always) public mutating func u8(_ v: UInt8) { bytes.append(v) }

    /// Appends 2 bytes, little-endian.
    public mutating func u16(_ v: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: v))
        bytes.append(UInt8(truncatingIfNeeded: v >> 8))
    }

    /// Appends 4 bytes, little-endian.
    public mutating func u32(_ v: UInt32) {
        for s in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt32(s))) }
    }

    /// Appends 8 bytes, little-endian.
    public mutating func u64(_ v: UInt64) {
        withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Appends the IEEE 754 bit pattern as 8 bytes, little-endian.
    public mutating func f64(_ v: Double) { u64(v.bitPattern) }

    /// Appends an unsigned LEB128 varint: 7 bits a byte, low bits first, 1 to 10 bytes.
    @inline(__always) public mutating func varint(_ v: UInt64) {
        var v = v
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    /// Appends a signed integer as a zigzag varint (0, -1, 1, -2, … become 0, 1, 2, 3, …).
    public mutating func zigzag(_ v: Int64) { varint(UInt64(bitPattern: (v << 1) ^ (v >> 63))) }

    /// Appends the string's UTF-8 bytes after their count (a varint).
    public mutating func string(_ s: String) {
        var s = s
        s.withUTF8 { p in
            varint(UInt64(p.count))
            bytes.append(contentsOf: p)
        }
    }

    /// Appends the bytes after their count (a varint).
    public mutating func byteString(_ b: [UInt8]) {
        varint(UInt64(b.count))
        bytes.append(contentsOf: b)
    }
}

/// Reads encoded primitives from a buffer, never past its end.
///
/// ```swift
/// let bytes: [UInt8] = [0xAC, 0x02, 0x03, 0x68, 0xC3, 0xA9]
/// try bytes.withUnsafeBytes { buffer in
///     var r = ByteReader(buffer)
///     _ = try r.varint()   // 300
///     _ = try r.string()   // "hé"
///     _ = try r.u8()       // throws CodecError: unexpected end of data at payload byte 6
/// }
/// ```
public struct ByteReader {
    /// The bytes being read.
    public let buffer: UnsafeRawBufferPointer
    /// The position of the next read.
    public var offset: Int

    /// A reader of `buffer` starting at `offset`.
    public init(_ buffer: UnsafeRawBufferPointer, offset: Int = 0) {
        self.buffer = buffer
        self.offset = offset
    }

    /// Bytes left after `offset`.
    public var remaining: Int { buffer.count - offset }
    /// Whether every byte has been read.
    public var isAtEnd: Bool { offset >= buffer.count }

    @inline(__always) func need(_ n: Int) throws(CodecError) {
        if n < 0 || buffer.count - offset < n { throw CodecError("unexpected end of data", offset: offset) }
    }

    /// Reads one byte; throws at the end of the buffer.
    @inline(__always) public mutating func u8() throws(CodecError) -> UInt8 {
        try need(1)
        let v = buffer[offset]
        offset += 1
        return v
    }

    /// Reads 2 bytes, little-endian.
    public mutating func u16() throws(CodecError) -> UInt16 {
        try need(2)
        let v = buffer.loadUnaligned(fromByteOffset: offset, as: UInt16.self)
        offset += 2
        return UInt16(littleEndian: v)
    }

    /// Reads 4 bytes, little-endian.
    public mutating func u32() throws(CodecError) -> UInt32 {
        try need(4)
        let v = buffer.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
        offset += 4
        return UInt32(littleEndian: v)
    }

    /// Reads 8 bytes, little-endian.
    public mutating func u64() throws(CodecError) -> UInt64 {
        try need(8)
        let v = buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
        offset += 8
        return UInt64(littleEndian: v)
    }

    /// Reads 8 bytes, little-endian, as an IEEE 754 bit pattern.
    public mutating func f64() throws(CodecError) -> Double { Double(bitPattern: try u64()) }

    /// Reads an unsigned LEB128 varint; throws when it runs past the end or overflows 64 bits.
    @inline(__always) public mutating func varint() throws(CodecError) -> UInt64 {
        // With eight bytes to read, a varint of up to eight bytes (values below 2^56: lengths,
        // counts, timestamps) is decoded from one load: its last byte is the first without the
        // continuation bit, and its 7-bit groups are packed by three shift-and-mask steps.
        if buffer.count - offset >= 8 {
            let w = UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            let stops = ~w & 0x8080_8080_8080_8080
            if stops != 0 {
                let n = stops.trailingZeroBitCount / 8 + 1
                offset += n
                var x = n == 8 ? w : w & ((1 << UInt64(8 * n)) - 1)
                x = (x & 0x007F_007F_007F_007F) | ((x & 0x7F00_7F00_7F00_7F00) >> 1)
                x = (x & 0x0000_3FFF_0000_3FFF) | ((x & 0x3FFF_0000_3FFF_0000) >> 2)
                return (x & 0x0000_0000_0FFF_FFFF) | ((x & 0x0FFF_FFFF_0000_0000) >> 4)
            }
        }
        return try varintByBytes()
    }

    /// `varint` a byte at a time: near the end of the buffer, and for nine- and ten-byte values.
    @inline(never)
    mutating func varintByBytes() throws(CodecError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < buffer.count else { throw CodecError("unexpected end of data in varint", offset: offset) }
            let b = buffer[offset]
            offset += 1
            if shift == 63 && b > 1 { throw CodecError("varint overflows 64 bits", offset: offset - 1) }
            result |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return result }
            shift += 7
        }
    }

    /// Reads a zigzag varint as a signed integer.
    @inline(__always) public mutating func zigzag() throws(CodecError) -> Int64 {
        let u = try varint()
        return Int64(bitPattern: (u >> 1) ^ (0 &- (u & 1)))
    }

    /// A length that must fit in the rest of the buffer.
    @inline(__always) public mutating func length() throws(CodecError) -> Int {
        let at = offset
        let n = try varint()
        guard n <= UInt64(remaining) else { throw CodecError("length \(n) runs past the end", offset: at) }
        return Int(n)
    }

    /// Reads a length-prefixed string; throws when the length runs past the end or the bytes are not UTF-8.
    public mutating func string() throws(CodecError) -> String {
        let n = try length()
        let start = offset
        offset += n
        let raw = UnsafeRawBufferPointer(rebasing: buffer[start..<start + n])
        let slice = raw.bindMemoryToUTF8()
        // `String(decoding:)` is specialized and fast (the generic `String(validating:)` costs a
        // metadata lookup per call); it repairs invalid UTF-8, so a result whose bytes differ
        // from the input means the input was invalid.
        let s = String(decoding: slice, as: UTF8.self)
        guard Self.isASCII(raw) || s.utf8.elementsEqual(slice) else {
            throw CodecError("invalid UTF-8 in string", offset: start)
        }
        return s
    }

    /// Whether every byte is below 0x80, eight at a time (a byte loop was a tenth of decoding
    /// a string).
    @inline(__always)
    static func isASCII(_ p: UnsafeRawBufferPointer) -> Bool {
        var acc: UInt64 = 0
        var i = 0
        let n = p.count
        while i + 8 <= n {
            acc |= p.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i += 8
        }
        while i < n {
            acc |= UInt64(p[i])
            i += 1
        }
        return acc & 0x8080_8080_8080_8080 == 0
    }

    /// Moves `n` bytes on.
    public mutating func skip(_ n: Int) throws(CodecError) {
        try need(n)
        offset += n
    }

    /// Reads length-prefixed bytes; throws when the length runs past the end.
    public mutating func byteString() throws(CodecError) -> [UInt8] {
        let n = try length()
        let start = offset
        offset += n
        return Array(buffer[start..<start + n])
    }
}

extension UnsafeRawBufferPointer {
    fileprivate func bindMemoryToUTF8() -> UnsafeBufferPointer<UInt8> { assumingMemoryBound(to: UInt8.self) }
}

// SectionReader: bounds-checked little-endian reads from an index section inside a mapped data
// segment, and the error a damaged section raises. The bytes belong to the mapped file that
// `keepAlive` holds; views keep it alive as long as they are used.

/// An index section that cannot be read: which section, where, and why.
public struct IndexSectionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The name of the section.
    public var section: String
    /// Byte offset inside the section where the read failed.
    public var offset: Int
    /// What was wrong, e.g. a count or offset past the end of the section.
    public var reason: String
    /// An error for `section` at byte `offset`.
    public init(_ section: String, offset: Int, _ reason: String) {
        self.section = section
        self.offset = offset
        self.reason = reason
    }
    /// One line: section, offset and reason.
    public var description: String { "index section '\(section)' at byte \(offset): \(reason)" }
}

/// The bytes of one section and the object that keeps them mapped.
public struct SectionBytes: @unchecked Sendable {
    // @unchecked: the bytes are immutable (a named data segment is never written again) and stay
    // mapped while `keepAlive` lives, which every view holds.
    /// The section's bytes, little-endian, immutable while `keepAlive` lives.
    public let bytes: UnsafeRawBufferPointer
    /// The owner of the mapping (the data segment's file); held by every view of the section.
    public let keepAlive: AnyObject
    /// The section's name, used in ``IndexSectionError``.
    public let name: String

    /// The bytes of section `name`, mapped as long as `keepAlive` lives.
    public init(_ bytes: UnsafeRawBufferPointer, keepAlive: AnyObject, name: String) {
        self.bytes = bytes
        self.keepAlive = keepAlive
        self.name = name
    }

    var count: Int { bytes.count }

    @inline(__always) func u64(_ o: Int) -> UInt64 {
        UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: o, as: UInt64.self))
    }
    @inline(__always) func u32(_ o: Int) -> UInt32 {
        UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: o, as: UInt32.self))
    }
    @inline(__always) func f64(_ o: Int) -> Double { Double(bitPattern: u64(o)) }

    /// Checks the 8-byte magic and that `n` bytes of header are there.
    func header(_ magic: String, size n: Int) throws(IndexSectionError) {
        guard count >= n else {
            throw IndexSectionError(name, offset: 0, "\(count) bytes is shorter than its \(n)-byte header")
        }
        guard Array(bytes[0..<8]) == Array(magic.utf8) else {
            throw IndexSectionError(name, offset: 0, "bad magic (expected \(magic))")
        }
    }

    /// Checks that [offset, offset + length) lies inside the section.
    func within(_ offset: Int, _ length: Int, _ what: String) throws(IndexSectionError) {
        guard offset >= 0, length >= 0, offset <= count, length <= count - offset else {
            throw IndexSectionError(
                name, offset: offset, "\(what) (\(length) bytes at \(offset)) runs past the section's \(count) bytes")
        }
    }

    /// A count read from the section, bounded so that `count × size` fits in what is left.
    func boundedCount(_ raw: UInt64, size: Int, at o: Int) throws(IndexSectionError) -> Int {
        guard raw <= UInt64(count / max(size, 1)) else {
            throw IndexSectionError(name, offset: o, "count \(raw) cannot fit")
        }
        return Int(raw)
    }
}

/// Little-endian appends for section writers.
struct SectionWriter {
    var bytes: [UInt8] = []
    mutating func u64(_ v: UInt64) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func f64(_ v: Double) { u64(v.bitPattern) }
    mutating func magic(_ m: String) { bytes += Array(m.utf8) }
    mutating func pad8() { while bytes.count % 8 != 0 { bytes.append(0) } }
}

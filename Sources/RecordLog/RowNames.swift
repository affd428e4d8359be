// RowNames: the `rownames` section of a table's rows segment — the record type and the field names
// of a sample of its rows, from which a reader makes the layer's name table
// (`RecordCodec.NameTable`: decoded records share those names' strings instead of making one per
// field). Format (docs/storage-format.md, "rownames"):
//
//   header = "CRNAME01" u32 name-count u32 0                                      never change
//   type   = u16 length, UTF-8 bytes
//   names  = per name, in ascending byte order: u16 length, UTF-8 bytes
//
// Why: without it a reader sampled nine rows spread over the section at open, a page fault and a
// walk of the record's header each — a sixth of a fresh process's open. The writer has the rows in
// hand: it walks rows 1, 2, 4, 8, … and every 1 024th, as they are added.
//
// A hint, never load-bearing: a name missing from the table is decoded as its own string. The
// section is optional (rows segments written before it existed are sampled at open, as before);
// one that does not parse is not used (the open reports it, and the rows are sampled instead).

import CirrusIO

/// A `rownames` section: its writer's accumulator and its reader.
public enum RowNames {
    static let magic: [UInt8] = Array("CRNAME01".utf8)  //                         never change
    static let headerSize = 16

    /// The type and names of the rows sampled so far.
    struct Writer {
        var recordType: String?
        var names = Set<String>()

        /// Whether the writer samples row `i` (rows 0, 1, 2, 4, 8, … and every 1 024th).
        static func samples(_ i: Int) -> Bool { i & (i &- 1) == 0 || i % 1024 == 0 }

        /// Adds row `i` when it is sampled.
        mutating func add(_ i: Int, _ payload: UnsafeRawBufferPointer) {
            if Self.samples(i) { add(payload) }
        }

        /// Adds a row's type and names; a payload whose header does not walk is left out (a
        /// hint: reads of that row report it).
        mutating func add(_ payload: UnsafeRawBufferPointer) {
            guard let (t, found) = try? RecordCodec.typeAndFieldNames(payload) else { return }
            recordType = recordType ?? t
            names.formUnion(found)
        }

        /// The name table of the rows added; nil when none was.
        var table: RecordCodec.NameTable? { recordType.map { RecordCodec.NameTable(names: names, recordType: $0) } }

        /// The section's bytes; nil when no row was sampled (no rows, or none walked).
        func encoded() -> [UInt8]? {
            // Names too long for their length field are left out (decoded as their own strings).
            guard let recordType, recordType.utf8.count <= UInt16.max else { return nil }
            var w = ByteWriter(capacity: 64)
            w.bytes += RowNames.magic
            let kept = names.filter { $0.utf8.count <= UInt16.max }
            w.u32(UInt32(kept.count))
            w.u32(0)
            for s in [recordType] + kept.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                let b = Array(s.utf8)
                w.u16(UInt16(b.count))
                w.bytes += b
            }
            return w.bytes
        }
    }

    /// The type and names of a `rownames` section; throws `bad(reason)` when it does not parse
    /// (a short header, a count or length past its end, a string that is not UTF-8, bytes left
    /// over, names out of order).
    static func read(
        _ b: UnsafeRawBufferPointer, bad: (String) -> LogError
    ) throws(LogError) -> (recordType: String, names: Set<String>) {
        guard b.count >= headerSize, Array(b[0..<8]) == magic else { throw bad("bad header") }
        let n = Int(UInt32(littleEndian: b.loadUnaligned(fromByteOffset: 8, as: UInt32.self)))
        guard n <= (b.count - headerSize) / 2 else { throw bad("\(n) names cannot fit in \(b.count) bytes") }
        var at = headerSize
        var strings: [String] = []
        strings.reserveCapacity(n + 1)
        var last: UnsafeRawBufferPointer?
        for k in 0...n {
            guard at + 2 <= b.count else { throw bad("name \(k) runs past the section") }
            let len = Int(UInt16(littleEndian: b.loadUnaligned(fromByteOffset: at, as: UInt16.self)))
            guard len <= b.count - at - 2 else { throw bad("name \(k) runs past the section") }
            let s = UnsafeRawBufferPointer(rebasing: b[(at + 2)..<(at + 2 + len)])
            guard ByteReader.isValidUTF8(s) else { throw bad("name \(k) is not UTF-8") }
            if k > 1, let l = last, !l.lexicographicallyPrecedes(s) { throw bad("name \(k) is out of order") }
            if k > 0 { last = s }
            strings.append(String(decoding: s, as: UTF8.self))
            at += 2 + len
        }
        guard at == b.count else { throw bad("\(b.count - at) bytes follow the names") }
        return (strings[0], Set(strings.dropFirst()))
    }
}

// The record codec's name table: a data segment's field names made once, so decoding its rows
// reads names by comparison instead of making a string per field (RecordCodec.swift has the
// format; this file the table and the small readers that lean on it).

import RecordModel

extension RecordCodec {
    /// The field names (and the record type) of one data segment's rows, made once: decoding a
    /// row takes its names from here instead of making and validating a string per field, and
    /// when they come in the table's order the fields are known to be sorted (no comparisons).
    /// Rows of one type carry the same names, in the same (sorted) order; a name the table does
    /// not have is read as usual. A class: row sections are copied often, and carry it as one
    /// reference.
    public final class NameTable: @unchecked Sendable {
        // @unchecked: `bytes`, `starts` and `sorted` are written in `init` only, then read.
        /// How many names the table holds.
        let count: Int
        let recordType: String
        let typeUTF8: [UInt8]
        /// Every name's UTF-8 bytes, one after another, and where each name starts (at
        /// `names.count`: where the last ends) — plain memory, so a lookup retains nothing. An
        /// array per name retained and released its buffer at each comparison, several times per
        /// field read.
        private let bytes: UnsafeMutableRawBufferPointer
        private let starts: UnsafeMutableBufferPointer<Int>
        /// The names, ascending and unique, in plain memory too (see `Lookup`).
        private let sorted: UnsafeMutableBufferPointer<String>

        /// The names, ascending and unique.
        var names: [String] { Array(sorted.prefix(count)) }

        /// Every field name of `records` (a sample of a segment's rows: a field absent from one
        /// row is not missed by all) and the type.
        public convenience init(records: [Record], recordType: String) {
            var all = Set<String>()
            for r in records { all.formUnion(r.fields.keys) }
            self.init(names: all, recordType: recordType)
        }

        /// The table of `names` (those of a sample of a segment's rows) and the type.
        public init(names all: Set<String>, recordType: String) {
            let names = all.sorted()
            count = names.count
            self.recordType = recordType
            typeUTF8 = Array(recordType.utf8)
            let flat = names.flatMap { Array($0.utf8) }
            bytes = .allocate(byteCount: max(flat.count, 1), alignment: 8)
            bytes.copyBytes(from: flat)
            starts = .allocate(capacity: names.count + 1)
            var at = 0
            for (k, n) in names.enumerated() {
                starts[k] = at
                at += n.utf8.count
            }
            starts[names.count] = at
            sorted = .allocate(capacity: max(names.count, 1))
            _ = sorted.initialize(from: names)
        }

        deinit {
            bytes.deallocate()
            starts.deallocate()
            sorted.baseAddress?.deinitialize(count: count)
            sorted.deallocate()
        }

        /// The table as plain pointers, valid while the table lives. A decoder that read the
        /// table's arrays through the optional table retained and released the table and the
        /// array for every field (4 atomic operations a field); this is bound once per row.
        var lookup: Lookup {
            Lookup(
                bytes: UnsafeRawPointer(bytes.baseAddress!), starts: UnsafePointer(starts.baseAddress!),
                names: UnsafePointer(sorted.baseAddress!), count: count)
        }

        /// A name table's contents as plain pointers (see `NameTable.lookup`).
        struct Lookup {
            let bytes: UnsafeRawPointer
            let starts: UnsafePointer<Int>
            /// The names, ascending.
            let names: UnsafePointer<String>
            let count: Int

            /// The index of the name spelled `raw`, trying `hint` first; nil when the table lacks it.
            @inline(__always)
            func index(of raw: UnsafeRawBufferPointer, hint: Int) -> Int? {
                if hint < count, spells(hint, raw) { return hint }
                for k in 0..<count where k != hint && spells(k, raw) { return k }
                return nil
            }

            /// Whether name `k` is spelled `raw`.
            @inline(__always)
            func spells(_ k: Int, _ raw: UnsafeRawBufferPointer) -> Bool {
                let from = starts[k]
                let n = starts[k + 1] - from
                guard n == raw.count else { return false }
                return NameTable.equal(UnsafeRawBufferPointer(start: bytes + from, count: n), raw)
            }
        }

        /// Whether `a` spells `raw`.
        @inline(__always)
        static func equal(_ a: [UInt8], _ raw: UnsafeRawBufferPointer) -> Bool {
            guard a.count == raw.count else { return false }
            return a.withUnsafeBytes { equal($0, raw) }
        }

        /// Whether `x` and `raw` hold the same bytes: eight at a time, inline (names are short,
        /// and a `memcmp` call for each of a row's field names costs more than the comparison).
        @inline(__always)
        static func equal(_ x: UnsafeRawBufferPointer, _ raw: UnsafeRawBufferPointer) -> Bool {
            let n = x.count
            guard n == raw.count else { return false }
            var i = 0
            while i + 8 <= n {
                if x.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                    != raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                {
                    return false
                }
                i += 8
            }
            while i < n {
                if x[i] != raw[i] { return false }
                i += 1
            }
            return true
        }
    }

    /// Whether the bytes at the reader's offset repeat the ones from `start` to it, moving past
    /// them when they do.
    @inline(__always)
    static func repeats(_ r: inout ByteReader, from start: Int) -> Bool {
        let n = r.offset - start
        guard n > 0, r.remaining >= n,
            NameTable.equal(
                UnsafeRawBufferPointer(rebasing: r.buffer[start..<r.offset]),
                UnsafeRawBufferPointer(rebasing: r.buffer[r.offset..<r.offset + n]))
        else { return false }
        r.offset += n
        return true
    }

    /// Reads a length-prefixed string that is likely `known` (spelled `utf8`): that string when
    /// the bytes match, else the string read as usual.
    @inline(__always)
    static func string(_ r: inout ByteReader, likely known: String, _ utf8: [UInt8]) throws(CodecError) -> String {
        let at = r.offset
        let n = try r.length()
        if NameTable.equal(utf8, UnsafeRawBufferPointer(rebasing: r.buffer[r.offset..<r.offset + n])) {
            r.offset += n
            return known
        }
        r.offset = at
        return try r.string()
    }
}

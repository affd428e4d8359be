// StaticColumn: one scalar field's value for every row of a checkpoint layer, in row order
// (docs/index-segment-format.md, "column"):
//
//   header  = "CRCOL002" u64 row-count u64 string-count u64 0                    never change
//           | "CRCOL003" u64 row-count u64 string-count u64 heap-bytes u64 rows-in-row
//   tags    = u8 per row: 0 absent, 1 int64, 2 double, 3 date (ms), 4 string     never change
//             (CRCOL003 also: 5 string in the heap, 6 value held in the row only)
//   (zero padding to 8)
//   values  = u64 per row: the Int64, the Double's bits, the date's milliseconds, the string's
//             number in the dictionary; for 5, the string's offset in the heap << 16 | its length
//   offsets = u64 per dictionary string + 1: where each string starts in the bytes (relative)
//   bytes   = the dictionary's strings, UTF-8, concatenated
//   heap    = (CRCOL003) the heap strings, UTF-8, one copy per row that holds one
//
// Written beside the ordered index of every user field that holds int64, double or date values
// or strings (never a list), so a filter or a sort key on such a field reads 9 bytes of one
// dense column instead of decoding the row's record: a row's bytes are a cache miss or two
// away — and a value stored after a long list (a city's alternate names) many more — while the
// column is small enough to stay cached. The first `maxStrings` distinct strings of at most
// `maxHeapString` bytes are numbered in the dictionary (decoded once, when the column opens);
// later distinct ones are copied into the heap and made into strings when read (a city's name:
// high cardinality, short); longer strings are left in their rows (tag 6: the reader decodes
// that row instead), and a field whose rows are mostly left there gets no column. A column
// without tags 5 and 6 is written as CRCOL002, which readers before the heap read.
// Row `i` of the column is table row `start + i` of the layer. Sections written with the first
// version ("CRCOL001": numbers and dates, no dictionary) do not open: their rows are read from
// their bytes.

import CPrefetch
import RecordModel

/// The mapped values of one scalar field over one layer's rows.
struct StaticColumn: Sendable {
    static let magic = "CRCOL002"
    /// The version with heap strings and values held in the row (tags 5 and 6).
    static let heapMagic = "CRCOL003"
    static let headerSize = 32
    static let heapHeaderSize = 40
    /// At most this many distinct strings are numbered in a layer's dictionary.
    static let maxStrings = 4096
    /// A string longer than this (in UTF-8 bytes) is not copied into a column: its row holds it.
    static let maxHeapString = 128
    let s: SectionBytes
    let count: Int
    let valuesAt: Int
    /// The dictionary's strings, decoded when the column opens.
    let strings: ColumnStrings
    /// Where the heap starts, and its length.
    let heapAt: Int
    let heapCount: Int
    /// The rows whose value is held in the row only (tag 6).
    let inRowCount: Int

    init(_ s: SectionBytes) throws(IndexSectionError) {
        let heap = s.count >= 8 && Array(s.bytes[0..<8]) == Array(Self.heapMagic.utf8)
        let header = heap ? Self.heapHeaderSize : Self.headerSize
        try s.header(heap ? Self.heapMagic : Self.magic, size: header)
        self.s = s
        count = try s.boundedCount(s.u64(8), size: 9, at: 8)
        valuesAt = header + (count + 7) / 8 * 8
        try s.within(header, count, "tags")
        try s.within(valuesAt, 8 * count, "values")
        let n = try s.boundedCount(s.u64(16), size: 8, at: 16)
        guard n <= Self.maxStrings else {
            throw IndexSectionError(s.name, offset: 16, "\(n) dictionary strings, more than \(Self.maxStrings)")
        }
        let offsetsAt = valuesAt + 8 * count
        try s.within(offsetsAt, 8 * (n + 1), "dictionary offsets")
        let bytesAt = offsetsAt + 8 * (n + 1)
        var strings: [FieldValue] = []
        strings.reserveCapacity(n)
        for k in 0..<n {
            let from = Int(truncatingIfNeeded: s.u64(offsetsAt + 8 * k))
            let to = Int(truncatingIfNeeded: s.u64(offsetsAt + 8 * (k + 1)))
            guard from >= 0, from <= to, to <= s.count - bytesAt else {
                throw IndexSectionError(
                    s.name, offset: offsetsAt + 8 * k,
                    "dictionary string \(k) (bytes \(from)..<\(to)) lies outside the section")
            }
            let bytes = UnsafeRawBufferPointer(rebasing: s.bytes[(bytesAt + from)..<(bytesAt + to)])
            strings.append(.string(String(decoding: bytes, as: UTF8.self)))
        }
        self.strings = ColumnStrings(strings)
        let end = Int(truncatingIfNeeded: s.u64(offsetsAt + 8 * n))
        guard end >= 0, end <= s.count - bytesAt else {
            throw IndexSectionError(s.name, offset: offsetsAt + 8 * n, "the dictionary ends outside the section")
        }
        heapAt = bytesAt + end
        if heap {
            heapCount = try s.boundedCount(s.u64(24), size: 1, at: 24)
            try s.within(heapAt, heapCount, "heap")
            inRowCount = try s.boundedCount(s.u64(32), size: 1, at: 32)
            guard inRowCount <= count else {
                throw IndexSectionError(s.name, offset: 32, "\(inRowCount) rows held in their rows, of \(count)")
            }
        } else {
            heapCount = 0
            inRowCount = 0
        }
    }

    /// Where the column's tags, values and strings lie, for reads that do not touch this value
    /// (``ColumnReader``); nil only for a section without bytes, which never opens.
    var slot: ColumnSlot? {
        guard let base = s.bytes.baseAddress else { return nil }
        return ColumnSlot(
            tags: base + (valuesAt - (count + 7) / 8 * 8), words: base + valuesAt, count: count,
            strings: UnsafeBufferPointer(strings.values), heap: base + heapAt, heapCount: heapCount)
    }

    /// The section for `values` (row `i` of the layer at index `i`); nil when some value is not
    /// an int64, a double, a date or a string, or most strings are too long to be copied — that
    /// field gets no column.
    static func encode(_ values: [FieldValue?]) -> [UInt8]? {
        var b = ColumnBuilder()
        for v in values { b.add(v) }
        return b.encode()
    }
}

/// A column's values collected row by row (9 bytes a row, strings once in the dictionary or
/// copied into the heap), and joined part by part: ``StaticColumn/encode(_:)`` without holding
/// the values.
struct ColumnBuilder: Sendable {
    var tags: [UInt8] = []
    var words: [UInt64] = []
    var strings: [String] = []
    var dictionary: [String: Int] = [:]
    var heap: [UInt8] = []
    /// The rows whose value is held in the row only (tag 6).
    var inRow = 0
    /// Some value cannot be in a column: the field gets none (and nothing more is kept).
    var failed = false

    /// Adds the next row's value.
    mutating func add(_ v: FieldValue?) {
        guard !failed else { return }
        switch v {
        case nil: put(0, 0)
        case .int64(let n)?: put(1, UInt64(bitPattern: n))
        case .double(let d)?: put(2, d.bitPattern)
        case .date(let t)?: put(3, UInt64(bitPattern: t.millisecondsSince1970))
        case .string(let text)?: place(text)
        default: fail()
        }
    }

    /// Appends the next part's rows: its dictionary's strings numbered into this dictionary (or
    /// copied into the heap where this one is full), its heap strings placed as new ones — the
    /// bytes ``add(_:)`` would have made of the same rows.
    mutating func append(_ next: ColumnBuilder) {
        guard !failed else { return }
        guard !next.failed else { return fail() }
        var renumber: [Int?] = []  // nil: copied into the heap
        renumber.reserveCapacity(next.strings.count)
        for text in next.strings { renumber.append(number(text)) }
        tags.reserveCapacity(tags.count + next.tags.count)
        words.reserveCapacity(words.count + next.words.count)
        for (tag, word) in zip(next.tags, next.words) {
            switch tag {
            case 4:
                let k = Int(word)
                if let n = renumber[k] { put(4, UInt64(n)) } else { putHeap(next.strings[k].utf8) }
            case 5:
                let (from, n) = (Int(word >> 16), Int(word & 0xFFFF))
                place(String(decoding: next.heap[from..<from + n], as: UTF8.self))
            default: put(tag, word)
            }
        }
        inRow += next.inRow
    }

    /// The section; nil when some value could not be in a column, or more than half of the rows
    /// with a value hold it in the row only.
    func encode() -> [UInt8]? {
        guard !failed else { return nil }
        let present = tags.reduce(0) { $0 + ($1 == 0 ? 0 : 1) }
        guard inRow * 2 <= present else { return nil }
        let heapVersion = inRow > 0 || !heap.isEmpty
        var w = SectionWriter()
        w.magic(heapVersion ? StaticColumn.heapMagic : StaticColumn.magic)
        w.u64(UInt64(tags.count))
        w.u64(UInt64(strings.count))
        if heapVersion {
            w.u64(UInt64(heap.count))
            w.u64(UInt64(inRow))
        } else {
            w.u64(0)
        }
        w.bytes += tags
        w.pad8()
        for word in words { w.u64(word) }
        var offset: UInt64 = 0
        w.u64(0)
        for text in strings {
            offset += UInt64(text.utf8.count)
            w.u64(offset)
        }
        for text in strings { w.bytes.append(contentsOf: text.utf8) }
        w.bytes += heap
        return w.bytes
    }

    private mutating func put(_ tag: UInt8, _ word: UInt64) {
        tags.append(tag)
        words.append(word)
    }

    /// Adds a string: its dictionary number, else its bytes in the heap, else (too long) a row
    /// that holds its value in the row.
    private mutating func place(_ text: String) {
        if let k = number(text) {
            put(4, UInt64(k))
        } else {
            putHeap(text.utf8)
        }
    }

    /// Adds a string copied into the heap, or held in the row when too long.
    private mutating func putHeap(_ utf8: String.UTF8View) {
        guard utf8.count <= StaticColumn.maxHeapString else {
            inRow += 1
            return put(6, 0)
        }
        put(5, UInt64(heap.count) << 16 | UInt64(utf8.count))
        heap.append(contentsOf: utf8)
    }

    /// The dictionary number of `text`, added when new; nil when it is too long, the dictionary
    /// is full, or it holds another spelling of it: Swift strings compare by canonical
    /// equivalence, a column keeps bytes, so a second spelling of one text (composed and
    /// decomposed accents) is copied into the heap instead.
    private mutating func number(_ text: String) -> Int? {
        if let k = dictionary[text] { return strings[k].utf8.elementsEqual(text.utf8) ? k : nil }
        guard strings.count < StaticColumn.maxStrings, text.utf8.count <= StaticColumn.maxHeapString else {
            return nil
        }
        dictionary[text] = strings.count
        strings.append(text)
        return strings.count - 1
    }

    private mutating func fail() {
        self = ColumnBuilder()
        failed = true
    }
}

/// One selection's values read from the base layers' columns (``RecordIndexes/columnReader(_:)``):
/// the selected fields' columns are found once, so a read per row is a layer lookup and one
/// load per field — no name compared, no column copied or retained.
public struct ColumnReader: @unchecked Sendable {
    // @unchecked: `slots` point into `columns`' mapped sections and strings, which this value
    // holds and which never change.
    /// The columns `slots` point into (per column field, its column in each base layer), held
    /// so that they stay mapped.
    let columns: [(field: String, layers: [StaticColumn?])]
    /// Per base layer, `width` slots: the selected fields' columns in slot order; nil where the
    /// layer lacks one.
    let slots: [ColumnSlot?]
    /// The number of selected fields.
    let width: Int
    /// Where each base layer's rows start.
    let baseLayers: BaseLayers

    /// A reader of `selection` from `columns` (per field, its column in each of `baseLayers`);
    /// nil when some selected field has no entry (no column in any layer).
    init?(_ selection: FieldSelection, columns: [(field: String, layers: [StaticColumn?])], baseLayers: BaseLayers) {
        let width = selection.count
        let layerCount = baseLayers.starts.count
        var slots = [ColumnSlot?](repeating: nil, count: layerCount * width)
        for (j, name) in selection.names.enumerated() {
            guard let k = columns.firstIndex(where: { $0.field == name }) else { return nil }
            for (l, c) in columns[k].layers.prefix(layerCount).enumerated() { slots[l * width + j] = c?.slot }
        }
        self.columns = columns
        self.slots = slots
        self.width = width
        self.baseLayers = baseLayers
    }

    /// Fills `out` with base row `row`'s selected values (slot order, nil where absent); false
    /// (and `out` unspecified) when the row's layer lacks a selected column, a selected value is
    /// held in the row only, or `row` is past every layer. The caller has checked that the row is a live base row whose record was not
    /// updated in place (its columns hold the layer's values).
    public func values(_ row: Int, into out: inout [FieldValue?]) -> Bool {
        guard let l = layer(of: row) else { return false }
        let i = row - baseLayers.starts[l]
        out.removeAll(keepingCapacity: true)
        for k in (l * width)..<(l * width + width) {
            guard let c = slots[k], c.read(i, into: &out) else { return false }
        }
        return true
    }

    /// Starts loading base row `row`'s slots of the selected columns (a hint; nothing for
    /// columns its layer lacks).
    public func prefetch(_ row: Int) {
        guard let l = layer(of: row) else { return }
        let i = row - baseLayers.starts[l]
        for k in (l * width)..<(l * width + width) { slots[k]?.prefetch(i) }
    }

    /// The layer of `row`; with one layer, no search.
    @inline(__always) func layer(of row: Int) -> Int? {
        if baseLayers.starts.count == 1 { return row >= 0 && row < baseLayers.rowCount ? 0 : nil }
        return baseLayers.layer(of: row)
    }
}

/// A column's dictionary strings in memory the column owns: a ``ColumnReader`` reads them
/// through a pointer, with no array retained per value.
final class ColumnStrings: @unchecked Sendable {
    // @unchecked: written once, in init; immutable after.
    let values: UnsafeMutableBufferPointer<FieldValue>

    init(_ strings: [FieldValue]) {
        values = .allocate(capacity: strings.count)
        _ = values.initialize(from: strings)
    }

    deinit {
        values.deinitialize()
        values.deallocate()
    }
}

/// Where one layer's column of one field lies (``ColumnReader``): plain pointers into the mapped
/// section and the column's strings, valid while the reader holds the column.
struct ColumnSlot {
    let tags: UnsafeRawPointer
    let words: UnsafeRawPointer
    let count: Int
    let strings: UnsafeBufferPointer<FieldValue>
    let heap: UnsafeRawPointer
    let heapCount: Int

    /// Appends the value of row `i` (counted from the layer's start) to `out`: nil when the row
    /// has none or `i` is outside the column. False, and nothing appended, when the column does
    /// not hold the value: the row holds it only (tag 6), or a heap string lies outside the heap.
    @inline(__always) func read(_ i: Int, into out: inout [FieldValue?]) -> Bool {
        guard i >= 0, i < count else {
            out.append(nil)
            return true
        }
        let bits = UInt64(littleEndian: words.loadUnaligned(fromByteOffset: 8 * i, as: UInt64.self))
        switch tags.load(fromByteOffset: i, as: UInt8.self) {
        case 1: out.append(.int64(Int64(bitPattern: bits)))
        case 2: out.append(.double(Double(bitPattern: bits)))
        case 3: out.append(.date(Timestamp(millisecondsSince1970: Int64(bitPattern: bits))))
        case 4: out.append(bits < UInt64(strings.count) ? strings[Int(bits)] : nil)
        case 5:
            let from = Int(truncatingIfNeeded: bits >> 16)
            let n = Int(truncatingIfNeeded: bits & 0xFFFF)
            guard from <= heapCount - n else { return false }
            out.append(.string(String(decoding: UnsafeRawBufferPointer(start: heap + from, count: n), as: UTF8.self)))
        case 6: return false
        default: out.append(nil)
        }
        return true
    }

    /// The value of row `i` when the column holds it (``read(_:into:)``); nil otherwise.
    func value(_ i: Int) -> FieldValue? {
        var out: [FieldValue?] = []
        return read(i, into: &out) ? out[0] : nil
    }

    /// Starts loading row `i`'s tag and value (a hint; outside the column: nothing).
    @inline(__always) func prefetch(_ i: Int) {
        guard i >= 0, i < count else { return }
        cirrus_prefetch(tags + i)
        cirrus_prefetch(words + 8 * i)
    }
}

// StaticColumn: one scalar field's value for every row of a checkpoint layer, in row order
// (docs/index-segment-format.md, "column"):
//
//   header  = "CRCOL002" u64 row-count u64 string-count u64 0                    never change
//   tags    = u8 per row: 0 absent, 1 int64, 2 double, 3 date (ms), 4 string     never change
//   (zero padding to 8)
//   values  = u64 per row: the Int64, the Double's bits, the date's milliseconds, the string's
//             number in the dictionary
//   offsets = u64 per dictionary string + 1: where each string starts in the bytes (relative)
//   bytes   = the dictionary's strings, UTF-8, concatenated
//
// Written beside the ordered index of every user field that holds int64, double or date values,
// or strings with at most `maxStrings` distinct values in the layer (never a list), so a filter
// or a sort key on such a field reads 9 bytes of one dense column instead of decoding the row's
// record: a row's bytes are a cache miss or two away, the column is small enough to stay
// cached, and a string is an index into the dictionary (decoded once, when the column opens).
// Row `i` of the column is table row `start + i` of the layer. Sections written with the first
// version ("CRCOL001": numbers and dates, no dictionary) do not open: their rows are read from
// their bytes.

import CPrefetch
import RecordModel

/// The mapped values of one scalar field over one layer's rows.
struct StaticColumn: Sendable {
    static let magic = "CRCOL002"
    static let headerSize = 32
    /// Strings get a column only when a layer holds at most this many distinct values.
    static let maxStrings = 4096
    let s: SectionBytes
    let count: Int
    let valuesAt: Int
    /// The dictionary's strings, decoded when the column opens.
    let strings: ColumnStrings

    init(_ s: SectionBytes) throws(IndexSectionError) {
        try s.header(Self.magic, size: Self.headerSize)
        self.s = s
        count = try s.boundedCount(s.u64(8), size: 9, at: 8)
        valuesAt = Self.headerSize + (count + 7) / 8 * 8
        try s.within(Self.headerSize, count, "tags")
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
    }

    /// Where the column's tags, values and strings lie, for reads that do not touch this value
    /// (``ColumnReader``); nil only for a section without bytes, which never opens.
    var slot: ColumnSlot? {
        guard let base = s.bytes.baseAddress else { return nil }
        return ColumnSlot(
            tags: base + Self.headerSize, words: base + valuesAt, count: count,
            strings: UnsafeBufferPointer(strings.values))
    }

    /// The section for `values` (row `i` of the layer at index `i`); nil when some value is not
    /// an int64, a double, a date or a string, or there are more than `maxStrings` distinct
    /// strings — that field gets no column.
    static func encode(_ values: [FieldValue?]) -> [UInt8]? {
        var b = ColumnBuilder()
        for v in values { b.add(v) }
        return b.encode()
    }
}

/// A column's values collected row by row (9 bytes a row, strings once in the dictionary), and
/// joined part by part: ``StaticColumn/encode(_:)`` without holding the values.
struct ColumnBuilder: Sendable {
    var tags: [UInt8] = []
    var words: [UInt64] = []
    var strings: [String] = []
    var dictionary: [String: Int] = [:]
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
        case .string(let text)?:
            if let k = number(text) { put(4, UInt64(k)) } else { fail() }
        default: fail()
        }
    }

    /// Appends the next part's rows (its strings renumbered into this dictionary).
    mutating func append(_ next: ColumnBuilder) {
        guard !failed else { return }
        guard !next.failed else { return fail() }
        var renumber: [Int] = []
        renumber.reserveCapacity(next.strings.count)
        for text in next.strings {
            guard let k = number(text) else { return fail() }
            renumber.append(k)
        }
        tags += next.tags
        words.reserveCapacity(words.count + next.words.count)
        for (tag, word) in zip(next.tags, next.words) { words.append(tag == 4 ? UInt64(renumber[Int(word)]) : word) }
    }

    /// The section; nil when some value could not be in a column.
    func encode() -> [UInt8]? {
        guard !failed else { return nil }
        var w = SectionWriter()
        w.magic(StaticColumn.magic)
        w.u64(UInt64(tags.count))
        w.u64(UInt64(strings.count))
        w.u64(0)
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
        return w.bytes
    }

    private mutating func put(_ tag: UInt8, _ word: UInt64) {
        tags.append(tag)
        words.append(word)
    }

    /// The dictionary number of `text`, added when new; nil when the dictionary is full, or
    /// holds another spelling of it: Swift strings compare by canonical equivalence, a column
    /// keeps bytes, so two spellings of one text (composed and decomposed accents) get no column.
    private mutating func number(_ text: String) -> Int? {
        if let k = dictionary[text] { return strings[k].utf8.elementsEqual(text.utf8) ? k : nil }
        guard strings.count < StaticColumn.maxStrings else { return nil }
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
    /// (and `out` unspecified) when the row's layer lacks a selected column or `row` is past
    /// every layer. The caller has checked that the row is a live base row whose record was not
    /// updated in place (its columns hold the layer's values).
    public func values(_ row: Int, into out: inout [FieldValue?]) -> Bool {
        guard let l = layer(of: row) else { return false }
        let i = row - baseLayers.starts[l]
        out.removeAll(keepingCapacity: true)
        for k in (l * width)..<(l * width + width) {
            guard let c = slots[k] else { return false }
            out.append(c.value(i))
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

    /// The value of row `i` (counted from the layer's start); nil when the row has none or `i`
    /// is outside the column.
    @inline(__always) func value(_ i: Int) -> FieldValue? {
        guard i >= 0, i < count else { return nil }
        let bits = UInt64(littleEndian: words.loadUnaligned(fromByteOffset: 8 * i, as: UInt64.self))
        switch tags.load(fromByteOffset: i, as: UInt8.self) {
        case 1: return .int64(Int64(bitPattern: bits))
        case 2: return .double(Double(bitPattern: bits))
        case 3: return .date(Timestamp(millisecondsSince1970: Int64(bitPattern: bits)))
        case 4: return bits < UInt64(strings.count) ? strings[Int(bits)] : nil
        default: return nil
        }
    }

    /// Starts loading row `i`'s tag and value (a hint; outside the column: nothing).
    @inline(__always) func prefetch(_ i: Int) {
        guard i >= 0, i < count else { return }
        cirrus_prefetch(tags + i)
        cirrus_prefetch(words + 8 * i)
    }
}

// StaticColumn: one scalar field's value for every row of a checkpoint layer, in row order
// (docs/index-segment-format.md, "column"):
//
//   header = "CRCOL001" u64 row-count                                            never change
//   tags   = u8 per row: 0 absent, 1 int64, 2 double, 3 date (ms)                never change
//   (zero padding to 8)
//   values = u64 per row: the Int64, the Double's bits, the date's milliseconds
//
// Written beside the ordered index of every user field that holds int64, double or date values
// (never a list), so a filter or a sort key on such a field reads 9 bytes of one dense column
// instead of decoding the row's record: a row's bytes are a cache miss or two away, the column
// is small enough to stay cached. Row `i` of the column is table row `start + i` of the layer.

import RecordModel

/// The mapped values of one scalar field over one layer's rows.
struct StaticColumn: Sendable {
    static let magic = "CRCOL001"
    static let headerSize = 16
    let s: SectionBytes
    let count: Int
    let valuesAt: Int

    init(_ s: SectionBytes) throws(IndexSectionError) {
        try s.header(Self.magic, size: Self.headerSize)
        self.s = s
        count = try s.boundedCount(s.u64(8), size: 9, at: 8)
        valuesAt = Self.headerSize + (count + 7) / 8 * 8
        try s.within(Self.headerSize, count, "tags")
        try s.within(valuesAt, 8 * count, "values")
    }

    /// The value of row `i` (counted from the layer's start); nil when the row has none or `i`
    /// is outside the column.
    @inline(__always) func value(_ i: Int) -> FieldValue? {
        guard i >= 0, i < count else { return nil }
        let bits = s.u64(valuesAt + 8 * i)
        switch s.bytes.load(fromByteOffset: Self.headerSize + i, as: UInt8.self) {
        case 1: return .int64(Int64(bitPattern: bits))
        case 2: return .double(Double(bitPattern: bits))
        case 3: return .date(Timestamp(millisecondsSince1970: Int64(bitPattern: bits)))
        default: return nil
        }
    }

    /// The section for `values` (row `i` of the layer at index `i`); nil when some value is not
    /// an int64, a double or a date — that field gets no column.
    static func encode(_ values: [FieldValue?]) -> [UInt8]? {
        var tags = [UInt8](repeating: 0, count: values.count)
        var words = SectionWriter()
        for (i, v) in values.enumerated() {
            switch v {
            case nil: words.u64(0)
            case .int64(let n)?:
                tags[i] = 1
                words.u64(UInt64(bitPattern: n))
            case .double(let d)?:
                tags[i] = 2
                words.u64(d.bitPattern)
            case .date(let t)?:
                tags[i] = 3
                words.u64(UInt64(bitPattern: t.millisecondsSince1970))
            default: return nil
            }
        }
        var w = SectionWriter()
        w.magic(magic)
        w.u64(UInt64(values.count))
        w.bytes += tags
        w.pad8()
        w.bytes += words.bytes
        return w.bytes
    }
}

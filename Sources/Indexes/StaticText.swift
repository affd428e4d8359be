// StaticText: the text index of a checkpoint's base rows in static, mapped form
// (docs/index-segment-format.md, "text").
//
//   header   = "CRTXT001" u64 term-count u64 posting-count u64 postings-offset   never change
//   terms    = u64 term-offset[term-count + 1]     (into the term bytes)
//   starts   = u64 posting-start[term-count + 1]   (into the postings)
//   bytes    = the tokens' UTF-8, sorted as bytes, concatenated
//   postings = u32 row ids, each term's run ascending, at postings-offset (4-aligned)
//
// A token is found by binary search over the sorted terms; its run of row ids is its posting
// (document frequency = run length; binary search on the run is the skip data). TextIndex merges
// it with the delta's posting and drops removed base rows.

/// The static postings of a table's base rows.
struct StaticText: Sendable {
    static let magic = "CRTXT001"
    static let headerSize = 32
    let s: SectionBytes
    let terms: Int
    let postingsAt: Int
    let postingCount: Int
    var bytesAt: Int { Self.headerSize + 16 * (terms + 1) }

    init(_ s: SectionBytes) throws(IndexSectionError) {
        try s.header(Self.magic, size: Self.headerSize)
        self.s = s
        terms = try s.boundedCount(s.u64(8), size: 16, at: 8)
        postingCount = try s.boundedCount(s.u64(16), size: 4, at: 16)
        postingsAt = Int(truncatingIfNeeded: s.u64(24))
        try s.within(Self.headerSize, 16 * (terms + 1), "term tables")
        try s.within(postingsAt, 4 * postingCount, "postings")
        try s.within(bytesAt, Int(truncatingIfNeeded: s.u64(Self.headerSize + 8 * terms)), "term bytes")
    }

    @inline(__always) func termOffset(_ i: Int) -> Int { Int(truncatingIfNeeded: s.u64(Self.headerSize + 8 * i)) }
    @inline(__always) func start(_ i: Int) -> Int {
        Int(truncatingIfNeeded: s.u64(Self.headerSize + 8 * (terms + 1) + 8 * i))
    }

    /// Compares term `i` with `token` as bytes.
    func compare(_ i: Int, _ token: UnsafeRawBufferPointer) -> Int {
        let a = bytesAt + termOffset(i)
        let b = bytesAt + termOffset(i + 1)
        guard a >= bytesAt, a <= b, b <= s.count else { return -1 }
        let n = min(b - a, token.count)
        for j in 0..<n {
            let x = s.bytes[a + j], y = token[j]
            if x != y { return x < y ? -1 : 1 }
        }
        return (b - a) == token.count ? 0 : ((b - a) < token.count ? -1 : 1)
    }

    /// The term index of `token`, nil when absent.
    func find(_ token: String) -> Int? {
        var t = token
        return t.withUTF8 { u in
            let p = UnsafeRawBufferPointer(u)
            var lo = 0
            var hi = terms
            while lo < hi {
                let m = (lo + hi) >> 1
                if compare(m, p) < 0 { lo = m + 1 } else { hi = m }
            }
            return lo < terms && compare(lo, p) == 0 ? lo : nil
        }
    }

    /// The rows of term `i` (bounded by the section).
    func posting(_ i: Int) -> [RowID] {
        let a = start(i)
        let b = start(i + 1)
        guard a >= 0, a <= b, b <= postingCount else { return [] }
        var out: [RowID] = []
        out.reserveCapacity(b - a)
        for j in a..<b { out.append(s.u32(postingsAt + 4 * j)) }
        return out
    }

    /// Document frequency of term `i`.
    func frequency(_ i: Int) -> Int { max(0, start(i + 1) - start(i)) }

    /// The section from (row, searchable strings), in any order.
    static func encode<S: Sequence>(rows: S, isCancelled: () -> Bool = { false }) -> [UInt8]
    where S.Element == (RowID, [String]) {
        var postings: [String: [RowID]] = [:]
        var read = 0
        var ordered = true
        var previous: RowID?
        for (row, texts) in rows {
            read &+= 1
            if read & 1023 == 0, isCancelled() { return [] }  // the caller sees the cancellation too
            if let p = previous, row <= p { ordered = false }
            previous = row
            for text in texts { post(text, row: row, into: &postings) }
        }
        return encode(postings: postings, ordered: ordered)
    }

    /// Posts `text`'s tokens for `row`. A token repeated in the row's texts is posted once when
    /// rows come in ascending order (its list already ends with the row); otherwise `encode`
    /// sorts and deduplicates.
    @inline(__always)
    static func post(_ text: String, row: RowID, into postings: inout [String: [RowID]]) {
        TextTokenizer.forEachToken(text) { t in postings[t, default: []].appendUnlessLast(row) }
    }

    /// The section from each token's rows — ascending with no repeat when `ordered`, in any
    /// order otherwise.
    ///
    /// Each token's rows are released as soon as they are written (the postings are taken, not
    /// copied): at 10M rows the postings and the section are each hundreds of MB, and are not
    /// held whole at once.
    static func encode(postings: consuming [String: [RowID]], ordered: Bool) -> [UInt8] {
        var terms = postings.map { (token: $0.key, rows: $0.value) }
        postings = [:]
        if !ordered {
            for i in terms.indices { terms[i].rows = Array(Set(terms[i].rows)).sorted() }
        }
        terms.sort { a, b in a.token.utf8.lexicographicallyPrecedes(b.token.utf8) }
        let total = terms.reduce(0) { $0 + $1.rows.count }
        let termBytes = terms.reduce(0) { $0 + $1.token.utf8.count }
        let postingsAt = (headerSize + 16 * (terms.count + 1) + termBytes + 3) & ~3
        var w = SectionWriter()
        w.bytes.reserveCapacity(postingsAt + 4 * total)
        w.magic(magic)
        w.u64(UInt64(terms.count))
        w.u64(UInt64(total))
        w.u64(UInt64(postingsAt))
        var off = 0
        for t in terms {
            w.u64(UInt64(off))
            off += t.token.utf8.count
        }
        w.u64(UInt64(off))
        var start = 0
        for t in terms {
            w.u64(UInt64(start))
            start += t.rows.count
        }
        w.u64(UInt64(start))
        for t in terms { w.bytes.append(contentsOf: t.token.utf8) }
        while w.bytes.count < postingsAt { w.bytes.append(0) }
        for i in terms.indices {
            for r in terms[i].rows { w.u32(r) }
            terms[i].rows = []
        }
        return w.bytes
    }
}

extension Array where Element == RowID {
    /// Appends `row` unless it is already the last element.
    @inline(__always)
    mutating func appendUnlessLast(_ row: RowID) {
        if last != row { append(row) }
    }
}

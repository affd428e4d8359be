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

import Foundation
import RecordModel

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
    /// copied).
    static func encode(postings: consuming [String: [RowID]], ordered: Bool) -> [UInt8] {
        var terms = postings.map { (token: $0.key, rows: $0.value) }
        postings = [:]
        if !ordered {
            for i in terms.indices { terms[i].rows = Array(Set(terms[i].rows)).sorted() }
        }
        terms.sort { a, b in a.token.utf8.lexicographicallyPrecedes(b.token.utf8) }
        var w = header(terms.map { ($0.token, $0.rows.count) })
        for i in terms.indices {
            for r in terms[i].rows { w.u32(r) }
            terms[i].rows = []
        }
        return w.bytes
    }

    /// The section up to its postings, for `terms` sorted as bytes with their row counts; its
    /// capacity is the whole section's.
    static func header(_ terms: [(token: String, count: Int)]) -> SectionWriter {
        let total = terms.reduce(0) { $0 + $1.count }
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
            start += t.count
        }
        w.u64(UInt64(start))
        for t in terms { w.bytes.append(contentsOf: t.token.utf8) }
        while w.bytes.count < postingsAt { w.bytes.append(0) }
        return w
    }

    /// The section of `fields`' tokens in consecutive `parts` of rows, built in two passes over
    /// them — each token's rows counted, then each part's rows written at their final places —
    /// so that it holds the section and the vocabulary, never a token's rows in an array of its
    /// own (at 10M rows those arrays held twice the section). Byte for byte
    /// ``encode(postings:ordered:)`` of the same rows. Nil when cancelled, or when some part's
    /// rows do not ascend (the caller then builds the section from postings).
    static func encode<S: Sequence>(
        parts: [S], fields: [String], isCancelled: @escaping @Sendable () -> Bool
    ) -> [UInt8]? where S.Element == (RowID, Record) {
        // Pass 1: each part's tokens, with their row counts (a row once).
        let counted = parts.mapOnAllCores { part in countTokens(part, fields: fields, isCancelled: isCancelled) }
        var counts: [[String: TokenCount]] = []
        var last: RowID?
        for c in counted {
            // Each part's rows ascend, and after the part before's.
            guard let c else { return nil }
            if let f = c.first {
                if let l = last, f <= l { return nil }
                last = c.last
            }
            counts.append(c.counts)
        }
        var totals: [String: Int] = [:]
        for c in counts { for (t, n) in c { totals[t, default: 0] += n.count } }
        let terms = totals.map { (token: $0.key, count: $0.value) }.sorted { a, b in
            a.token.utf8.lexicographicallyPrecedes(b.token.utf8)
        }
        totals = [:]
        var w = header(terms)
        let postingsAt = w.bytes.count
        // Where each part writes each token's next row: the token's start, after the rows of
        // the parts before it.
        var next = counts.map { _ in [String: Int]() }
        var at = 0
        for t in terms {
            for k in counts.indices {
                next[k][t.token] = at
                at += counts[k][t.token]?.count ?? 0
            }
        }
        w.bytes.append(contentsOf: repeatElement(0, count: 4 * at))
        // Pass 2: each part writes its rows, on its own core, into slots no other part writes.
        let done = w.bytes.withUnsafeMutableBytes { out -> Bool in
            nonisolated(unsafe) let out = out
            let filled = Array(zip(parts, next)).mapOnAllCores { (part, starts) -> Bool in
                var starts = starts
                var last: [String: RowID] = [:]
                var n = 0
                for (row, rec) in part {
                    n &+= 1
                    if n & 4095 == 0, isCancelled() { return false }
                    forEachToken(rec, fields) { t in
                        // Both passes read the same rows the same way: the slots are those counted
                        // (and never past the section, whatever happens).
                        guard last[t] != row, let i = starts[t], postingsAt + 4 * i + 4 <= out.count else { return }
                        last[t] = row
                        out.storeBytes(of: row.littleEndian, toByteOffset: postingsAt + 4 * i, as: RowID.self)
                        starts[t] = i + 1
                    }
                }
                return true
            }
            return filled.allSatisfy { $0 }
        }
        return done ? w.bytes : nil
    }

    /// A token's rows in one part while they are counted: how many, and the last (a row counts once).
    struct TokenCount {
        var count: Int
        var last: RowID
    }

    /// Each token of `fields` in `rows` with its row count, and the first and last rows; nil
    /// when cancelled or when the rows do not ascend.
    static func countTokens<S: Sequence>(
        _ rows: S, fields: [String], isCancelled: () -> Bool
    ) -> (counts: [String: TokenCount], first: RowID?, last: RowID?)? where S.Element == (RowID, Record) {
        var counts: [String: TokenCount] = [:]
        var first: RowID?
        var previous: RowID?
        var n = 0
        for (row, rec) in rows {
            n &+= 1
            if n & 4095 == 0, isCancelled() { return nil }
            if let p = previous, row <= p { return nil }
            if first == nil { first = row }
            previous = row
            forEachToken(rec, fields) { t in
                if let c = counts[t] {
                    if c.last != row { counts[t] = TokenCount(count: c.count + 1, last: row) }
                } else {
                    counts[t] = TokenCount(count: 1, last: row)
                }
            }
        }
        return (counts, first, previous)
    }

    /// Calls `body` with each token of the strings (and string lists) of `fields` in `rec`.
    static func forEachToken(_ rec: Record, _ fields: [String], _ body: (String) -> Void) {
        for f in fields {
            guard let v = rec.fields[f] else { continue }
            forEachElement(v) { e in
                if case .string(let s) = e { TextTokenizer.forEachToken(s, body) }
            }
        }
    }

}

extension Array where Element == RowID {
    /// Appends `row` unless it is already the last element.
    @inline(__always)
    mutating func appendUnlessLast(_ row: RowID) {
        if last != row { append(row) }
    }
}

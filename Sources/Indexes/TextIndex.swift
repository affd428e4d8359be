// TextIndex: an inverted index from tokens to posting lists of row ids (sorted, unique).
//
// Owns postings and the word queries over them: ALL (intersection, galloping from the shortest
// list) and ANY (k-way merge of per-word results). A query word that tokenizes to several tokens
// (an unspaced run's bigrams) requires all of them. Tokenization is TextTokenizer's.
//
// Storage: a dictionary token → term id (ids are never reused; a term whose posting empties keeps
// its id) and the postings by term id in a PagedArray. The index is a value type and a copy is a
// snapshot: after one, a write copies the page table and the 256-term page it touches plus the
// postings it edits; the dictionary is copied only when a new token appears (its values are plain
// integers and short tokens are stored inline, so even that copy is a flat one).
// It does not know which fields are SEARCHABLE: callers pass the strings (RecordIndexes does).

import RecordModel

/// An inverted index over tokens of a record's searchable strings.
///
/// ```swift
/// var text = TextIndex()
/// text.insert(row: 1, texts: ["Café de Flore"])
/// text.rows(matchingAll: ["cafe flore"])   // [1]
/// ```
public struct TextIndex: Sendable {
    /// Token → term id.
    var terms: [String: UInt32] = [:]
    /// Term id → row ids, ascending, unique.
    var postings = PagedArray<[RowID]>(fill: [], pageShift: 8)
    /// The checkpoint's postings, one static layer per base layer (rows `0..<baseCount`, row ids
    /// absolute), mapped; `terms`/`postings` then hold delta rows only. Removed base rows are in
    /// `removed` and, per token, in `removedCounts` (so document frequencies stay exact).
    /// StaticText.swift.
    var bases: [StaticText] = []
    var layers = BaseLayers()
    var baseCount: Int { layers.rowCount }
    var removed = RowBitmap()
    var removedCounts: [String: Int] = [:]
    /// The postings the base layers' dead rows had (the layers' `dead/` sections, mapped):
    /// subtracted from document frequencies; the rows themselves are in `removed`.
    var deadBases: [StaticText] = []

    /// Takes the base layers' dead rows out without decoding them (see OrderedIndex.setDead).
    mutating func setDead(rows: RowBitmap, postings: [StaticText]) {
        removed = rows
        deadBases = postings
    }

    /// An index over a checkpoint's static postings (`layers` says which rows each covers) plus
    /// an empty delta.
    init(bases: [StaticText], layers: BaseLayers) {
        self.bases = bases
        self.layers = layers
    }

    /// The term id of `t`, adding the token when new.
    mutating func termID(_ t: String) -> Int {
        if let id = terms[t] { return Int(id) }
        let id = terms.count
        terms[t] = UInt32(id)
        postings.ensure(id)
        return id
    }

    /// The posting of a token, if the token was ever indexed.
    func posting(_ t: String) -> [RowID]? { rawPosting(t).map(live) }

    /// `posting(t)` with the removed base rows still in it (a query's result is filtered once, `live`).
    @inline(__always)
    func rawPosting(_ t: String) -> [RowID]? {
        let delta = terms[t].map { postings[Int($0)] }
        guard !bases.isEmpty else { return delta }
        // Layers hold ascending, disjoint row ranges: their postings concatenate in order.
        var rows: [RowID]?
        for base in bases {
            if let i = base.find(t) { rows = (rows ?? []) + base.posting(i) }
        }
        guard let rows else { return delta }
        return rows + (delta ?? [])
    }

    /// `rows` without the base rows removed since the layers were written. Applied to a query's
    /// result, not to each token's posting: the postings of common words run to thousands of
    /// rows, and filtering each before intersecting would do work for rows the intersection drops.
    func live(_ rows: [RowID]) -> [RowID] {
        guard removed.count > 0 else { return rows }
        return rows.filter { !removed.contains(Int($0)) }
    }

    /// An empty index.
    public init() {}

    /// Bulk build from (row, texts) in any order; each posting is built by appending and sorted
    /// once at the end only if rows came out of order.
    public init<S: Sequence>(rows: S) where S.Element == (RowID, [String]) {
        var sorted = true
        for (row, texts) in rows {
            for t in Self.tokenSet(texts) {
                let id = termID(t)
                if let last = postings[id].last {
                    if last == row { continue }
                    if last > row { sorted = false }
                }
                postings[id].append(row)
            }
        }
        if !sorted {
            for id in 0..<terms.count { postings[id] = Postings.sortedUnique(postings[id]) }
        }
    }

    static func tokenSet(_ texts: [String]) -> Set<String> {
        var s = Set<String>()
        for text in texts { TextTokenizer.forEachToken(text) { s.insert($0) } }
        return s
    }

    /// Number of distinct tokens ever indexed.
    public var tokenCount: Int { terms.count }

    /// Indexes the tokens of `texts` (all searchable strings of one record) for `row`.
    public mutating func insert(row: RowID, texts: [String]) {
        if Int(row) < baseCount { return }  // base rows come back as delta rows, never in place
        for t in Self.tokenSet(texts) {
            let id = termID(t)
            postings[id].insertSorted(row)
        }
    }

    /// Removes the tokens of `texts` (the strings that were indexed for `row`).
    public mutating func remove(row: RowID, texts: [String]) {
        if Int(row) < baseCount {
            guard !removed.contains(Int(row)) else { return }
            removed.insert(Int(row))
            guard let k = layers.layer(of: Int(row)), k < bases.count else { return }
            for t in Self.tokenSet(texts) where bases[k].find(t) != nil { removedCounts[t, default: 0] += 1 }
            return
        }
        for t in Self.tokenSet(texts) {
            guard let id = terms[t] else { continue }
            postings[Int(id)].removeSorted(row)
        }
    }

    /// Document frequency: how many rows hold `token` (an already-normalized token).
    public func documentFrequency(token: String) -> Int {
        var n = terms[token].map { postings[Int($0)].count } ?? 0
        for base in bases { if let i = base.find(token) { n += base.frequency(i) } }
        for d in deadBases { if let i = d.find(token) { n -= d.frequency(i) } }
        return n - (removedCounts[token] ?? 0)
    }

    /// Upper bound on the rows matching all words of `query` (the smallest posting), the
    /// planner's estimate. O(number of tokens).
    public func estimatedCount(matchingAll query: [String]) -> Int {
        var best = Int.max
        for q in query {
            TextTokenizer.forEachGroup(q) { g in for t in g { best = min(best, documentFrequency(token: t)) } }
        }
        return best == .max ? 0 : best
    }

    /// Rows containing every word of `query` (each string may hold several words). A query with
    /// no tokens left (only stop words) matches nothing.
    public func rows(matchingAll query: [String]) -> [RowID] {
        var lists: [[RowID]] = []
        var missing = false
        for q in query {
            TextTokenizer.forEachGroup(q) { g in
                for t in g {
                    if let p = rawPosting(t), !p.isEmpty { lists.append(p) } else { missing = true }
                }
            }
        }
        if missing || lists.isEmpty { return [] }
        return live(Postings.intersect(lists))
    }

    /// Rows containing at least one word of `query`; a word with several tokens (an unspaced run)
    /// needs all of them.
    public func rows(matchingAny query: [String]) -> [RowID] {
        var perWord: [[RowID]] = []
        for q in query {
            TextTokenizer.forEachGroup(q) { g in
                var lists: [[RowID]] = []
                for t in g {
                    guard let p = rawPosting(t), !p.isEmpty else { return }
                    lists.append(p)
                }
                if !lists.isEmpty { perWord.append(Postings.intersect(lists)) }
            }
        }
        return live(Postings.union(perWord))
    }
}

extension Array where Element == RowID {
    mutating func insertSorted(_ r: RowID) {
        if let last, last < r {
            append(r)
            return
        }
        let i = Postings.lowerBound(self, r, from: 0)
        if i < count, self[i] == r { return }
        insert(r, at: i)
    }

    mutating func removeSorted(_ r: RowID) {
        let i = Postings.lowerBound(self, r, from: 0)
        if i < count, self[i] == r { remove(at: i) }
    }
}

// TextTokenizer: CloudKit-style tokens for the full-text index, plus bigrams for scripts that
// are written without spaces. The same function tokenizes records and queries, so the rule
// below is the whole contract (also in docs/text-search.md):
//
//  1. Normalize: Unicode compatibility decomposition (NFKD: folds full-width/half-width forms,
//     ligatures, superscripts…), then drop combining diacritical marks (U+0300–036F, U+1AB0–1AFF,
//     U+1DC0–1DFF, U+20D0–20FF, U+FE20–FE2F, and the kana voicing marks U+3099–309A), then
//     lowercase (Unicode full lowercase mapping). Pure-ASCII text takes a byte fast path with the
//     same result.
//  2. Split into runs of word scalars: letters, numbers and (remaining) marks; everything else
//     separates words.
//  3. Inside a run, scalars of the unspaced scripts — Han, Hiragana, Katakana, Thai, Lao, Khmer,
//     Myanmar (and marks following them) — form their own sub-runs. A sub-run yields every
//     overlapping pair of adjacent scalars (bigrams) followed by every single scalar (unigrams),
//     and a query word matches only when *all* its tokens do. No dictionary is needed: a query
//     for any substring of the text's run finds it (one scalar through its unigram, longer ones
//     through their bigrams); a query whose bigrams occur only apart (not adjacent) is a false
//     positive the rule accepts, as every bigram index does.
//  4. Other sub-runs are words. A word equal to one of the 33 English stop words (Lucene's
//     classic set: a an and are as at be but by for if in into is it no not of on or such that
//     the their then there these they this to was will with) is dropped.
//
// Each word or unspaced sub-run is a *group*: the tokens a query word requires together.

import Foundation

/// Splits text into normalized search tokens (see the rule in this file's header).
///
/// ```swift
/// TextTokenizer.groups("The Café de Flore, 東京")   // [["cafe"], ["de"], ["flore"], ["東京", "東", "京"]]
/// ```
public enum TextTokenizer {
    /// Lucene's classic English stop set (33 words), dropped from words (not from bigrams).
    public static let stopWords: Set<String> = [
        "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
        "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
        "they", "this", "to", "was", "will", "with",
    ]

    /// The longest stop word's length in bytes ("their", "there", "these"): a longer word is
    /// never looked up in `stopWords`.
    static let maximumStopWordLength = stopWords.reduce(0) { max($0, $1.utf8.count) }

    /// The stop words packed (`packed(_:)`), sorted: a lowercase ASCII word is checked without
    /// making a `String` or hashing one.
    static let packedStopWords: [UInt64] = stopWords.map { packed(Array($0.utf8)) }.sorted()

    /// Up to 7 bytes as one number (byte `i` in bits 8i…8i+7): equal numbers are equal words,
    /// as no word byte is zero.
    @inline(__always)
    static func packed<C: Collection>(_ bytes: C) -> UInt64 where C.Element == UInt8 {
        var v: UInt64 = 0
        var shift: UInt64 = 0
        for b in bytes {
            v |= UInt64(b) << shift
            shift += 8
        }
        return v
    }

    /// Whether the lowercase ASCII word `bytes` is a stop word.
    @inline(__always)
    static func isStopWord(_ bytes: [UInt8]) -> Bool {
        guard bytes.count <= maximumStopWordLength else { return false }
        let v = packed(bytes)
        var lo = 0
        var hi = packedStopWords.count
        while lo < hi {
            let m = (lo + hi) / 2
            if packedStopWords[m] < v { lo = m + 1 } else { hi = m }
        }
        return lo < packedStopWords.count && packedStopWords[lo] == v
    }

    /// Token groups of `text`: one group per word, one per unspaced run (its bigrams).
    public static func groups(_ text: String) -> [[String]] {
        var out: [[String]] = []
        forEachGroup(text) { out.append($0) }
        return out
    }

    /// Every token of `text`, without duplicates, in first-seen order.
    public static func tokens(_ text: String) -> [String] {
        var seen = Set<String>()
        var out: [String] = []
        forEachGroup(text) { g in for t in g where seen.insert(t).inserted { out.append(t) } }
        return out
    }

    /// Calls `body` with each token group.
    public static func forEachGroup(_ text: String, _ body: ([String]) -> Void) {
        if isASCII(text) {
            asciiWords(text) { body([$0]) }
            return
        }
        unicodeGroups(text, body)
    }

    /// Calls `body` with every token of `text` (the groups' tokens in order, repeats included):
    /// what an index stores. Pure-ASCII text makes no group arrays.
    public static func forEachToken(_ text: String, _ body: (String) -> Void) {
        if isASCII(text) {
            asciiWords(text, body)
            return
        }
        unicodeGroups(text) { for t in $0 { body(t) } }
    }

    /// Whether every byte of `text` is ASCII (the byte fast path applies).
    static func isASCII(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { p in !p.contains { $0 >= 0x80 } }
    }

    /// The rule for text with non-ASCII scalars: normalize, split, bigram the unspaced runs.
    static func unicodeGroups(_ text: String, _ body: ([String]) -> Void) {
        let folded = normalize(text)
        var run: [Unicode.Scalar] = []
        var runIsUnspaced = false
        func flush() {
            defer { run.removeAll(keepingCapacity: true) }
            guard !run.isEmpty else { return }
            if runIsUnspaced {
                var g: [String] = []
                for i in 0..<(run.count - 1) {
                    var s = String.UnicodeScalarView()
                    s.append(run[i])
                    s.append(run[i + 1])
                    g.append(String(s))
                }
                for u in run { g.append(String(Character(u))) }
                body(g)
            } else {
                var s = String.UnicodeScalarView()
                s.append(contentsOf: run)
                let w = String(s)
                if !stopWords.contains(w) { body([w]) }
            }
        }
        for u in folded.unicodeScalars {
            guard isWordScalar(u) else {
                flush()
                continue
            }
            let unspaced = isUnspaced(u) || (runIsUnspaced && !run.isEmpty && isMark(u))
            if !run.isEmpty, unspaced != runIsUnspaced { flush() }
            runIsUnspaced = unspaced
            run.append(u)
        }
        flush()
    }

    /// NFKD, drop diacritical marks, lowercase.
    static func normalize(_ text: String) -> String {
        let decomposed = text.decomposedStringWithCompatibilityMapping
        var kept = String.UnicodeScalarView()
        for u in decomposed.unicodeScalars where !isDiacritic(u) { kept.append(u) }
        return String(kept).lowercased()
    }

    static func isDiacritic(_ u: Unicode.Scalar) -> Bool {
        switch u.value {
        case 0x0300...0x036F, 0x1AB0...0x1AFF, 0x1DC0...0x1DFF, 0x20D0...0x20FF, 0xFE20...0xFE2F, 0x3099...0x309A:
            return true
        default: return false
        }
    }

    static func isMark(_ u: Unicode.Scalar) -> Bool {
        switch u.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return true
        default: return false
        }
    }

    static func isWordScalar(_ u: Unicode.Scalar) -> Bool {
        switch u.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
            .decimalNumber, .letterNumber, .otherNumber, .nonspacingMark, .spacingMark, .enclosingMark:
            return true
        default: return false
        }
    }

    /// Scripts written without spaces between words.
    static func isUnspaced(_ u: Unicode.Scalar) -> Bool {
        switch u.value {
        case 0x0E00...0x0EFF,  // Thai, Lao
            0x1000...0x109F,  // Myanmar
            0x1780...0x17FF,  // Khmer
            0x3040...0x30FF,  // Hiragana, Katakana
            0x31F0...0x31FF,  // Katakana extensions
            0x3400...0x4DBF,  // CJK extension A
            0x4E00...0x9FFF,  // CJK unified ideographs
            0xF900...0xFAFF,  // CJK compatibility ideographs
            0x20000...0x3FFFF:  // CJK extensions B…
            return true
        default: return false
        }
    }

    /// ASCII fast path: letters and digits form words, lowercased; stop words dropped.
    static func asciiWords(_ text: String, _ body: (String) -> Void) {
        var text = text
        text.withUTF8 { p in
            var buf: [UInt8] = []
            buf.reserveCapacity(16)
            func flush() {
                guard !buf.isEmpty else { return }
                let stop = isStopWord(buf)
                if !stop { body(String(decoding: buf, as: UTF8.self)) }
                buf.removeAll(keepingCapacity: true)
            }
            for c in p {
                switch c {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): buf.append(c)
                case UInt8(ascii: "A")...UInt8(ascii: "Z"): buf.append(c + 32)
                default: flush()
                }
            }
            flush()
        }
    }
}

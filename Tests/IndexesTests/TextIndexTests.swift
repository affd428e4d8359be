// TextIndex and TextTokenizer: the tokenization rule on named cases, and ALL/ANY queries against
// a brute-force model over random documents with inserts and deletes.

import CirrusTestSupport
import Foundation
import Testing

@testable import Indexes

@Suite struct TextTokenizerTests {
    @Test func caseAndDiacriticsFold() {
        #expect(TextTokenizer.tokens("Café CAFÉ cafe\u{301} Ångström") == ["cafe", "angstrom"])
    }

    @Test func stopWordsAreDroppedAndThereAre33() {
        #expect(TextTokenizer.stopWords.count == 33)
        #expect(TextTokenizer.tokens("The cat and the Hat, it is not a rat") == ["cat", "hat", "rat"])
        #expect(TextTokenizer.tokens("ThE énd") == ["end"])  // non-ASCII path drops stop words too
    }

    /// Stop words of every length are dropped, the longest included; longer words that begin
    /// with one are kept.
    @Test func stopWordsOfEveryLengthAreDroppedAndLongerWordsKept() {
        #expect(
            TextTokenizer.tokens("these thesis there therein their a ab and into intox") == [
                "thesis", "therein", "ab", "intox",
            ])
        for w in TextTokenizer.stopWords { #expect(TextTokenizer.tokens(w.uppercased() + " " + w) == [], "\(w)") }
    }

    /// The packed check (`isStopWord`) answers as the set does: every word of up to three
    /// letters, and every stop word with one letter changed, dropped or added.
    @Test func packedStopWordCheckAgreesWithTheSet() {
        let letters = (UInt8(ascii: "a")...UInt8(ascii: "z")).map { $0 }
        var words: [[UInt8]] = letters.map { [$0] }
        words += words.flatMap { w in letters.map { w + [$0] } }
        words += words.filter { $0.count == 2 }.flatMap { w in letters.map { w + [$0] } }
        for s in TextTokenizer.stopWords {
            let w = Array(s.utf8)
            for i in w.indices {
                for c in letters { var m = w; m[i] = c; words.append(m) }
                var d = w; d.remove(at: i); words.append(d)
            }
            for c in letters { words.append(w + [c]) }
        }
        for w in words where !w.isEmpty {
            let s = String(decoding: w, as: UTF8.self)
            #expect(TextTokenizer.isStopWord(w) == TextTokenizer.stopWords.contains(s), "\(s)")
        }
    }

    @Test func tokensOneByOneAreTheGroupsFlattened() {
        let texts = [
            "The Café de Flore, 東京都 tower", "Hello, World! 42 into INTO intothe", "", "  ,, ",
            "ＡＢＣ１２３ ﬁne", "ภาษาไทย and Ελληνικά", "such suchlike with without",
        ]
        for t in texts {
            var flat: [String] = []
            TextTokenizer.forEachGroup(t) { flat += $0 }
            var oneByOne: [String] = []
            TextTokenizer.forEachToken(t) { oneByOne.append($0) }
            #expect(oneByOne == flat, "\(t)")
        }
    }

    @Test func widthAndCompatibilityFormsFold() {
        #expect(TextTokenizer.tokens("ＡＢＣ１２３ ﬁne") == ["abc123", "fine"])
    }

    @Test func asciiFastPathMatchesGeneralPath() {
        for s in ["Hello, World! 42", "don't stop-me now", "A1b2 C3"] {
            var slow: [String] = []
            let folded = TextTokenizer.normalize(s + "é")  // force the general path, then drop the é word
            TextTokenizer.forEachGroup(folded) { slow += $0 }
            if slow.last?.hasSuffix("e") == true { slow[slow.count - 1].removeLast() }
            slow.removeAll { $0.isEmpty }
            #expect(TextTokenizer.tokens(s) == slow, "\(s)")
        }
    }

    @Test func cjkRunsBecomeBigrams() {
        #expect(TextTokenizer.groups("東京都 tower") == [["東京", "京都", "東", "京", "都"], ["tower"]])
        #expect(TextTokenizer.groups("東") == [["東"]])
        #expect(TextTokenizer.groups("東京tower") == [["東京", "東", "京"], ["tower"]])
        #expect(TextTokenizer.groups("ภาษาไทย").first?.count == 2 * "ภาษาไทย".unicodeScalars.count - 1)
    }

    @Test func cjkSubstringQueryFindsText() {
        var index = TextIndex()
        index.insert(row: 1, texts: ["東京都庁舎"])
        index.insert(row: 2, texts: ["京都の寺"])
        #expect(index.rows(matchingAll: ["京都"]) == [1, 2])
        #expect(index.rows(matchingAll: ["都庁"]) == [1])
        #expect(index.rows(matchingAll: ["東京都"]) == [1])
        #expect(index.rows(matchingAll: ["都の"]) == [2])
        #expect(index.rows(matchingAll: ["寺"]) == [2])  // single scalars are indexed too
        #expect(index.rows(matchingAll: ["庁都"]).isEmpty)
        #expect(index.rows(matchingAny: ["庁舎", "寺"]) == [1, 2])
    }
}

@Suite struct TextIndexTests {
    static let vocabulary = [
        "apple", "Apple", "ÁPPLE", "banana", "cherry", "the", "and", "of", "date", "elder", "fig", "grape",
        "東京", "京都", "大阪", "Straße", "naïve", "NAIVE", "zebra", "x1", "ｆｉｇ",
    ]

    func randomDoc(_ rng: inout SeededRandom) -> [String] {
        (0..<rng.below(3)).map { _ in
            (0..<rng.below(6)).map { _ in Self.vocabulary[rng.below(Self.vocabulary.count)] }.joined(separator: " ")
        }
    }

    @Test func randomDocumentsMatchModel() {
        let seed = TestSeed.next()
        print("TextIndexTests.randomDocumentsMatchModel seed \(seed)")
        var rng = SeededRandom(seed: seed)
        for size in stride(from: 0, through: 300, by: 3) {
            var docs: [RowID: [String]] = [:]
            for r in 0..<size where rng.chance(0.8) { docs[RowID(r)] = randomDoc(&rng) }
            var index = TextIndex(rows: docs.map { ($0.key, $0.value) })
            for _ in 0..<min(size, 20) {
                let r = RowID(rng.below(size + 5))
                if let old = docs[r] {
                    index.remove(row: r, texts: old)
                    docs[r] = nil
                } else {
                    let d = randomDoc(&rng)
                    index.insert(row: r, texts: d)
                    docs[r] = d
                }
            }
            let tokenSets = docs.mapValues { Set(TextTokenizer.tokens($0.joined(separator: " "))) }
            for _ in 0..<5 {
                let q = (0..<(1 + rng.below(3))).map { _ in Self.vocabulary[rng.below(Self.vocabulary.count)] }
                let groups = q.flatMap { TextTokenizer.groups($0) }
                let all = Set(groups.flatMap { $0 })
                let expAll = all.isEmpty ? [] : tokenSets.filter { all.isSubset(of: $0.value) }.map(\.key).sorted()
                #expect(index.rows(matchingAll: q) == expAll, "seed \(seed) ALL \(q)")
                let expAny = tokenSets.filter { ts in groups.contains { Set($0).isSubset(of: ts.value) } }.map(\.key)
                    .sorted()
                #expect(index.rows(matchingAny: q) == expAny, "seed \(seed) ANY \(q)")
                for t in all {
                    #expect(index.documentFrequency(token: t) == tokenSets.values.filter { $0.contains(t) }.count)
                }
            }
        }
    }

    @Test func largeIndexMatchesModel() {
        let seed = TestSeed.next()
        print("TextIndexTests.largeIndexMatchesModel seed \(seed)")
        var rng = SeededRandom(seed: seed)
        let words = (0..<400).map { "w\($0)" }
        var docs: [RowID: String] = [:]
        for r in 0..<20_000 {
            docs[RowID(r)] = (0..<6).map { _ in words[min(rng.below(400), rng.below(400))] }.joined(separator: " ")
        }
        var index = TextIndex(rows: docs.map { ($0.key, [$0.value]) })  // unsorted input order
        for r in stride(from: 0, to: 20_000, by: 7) {
            index.remove(row: RowID(r), texts: [docs[RowID(r)] ?? ""])
            docs[RowID(r)] = nil
        }
        let sets = docs.mapValues { Set($0.split(separator: " ").map(String.init)) }
        for _ in 0..<30 {
            let q = [words[rng.below(400)], words[rng.below(400)]]
            let all = sets.filter { $0.value.isSuperset(of: q) }.map(\.key).sorted()
            let any = sets.filter { !$0.value.isDisjoint(with: q) }.map(\.key).sorted()
            #expect(index.rows(matchingAll: q) == all, "seed \(seed) \(q)")
            #expect(index.rows(matchingAny: q) == any, "seed \(seed) \(q)")
        }
    }

    @Test func postingsIntersectAndUnionMatchSets() {
        let seed = TestSeed.next()
        print("TextIndexTests.postings seed \(seed)")
        var rng = SeededRandom(seed: seed)
        for _ in 0..<300 {
            let lists = (0..<(1 + rng.below(4))).map { _ in
                Array(Set((0..<rng.below(200)).map { _ in RowID(rng.below(1 + rng.below(1000))) })).sorted()
            }
            let inter = lists.dropFirst().reduce(Set(lists[0])) { $0.intersection($1) }
            #expect(Postings.intersect(lists) == inter.sorted(), "seed \(seed)")
            if lists.count >= 2 {
                let (a, b) = lists[0].count <= lists[1].count ? (lists[0], lists[1]) : (lists[1], lists[0])
                let exp = Set(a).intersection(b).sorted()
                for st in [Postings.Strategy.bitmap, .merge, .gallop] {
                    #expect(Postings.intersect2(a, b, strategy: st) == exp, "seed \(seed) \(st)")
                }
            }
            #expect(Postings.union(lists) == Set(lists.joined()).sorted(), "seed \(seed)")
            #expect(
                Postings.heapUnion(lists.filter { !$0.isEmpty }) == Set(lists.joined()).sorted(), "seed \(seed) heap")
        }
    }

    /// `Postings.sort` on every path (comparison, byte radix, 16-bit radix), with rows that differ
    /// in one byte only, in every byte, and with duplicates: the same as the standard sort.
    @Test func rowSortMatchesTheStandardSort() {
        let seed = TestSeed.next()
        var rng = SeededRandom(seed: seed)
        for n in [0, 1, 2, 255, 256, 257, 1_500, 4_095, 4_096, 10_000] {
            for span in [1, 200, 70_000, 4_000_000_000] {
                let base = RowID(rng.below(3)) << 24 | RowID(rng.below(1 << 16)) << 8
                var rows = (0..<n).map { _ in base &+ RowID(rng.below(span)) }
                let expected = rows.sorted()
                Postings.sort(&rows)
                #expect(rows == expected, "seed \(seed) n \(n) span \(span)")
            }
        }
    }

    /// Unsorted row lists (as ordered indexes yield them: any order, duplicates) of every density
    /// and length, so each path of `sortedUnique` (comparison sort, bitmap, radix sort) runs, and
    /// `keeping` / `RowMembership` agree with sets.
    @Test func unsortedRowListsMatchSets() {
        let seed = TestSeed.next()
        print("TextIndexTests.unsortedRows seed \(seed)")
        var rng = SeededRandom(seed: seed)
        for round in 0..<54 {
            let n = [0, 1, 2, 63, 64, 500, 4_095, 4_096, 20_000][round % 9]
            let span = [10, 1_000, 100_000, 4_000_000_000][rng.below(4)]
            let base = RowID(rng.below(1_000))
            let rows = (0..<n).map { _ in base + RowID(rng.below(span)) }
            let members = Set(rows)
            let expected = members.sorted()
            #expect(Postings.sortedUnique(rows) == expected, "seed \(seed) round \(round) n \(n) span \(span)")
            let probe = Set((0..<rng.below(300)).map { _ in base + RowID(rng.below(span)) }).sorted()
            #expect(
                Postings.keeping(probe, in: rows) == probe.filter(members.contains),
                "seed \(seed) round \(round) keeping")
            let set = RowMembership(rows)
            #expect(probe.allSatisfy { set.contains($0) == members.contains($0) }, "seed \(seed) round \(round)")
            #expect(rows.allSatisfy(set.contains), "seed \(seed) round \(round) members")
        }
    }
}

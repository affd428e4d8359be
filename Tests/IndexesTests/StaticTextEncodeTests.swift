// StaticText.encode: a row's repeated tokens are posted once, and rows given out of order
// encode exactly as the same rows in order.

import CirrusTestSupport
import Testing

@testable import Indexes

@Suite struct StaticTextEncodeTests {
    @Test func repeatsAndOrderDoNotChangeTheSection() {
        var rng = SeededRandom(seed: TestSeed.next())
        let words = ["cafe", "Café", "nord", "the", "東京", "bistro", "dome", "ramen"]
        var rows: [(RowID, [String])] = []
        for r in 0..<200 {
            let texts = (0..<rng.below(4)).map { _ in
                (0..<rng.below(5)).map { _ in words[rng.below(words.count)] }.joined(separator: " ")
            }
            rows.append((RowID(r * 3), texts))
        }
        let inOrder = StaticText.encode(rows: rows)
        #expect(StaticText.encode(rows: rows.shuffled(using: &rng)) == inOrder)
        // Each row's texts reduced to one copy of each token: the same postings.
        let once = rows.map { (row, texts) in
            (row, [Array(Set(texts.flatMap { TextTokenizer.tokens($0) })).joined(separator: " ")])
        }
        #expect(StaticText.encode(rows: once) == inOrder)
    }
}

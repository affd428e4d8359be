// The value forms and identifiers the SQL is built from (no server needed).

import CirrusFacade
import RecordModel
import Testing

@testable import CirrusPostgres

@Suite struct SQLTextTests {
    /// ANALYZE as the records written double (PostgresStore+Growth.swift): first at
    /// `TableGrowth.first`, then each time the count since reaches the count analyzed.
    @Test func tablesAreAnalyzedEachTimeTheRecordsDouble() {
        var g = TableGrowth()
        var analyzedAt: [Int] = []
        var total = 0
        for _ in 0..<100 {
            total += 100
            if g.add(100, types: ["A"]) { analyzedAt.append(total) }
        }
        #expect(analyzedAt == [300, 600, 1200, 2400, 4800, 9600])
        #expect(!g.add(0, types: ["B"]) && g.takeTypes() == ["A"])
        // One large request analyzes at once; types written since are reported once.
        var h = TableGrowth()
        #expect(h.add(5000, types: ["A", "B"]) && h.analyzed == 5000 && h.pending == 0)
        #expect(h.takeTypes() == ["A", "B"] && h.takeTypes().isEmpty)
        #expect(!h.add(4999, types: ["C"]) && h.add(1, types: ["D"]) && h.analyzed == 10_000)
        #expect(h.takeTypes() == ["C", "D"])
    }

    @Test func prefixSuccessorsBoundEveryExtension() {
        #expect(SQLText.successor(ofPrefix: "ab") == "ac")
        #expect(SQLText.successor(ofPrefix: "a\u{10FFFF}") == "b")
        #expect(SQLText.successor(ofPrefix: "\u{D7FF}") == "\u{E000}")
        #expect(SQLText.successor(ofPrefix: "") == nil)
        #expect(SQLText.successor(ofPrefix: [0x01, 0xFF]) == [0x02])
        #expect(SQLText.successor(ofPrefix: [0xFF, 0xFF]) == nil)
        for p in ["caf", "東", "é"] {
            let s = SQLText.successor(ofPrefix: p)!
            for w in [p, p + "\u{10FFFF}", p + "zzz"] { #expect(compareUTF8(w, s) < 0 && compareUTF8(w, p) >= 0) }
        }
    }

    @Test func numbersKeepTheirOrderAgainstInt64() throws {
        #expect(try SQLText.number(0.5) == "0.5")
        #expect(try SQLText.number(-0.0) == "0")
        #expect(try SQLText.number(9_007_199_254_740_992) == "9007199254740992")
        #expect(try SQLText.number(9_223_372_036_854_775_808.0) == "9223372036854775808")
        #expect(try SQLText.number(-9_223_372_036_854_775_808.0) == "-9223372036854775808")
        #expect(throws: CirrusError.self) { try SQLText.number(.nan) }
        #expect(throws: CirrusError.self) { try SQLText.text(.string("a\u{0}b")) }
    }

    @Test func longNamesStayDistinctAndShort() {
        let a = SQLName.make("f_", String(repeating: "x", count: 200) + "a")
        let b = SQLName.make("f_", String(repeating: "x", count: 200) + "b")
        #expect(a != b && a.utf8.count <= 63 && b.utf8.count <= 63)
        #expect(SQLName.make("f_", "kind") == "f_kind")
        #expect(SQLName.quote("a\"b") == "\"a\"\"b\"")
    }

    @Test func tsqueriesQuoteTheirLexemes() {
        #expect(SQLText.tsquery([["cafe"], ["東京", "東", "京"]], all: false) == "('cafe') | ('東京' & '東' & '京')")
        #expect(SQLText.tsquery([["a'b"], ["c"]], all: true) == "'a''b' & 'c'")
    }
}

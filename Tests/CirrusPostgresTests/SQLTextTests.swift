// The value forms and identifiers the SQL is built from (no server needed).

import CirrusFacade
import RecordModel
import Testing

@testable import CirrusPostgres

@Suite struct SQLTextTests {
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

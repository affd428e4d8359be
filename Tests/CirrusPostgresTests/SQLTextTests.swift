// The value forms and identifiers the SQL is built from (no server needed).

import CirrusFacade
import RecordModel
import Testing

@testable import CirrusPostgres

@Suite struct SQLTextTests {
    /// ANALYZE as the records written double (PostgresStore+Growth.swift): first at
    /// `TableGrowth.first`, then each time the count since reaches the count analyzed.
    /// Pages planned at each call (QueryTranslator.plansPerCall): sorted by a field that has a
    /// range between two values (BEGINSWITH, or a lower and an upper bound) beside another filter
    /// — where a generic plan's fixed estimate of the range picks the plan. The rest are prepared.
    @Test func pagesSortedByARangesFieldBesideAnotherFilterArePlannedAtEachCall() {
        func f(_ field: String, _ c: Comparator, _ v: FieldValue = .string("a")) -> QueryFilter {
            QueryFilter(fieldName: field, comparator: c, fieldValue: v)
        }
        let byName: [SortDescriptor] = [.field("name", ascending: true)]
        let cases: [(QueryPredicate, [SortDescriptor], Bool)] = [
            (.filters([f("name", .beginsWith), f("section", .equals)]), byName, true),
            (.filters([f("section", .equals), f("name", .beginsWith)]), [.field("name", ascending: false)], true),
            (
                .filters([f("name", .greaterThanOrEquals), f("name", .lessThan), f("size", .greaterThan, .int64(1))]),
                byName, true
            ),
            (
                .filters([f("name", .greaterThan), f("name", .lessThanOrEquals), f("tags", .listContains)]), byName,
                true
            ),
            // The range alone: nothing to AND it with, the walk is the only index plan.
            (.filters([f("name", .beginsWith)]), byName, false),
            (.filters([f("name", .greaterThan), f("name", .lessThan)]), byName, false),
            // One bound: the generic estimate of one inequality is a third of the rows, not 0.5%.
            (.filters([f("name", .greaterThan), f("section", .equals)]), byName, false),
            // The range is not on the sort field, or there is no sort.
            (.filters([f("name", .beginsWith), f("section", .equals)]), [.field("section", ascending: true)], false),
            (.filters([f("name", .beginsWith), f("section", .equals)]), [], false),
            (
                .filters([f("name", .beginsWith), f("section", .equals)]),
                [.distance(field: "location", from: Location(latitude: 0, longitude: 0))], false
            ),
            (.all, byName, false),
            // A second sort key does not count: the first decides which index can give the order.
            (
                .filters([f("name", .beginsWith), f("section", .equals)]),
                [.field("section", ascending: true), .field("name", ascending: true)], false
            ),
        ]
        for (i, (predicate, sort, expected)) in cases.enumerated() {
            let q = Query(recordType: "Package", predicate: predicate, sortDescriptors: sort)
            #expect(QueryTranslator.plansPerCall(q) == expected, "case \(i)")
        }
    }

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

    /// A number target against INT64 (bigint) and DOUBLE (float8) columns: the exact form and
    /// the rewritten bound keep exactly the values the embedded engine's exact comparison
    /// (`FieldValue.compare`) keeps, for every pair of edge and random values.
    @Test func numberTargetsInAColumnsKindKeepTheSameValues() {
        let p53 = 9_007_199_254_740_992.0, p63 = 9_223_372_036_854_775_808.0
        var ints: [Int64] = [
            0, 1, -1, 2, -2, 3, 1 << 53, (1 << 53) - 1, (1 << 53) + 1, (1 << 53) + 2, 1 << 62, .max, .min,
        ]
        ints += [.max - 1, .min + 1, -(1 << 53) - 1, -(1 << 53), 4_611_686_018_427_387_905]
        var doubles: [Double] = [
            0, -0.0, 0.5, -0.5, 1.5, -1.5, 2, -2, p53, p53 + 2, -p53, p63, -p63, 1e19, -1e19, 1e300,
        ]
        doubles += [p63.nextDown, p63.nextUp, (-p63).nextUp, (-p63).nextDown, p53.nextUp, 4.5e15 + 0.5]
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<40 {
            ints.append(Int64.random(in: .min ... .max, using: &rng))
            ints.append(Int64.random(in: -1000...1000, using: &rng))
            doubles.append(Double.random(in: -1e19...1e19, using: &rng))
            doubles.append(Double(Int64.random(in: -1000...1000, using: &rng)) / 4)
        }
        let targets = ints.map(FieldValue.int64) + (doubles + [.infinity, -.infinity, .nan]).map(FieldValue.double)
        let ops: [(String, (Int) -> Bool)] = [
            ("<", { $0 < 0 }), ("<=", { $0 <= 0 }), (">", { $0 > 0 }), (">=", { $0 >= 0 }),
        ]
        let columns: [(ColumnType, [FieldValue])] = [
            (ColumnType(.int64)!, ints.map(FieldValue.int64)), (ColumnType(.double)!, doubles.map(FieldValue.double)),
        ]
        for (type, stored) in columns {
            for t in targets {
                let equal = stored.filter { FieldValue.compare($0, t) == 0 }
                if let e = type.exact(t) {
                    #expect(type.isInteger ? e.scalarType == .int64 : e.scalarType == .double)
                    #expect(stored.filter { FieldValue.compare($0, e) == 0 } == equal, "\(t) = in \(type.sqlType)")
                } else {
                    #expect(equal.isEmpty, "\(t) has no \(type.sqlType) form but equals \(equal)")
                }
                for (op, holds) in ops {
                    let expected = stored.filter { holds(FieldValue.compare($0, t)) }
                    let kept: [FieldValue]
                    switch type.bound(op, t) {
                    case .compare(let op2, let v):
                        #expect(type.exact(v) == v, "\(v) is of the column's kind")
                        let h = ops.first { $0.0 == op2 }!.1
                        kept = stored.filter { h(FieldValue.compare($0, v)) }
                    case .everyValue: kept = stored
                    case .noValue: kept = []
                    }
                    #expect(kept == expected, "\(type.sqlType) \(op) \(t)")
                }
            }
        }
        #expect(ColumnType(.int64)!.bound(">", .double(1.5)) == .compare(">=", .int64(2)))
        #expect(ColumnType(.int64)!.bound("<", .double(-1.5)) == .compare("<=", .int64(-2)))
        #expect(ColumnType(.double)!.bound("<=", .int64((1 << 53) + 1)) == .compare("<=", .double(p53)))
        #expect(ColumnType(.int64)!.bound(">=", .double(1e19)) == .noValue)
        #expect(ColumnType(.int64)!.exact(.double(2)) == .int64(2))
        #expect(ColumnType(.double)!.exact(.int64((1 << 53) + 1)) == nil)
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
        // A quote followed by a combining mark is one character with it, but still a quote.
        #expect(SQLText.tsquery([["a'\u{301}b\\"]], all: true) == "'a''\u{301}b\\\\'")
    }

    /// Identifiers: every `"` doubled, a `"` followed by a combining mark too (it closed the
    /// identifier when quoting compared characters).
    @Test func identifiersDoubleEveryQuoteScalar() {
        #expect(SQLName.quote("a\"\u{301}b") == "\"a\"\"\u{301}b\"")
        #expect(SQLName.quote("x\"y") == "\"x\"\"y\"")
        let q = SQLName.quote("\"\u{301}; DROP TABLE t; --")
        #expect(q.unicodeScalars.filter { $0 == "\"" }.count == 4)
    }
}

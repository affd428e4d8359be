// OrderedIndex against a brute-force model: a sorted array of (value, row) pairs ordered by
// FieldValue.compare. Node size 4 so splits, borrows and merges happen constantly; invariants
// are checked after every mutation.

import CirrusTestSupport
import Foundation
import RecordModel
import Testing

@testable import Indexes

/// The model: every (value, row) entry, kept sorted by CloudKit order then row id.
struct OrderedModel {
    var entries: [(FieldValue, RowID)] = []

    static func less(_ a: (FieldValue, RowID), _ b: (FieldValue, RowID)) -> Bool {
        let c = FieldValue.compare(a.0, b.0)
        return c != 0 ? c < 0 : a.1 < b.1
    }

    mutating func insert(_ v: FieldValue, _ r: RowID) {
        for e in v.elements where !entries.contains(where: { FieldValue.compare($0.0, e) == 0 && $0.1 == r }) {
            entries.append((e, r))
        }
        entries.sort(by: Self.less)
    }

    mutating func remove(_ v: FieldValue, _ r: RowID) {
        for e in v.elements { entries.removeAll { FieldValue.compare($0.0, e) == 0 && $0.1 == r } }
    }

    func inRange(_ v: FieldValue, _ range: ValueRange) -> Bool {
        switch range.lower {
        case .unbounded: break
        case .included(let l): if FieldValue.compare(v, l) < 0 { return false }
        case .excluded(let l): if FieldValue.compare(v, l) <= 0 { return false }
        }
        switch range.upper {
        case .unbounded: break
        case .included(let u): if FieldValue.compare(v, u) > 0 { return false }
        case .excluded(let u): if FieldValue.compare(v, u) >= 0 { return false }
        }
        return true
    }

    func rows(in range: ValueRange) -> [RowID] { entries.filter { inRange($0.0, range) }.map(\.1) }

    func rows(prefix: FieldValue) -> [RowID] {
        entries.filter { e in
            switch (e.0, prefix) {
            case (.string(let s), .string(let p)): return Array(s.utf8).starts(with: Array(p.utf8))
            case (.bytes(let s), .bytes(let p)): return s.starts(with: p)
            default: return false
            }
        }.map(\.1)
    }
}

/// Random values of one family with many duplicates and awkward cases.
struct ValueGen {
    var rng: SeededRandom
    let family: KeyFamily

    mutating func value() -> FieldValue {
        switch family {
        case .number:
            switch rng.below(6) {
            case 0: return .int64(Int64(rng.below(20)) - 10)
            case 1: return .double(Double(rng.below(40)) / 2 - 10)
            case 2: return .int64([Int64.max, Int64.min, 9_007_199_254_740_993, -9_007_199_254_740_993][rng.below(4)])
            case 3:
                return .double([9_007_199_254_740_992, -0.0, 0.0, 1e300, -.infinity, .infinity, 9.3e18][rng.below(7)])
            case 4: return .int64(Int64(bitPattern: rng.next()))
            default: return .double(Double(rng.below(1000)) * 0.37 - 100)
            }
        case .string:
            let alphabet: [String] = ["a", "b", "ab", "\u{0}", "é", "e\u{301}", "Z", "z", "aaaaaaaaaaaaaa", "x"]
            var s = ""
            for _ in 0..<rng.below(5) { s += alphabet[rng.below(alphabet.count)] }
            return .string(s)
        case .date:
            return .date(Timestamp(millisecondsSince1970: Int64(rng.below(50)) - 25))
        case .bytes:
            return .bytes((0..<rng.below(20)).map { _ in [0, 1, 0xFF, 0x7F, 0xFE][rng.below(5)] })
        case .reference:
            let names = ["a", "b", "a\u{0}", "ab", ""]
            return .reference(
                Reference(
                    recordID: RecordID(recordName: names[rng.below(5)], zoneID: ZoneID(zoneName: names[rng.below(3)])),
                    action: .none))
        }
    }

    mutating func range() -> ValueRange {
        func bound() -> RangeBound {
            switch rng.below(3) {
            case 0: return .unbounded
            case 1: return .included(value())
            default: return .excluded(value())
            }
        }
        return ValueRange(lower: bound(), upper: bound())
    }
}

@Suite struct OrderedIndexTests {
    func checkAgainstModel(_ index: OrderedIndex, _ model: OrderedModel, _ gen: inout ValueGen, seed: UInt64) throws {
        try index.checkInvariants()
        #expect(index.count == model.entries.count, "seed \(seed)")
        let all = index.rows(in: .all)
        #expect(all == model.entries.map(\.1), "seed \(seed): full scan")
        for _ in 0..<4 {
            let v = gen.value()
            #expect(
                index.rows(equalTo: v) == model.rows(in: ValueRange(lower: .included(v), upper: .included(v))),
                "seed \(seed): point \(v)")
            let r = gen.range()
            let expected = model.rows(in: r)
            #expect(index.rows(in: r) == expected, "seed \(seed): range \(r)")
            #expect(index.count(in: r) == expected.count, "seed \(seed): count \(r)")
            var back: [RowID] = []
            index.scan(r, direction: .descending) {
                back.append($0); return true
            }
            #expect(back == expected.reversed(), "seed \(seed): backward \(r)")
            if gen.family == .string || gen.family == .bytes {
                let p = gen.value()
                let exp = model.rows(prefix: p)
                #expect(index.rows(beginningWith: p) == exp, "seed \(seed): prefix \(p)")
                #expect(index.count(beginningWith: p) == exp.count, "seed \(seed): prefix count \(p)")
            }
            let vs = [gen.value(), gen.value(), gen.value()]
            let inExp = Array(
                Set(vs.flatMap { v in model.rows(in: ValueRange(lower: .included(v), upper: .included(v))) })
            ).sorted()
            #expect(index.rows(equalToAnyOf: vs) == inExp, "seed \(seed): IN")
        }
        // Resume after every entry, both directions.
        let entries = model.entries
        if !entries.isEmpty {
            let i = gen.rng.below(entries.count)
            let fwd = index.page(after: entries[i], limit: 5)
            #expect(fwd == Array(entries[(i + 1)...].prefix(5)).map(\.1), "seed \(seed): resume asc")
            let bwd = index.page(direction: .descending, after: entries[i], limit: 5)
            #expect(bwd == Array(entries[..<i].reversed().prefix(5)).map(\.1), "seed \(seed): resume desc")
        }
    }

    @Test(arguments: KeyFamily.allCases)
    func randomOperationsMatchModel(family: KeyFamily) throws {
        let seed = TestSeed.next()
        print("OrderedIndexTests.randomOperationsMatchModel \(family) seed \(seed)")
        var gen = ValueGen(rng: SeededRandom(seed: seed), family: family)
        for size in stride(from: 0, through: 300, by: family == .number ? 1 : 7) {
            var model = OrderedModel()
            var pairs: [(FieldValue, RowID)] = []
            for _ in 0..<size {
                let v: FieldValue = gen.rng.chance(0.1) ? .list([gen.value(), gen.value()]) : gen.value()
                let r = RowID(gen.rng.below(size * 2 + 1))
                pairs.append((v, r))
                model.insert(v, r)
            }
            var index = OrderedIndex(family: family, entries: pairs, nodeSize: 4)
            try checkAgainstModel(index, model, &gen, seed: seed)
            // Mutations: inserts and deletes, invariants after each.
            for _ in 0..<min(size, 40) {
                if gen.rng.chance(0.5), !model.entries.isEmpty {
                    let e = model.entries[gen.rng.below(model.entries.count)]
                    index.remove(e.0, row: e.1)
                    model.remove(e.0, e.1)
                } else {
                    let v = gen.value()
                    let r = RowID(gen.rng.below(size * 2 + 1))
                    index.insert(v, row: r)
                    model.insert(v, r)
                }
                try index.checkInvariants()
            }
            try checkAgainstModel(index, model, &gen, seed: seed)
        }
    }

    @Test func insertOneByOneThenDeleteAllKeepsInvariants() throws {
        let seed = TestSeed.next()
        print("OrderedIndexTests.insertOneByOneThenDeleteAll seed \(seed)")
        var rng = SeededRandom(seed: seed)
        var index = OrderedIndex(family: .number, nodeSize: 4)
        var rows = Array(0..<2000).map { RowID($0) }
        rows.shuffle(using: &rng)
        for r in rows {
            index.insert(.int64(Int64(r % 37)), row: r)
            try index.checkInvariants()
        }
        #expect(index.count == 2000)
        let snapshot = index  // copy-on-write: must not change below
        rows.shuffle(using: &rng)
        for (i, r) in rows.enumerated() {
            #expect(index.remove(.int64(Int64(r % 37)), row: r) == 1, "seed \(seed)")
            try index.checkInvariants()
            #expect(index.count == 2000 - i - 1)
        }
        #expect(snapshot.count == 2000)
        try snapshot.checkInvariants()
        #expect(snapshot.count(equalTo: .double(5)) == (0..<2000).filter { $0 % 37 == 5 }.count)
    }

    @Test func largeBulkLoadMatchesModel() throws {
        let seed = TestSeed.next()
        print("OrderedIndexTests.largeBulkLoad seed \(seed)")
        var rng = SeededRandom(seed: seed)
        let n = 50_000
        let pairs = (0..<n).map { (FieldValue.int64(Int64(rng.below(1000))), RowID($0)) }
        let index = OrderedIndex(family: .number, entries: pairs, nodeSize: 16)
        try index.checkInvariants()
        var hist = [Int](repeating: 0, count: 1000)
        for (v, _) in pairs { if case .int64(let i) = v { hist[Int(i)] += 1 } }
        for _ in 0..<200 {
            let a = rng.below(1000)
            let b = rng.below(1000)
            let exp = a <= b ? hist[a...b].reduce(0, +) : 0
            #expect(
                index.count(in: ValueRange(lower: .included(.int64(Int64(a))), upper: .included(.double(Double(b)))))
                    == exp)
        }
    }
}

// Layered indexes: a checkpoint's static sections (mapped bytes) plus an in-memory delta, with
// removed base rows, must answer every query exactly as one in-memory index over the same final
// rows — counts, scans with resume in both directions, prefixes, IN, text ANY/ALL and document
// frequencies, radius and nearest-first with resume. Damaged sections fail with an error.

import CirrusTestSupport
import Foundation
import RecordModel
import Testing

@testable import Indexes

/// Owns a copy of section bytes (as a mapped file would).
final class Bytes: @unchecked Sendable {
    let p: UnsafeMutableRawBufferPointer
    let count: Int
    init(_ b: [UInt8]) {
        let m = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, b.count), alignment: 16)
        b.withUnsafeBytes { src in
            if let s = src.baseAddress, let d = m.baseAddress { d.copyMemory(from: s, byteCount: src.count) }
        }
        p = m
        count = b.count
    }
    var view: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(p)[0..<count]) }
    deinit { p.deallocate() }
}

@Suite struct LayeredIndexTests {
    var schema: RecordTypeSchema { RecordIndexesTests.schema }

    func sections(_ rows: [(RowID, Record)]) -> ([String: SectionBytes], [Bytes]) {
        var out: [String: SectionBytes] = [:]
        var keep: [Bytes] = []
        for (name, bytes) in RecordIndexes.encodeSections(schema: schema, rows: rows) {
            let b = Bytes(bytes)
            keep.append(b)
            out[name] = SectionBytes(b.view, keepAlive: b, name: name)
        }
        return (out, keep)
    }

    @Test(arguments: 0..<6)
    func baseAndDeltaAnswerLikeOneIndex(_ run: Int) throws {
        let seed = TestSeed.next() &+ UInt64(run)
        var rng = SeededRandom(seed: seed)
        let t = RecordIndexesTests()
        let n = [0, 1, 40, 300][run % 4]
        var live: [RowID: Record] = [:]
        var baseRows: [(RowID, Record)] = []
        for i in 0..<n {
            let r = t.record(i, &rng)
            baseRows.append((RowID(i), r))
            live[RowID(i)] = r
        }
        let (secs, keep) = sections(baseRows)
        var layered = RecordIndexes(schema: schema, baseRowCount: n, sections: secs, nodeSize: 4) {
            Issue.record("seed \(seed): a section was missing")
            return baseRows
        }
        #expect(layered.rebuilt.isEmpty)
        applyRandomDelta(&layered, &live, baseCount: n, seed: seed, &rng)
        let model = RecordIndexes(
            schema: schema, rows: live.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }, nodeSize: 4)
        try compare(layered, model, seed: seed, &rng)
        withExtendedLifetime(keep) {}
    }

    /// Several layers, rows numbered across them, some rows of older layers dead (removed as the
    /// container does at open), then a delta: every query as one in-memory index.
    @Test(arguments: 0..<6)
    func severalLayersAndDeltaAnswerLikeOneIndex(_ run: Int) throws {
        let seed = TestSeed.next() &+ UInt64(run)
        var rng = SeededRandom(seed: seed)
        let t = RecordIndexesTests()
        var live: [RowID: Record] = [:]
        var layers: [IndexLayer] = []
        var keep: [Bytes] = []
        var row = 0
        for k in 0..<(2 + run % 4) {
            let n = [0, 1, 7, 60, 150][rng.below(5)]
            var rows: [(RowID, Record)] = []
            for _ in 0..<n {
                let r = t.record(row + 100 * k, &rng)
                rows.append((RowID(row), r))
                live[RowID(row)] = r
                row += 1
            }
            let (secs, bytes) = sections(rows)
            keep += bytes
            layers.append(IndexLayer(rowCount: n, sections: secs))
        }
        let all = live
        var layered = RecordIndexes(schema: schema, layers: layers, nodeSize: 4) {
            Issue.record("seed \(seed): a section was missing")
            return all.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        }
        #expect(layered.rebuilt.isEmpty)
        #expect(layered.rowCount == row)
        // Dead rows (superseded or deleted in a newer layer): removed, as TypeTable does at open.
        for r in live.keys.sorted() where rng.chance(0.3) {
            layered.apply([.delete(r, live[r]!)])
            live[r] = nil
        }
        applyRandomDelta(&layered, &live, baseCount: row, seed: seed, &rng)
        let model = RecordIndexes(
            schema: schema, rows: live.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }, nodeSize: 4)
        try compare(layered, model, seed: seed, &rng)
        withExtendedLifetime(keep) {}
    }

    /// Dead rows carried by the layers themselves: each later layer names rows of older layers
    /// it made dead with the `dead/` sections of what they had indexed (as a checkpoint writes
    /// them), so nothing is removed by hand; with one such section missing (a layer of an older
    /// version) the indexes say so and the caller's removals give the same answers.
    @Test(arguments: 0..<8)
    func deadSectionsRemoveDeadRowsWithoutDecoding(_ run: Int) throws {
        let seed = TestSeed.next() &+ UInt64(run)
        var rng = SeededRandom(seed: seed)
        let t = RecordIndexesTests()
        let dropOne = run % 4 == 3
        var all: [RowID: Record] = [:]
        var live: [RowID: Record] = [:]
        var layers: [IndexLayer] = []
        var keep: [Bytes] = []
        var row = 0
        var deadRows: [RowID] = []
        for k in 0..<(2 + run % 3) {
            let n = [1, 7, 60, 150][rng.below(4)]
            var rows: [(RowID, Record)] = []
            for _ in 0..<n {
                let r = t.record(row + 100 * k, &rng)
                rows.append((RowID(row), r))
                all[RowID(row)] = r
                live[RowID(row)] = r
                row += 1
            }
            let (secs, bytes) = sections(rows)
            keep += bytes
            // Rows of older layers this layer kills.
            let older = live.keys.filter { Int($0) < row - n }.sorted()
            let killed = k == 0 ? [] : older.filter { _ in rng.chance(0.35) }
            var deadSecs: [String: SectionBytes] = [:]
            if !killed.isEmpty {
                let (d, dBytes) = sections(killed.map { ($0, all[$0]!) })
                keep += dBytes
                deadSecs = d
                if dropOne, let name = d.keys.sorted().last { deadSecs[name] = nil }
                for r in killed { live[r] = nil }
                deadRows += killed
            }
            layers.append(
                IndexLayer(rowCount: n, sections: secs, dead: killed.map { UInt32($0) }, deadSections: deadSecs))
        }
        var layered = RecordIndexes(schema: schema, layers: layers, nodeSize: 4) {
            Issue.record("seed \(seed): a section was missing")
            return live.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        }
        #expect(layered.rebuilt.isEmpty)
        if dropOne && !deadRows.isEmpty {
            #expect(!layered.deadRowsRemoved, "seed \(seed): a dead section is missing")
            for r in deadRows { layered.apply([.delete(r, all[r]!)]) }
        } else {
            #expect(layered.deadRowsRemoved, "seed \(seed)")
        }
        #expect(layered.rowCount == live.count, "seed \(seed): rowCount")
        applyRandomDelta(&layered, &live, baseCount: row, seed: seed, &rng)
        let model = RecordIndexes(
            schema: schema, rows: live.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }, nodeSize: 4)
        try compare(layered, model, seed: seed, &rng)
        #expect(layered.differences(from: model).isEmpty, "seed \(seed): \(layered.differences(from: model))")
        withExtendedLifetime(keep) {}
    }

    /// Deletions and updates of base rows (an update is a delete + a new row) and changes of
    /// delta rows, applied to `layered` and to `live`.
    func applyRandomDelta(
        _ layered: inout RecordIndexes, _ live: inout [RowID: Record], baseCount n: Int, seed: UInt64,
        _ rng: inout SeededRandom
    ) {
        let t = RecordIndexesTests()
        var next = RowID(n)
        for _ in 0..<(rng.below(120) + 1) {
            let rows = live.keys.sorted()
            switch rng.below(4) {
            case 3 where !rows.isEmpty:
                // An update of ordered fields only (price, tags, creation date), possibly again
                // and possibly back to the old value: a base row keeps its row (in place).
                let row = rows[rng.below(rows.count)]
                let old = live[row]!
                var new = old
                if rng.chance(0.6) { new["price"] = .int64(Int64(rng.below(50))) }
                if rng.chance(0.4) {
                    new["tags"] = .list(
                        (0..<rng.below(3)).map { _ in FieldValue.string(["a", "b", "d"][rng.below(3)]) })
                }
                if rng.chance(0.3) { new.creationDate = Timestamp(millisecondsSince1970: Int64(rng.below(1000))) }
                #expect(layered.canUpdateInPlace(old, new), "seed \(seed)")
                layered.apply([.update(row, old: old, new: new)])
                live[row] = new
            case 0 where !rows.isEmpty:
                let row = rows[rng.below(rows.count)]
                layered.apply([.delete(row, live[row]!)])
                live[row] = nil
            case 1 where !rows.isEmpty:
                let row = rows[rng.below(rows.count)]
                let new = t.record(Int(next) + 1000, &rng)
                if Int(row) < n {
                    layered.apply([.delete(row, live[row]!), .insert(next, new)])
                    live[row] = nil
                    live[next] = new
                    next += 1
                } else {
                    layered.apply([.update(row, old: live[row]!, new: new)])
                    live[row] = new
                }
            default:
                let new = t.record(Int(next) + 1000, &rng)
                layered.apply([.insert(next, new)])
                live[next] = new
                next += 1
            }
        }
    }

    func compare(_ a: RecordIndexes, _ b: RecordIndexes, seed: UInt64, _ rng: inout SeededRandom) throws {
        #expect(a.rowCount == b.rowCount, "seed \(seed): rowCount")
        let values: [FieldValue] = [
            .string("Bistro"), .string("Café Nord"), .string("Le Dôme"), .string("東京ラーメン"), .string("a"), .string("b"),
            .int64(3), .double(7.5), .int64(20), .date(Timestamp(millisecondsSince1970: 500)),
        ]
        for (field, x) in a.ordered {
            guard let y = b.ordered[field] else { Issue.record("seed \(seed): \(field) missing"); continue }
            #expect(x.count == y.count, "seed \(seed): \(field) count")
            for v in values {
                #expect(x.rows(equalTo: v) == y.rows(equalTo: v), "seed \(seed): \(field) = \(v)")
                #expect(x.count(equalTo: v) == y.count(equalTo: v), "seed \(seed): count \(field) = \(v)")
                for r in [ValueRange(lower: .included(v)), ValueRange(upper: .excluded(v)), .all] {
                    #expect(x.rows(in: r) == y.rows(in: r), "seed \(seed): \(field) in \(r)")
                    // The same rows (each as often: one entry per list element), in any order.
                    #expect(
                        x.unorderedRows(in: r).sorted() == y.rows(in: r).sorted(), "seed \(seed): \(field) set in \(r)")
                    #expect(x.count(in: r) == y.count(in: r), "seed \(seed): count \(field) in \(r)")
                    for dir in [ScanDirection.ascending, .descending] {
                        let all = x.page(r, direction: dir, limit: 10_000)
                        #expect(all == y.page(r, direction: dir, limit: 10_000), "seed \(seed): scan \(field) \(dir)")
                        if let mid = all.dropFirst(all.count / 2).first,
                            let rec = values.first(where: { x.rows(equalTo: $0).contains(mid) })
                        {
                            #expect(
                                x.page(r, direction: dir, after: (rec, mid), limit: 7)
                                    == y.page(r, direction: dir, after: (rec, mid), limit: 7),
                                "seed \(seed): resumed scan \(field)")
                        }
                    }
                }
            }
            for p in [FieldValue.string("B"), .string("Caf"), .string("東")] where !x.family.isFixed {
                #expect(x.rows(beginningWith: p) == y.rows(beginningWith: p), "seed \(seed): \(field) prefix \(p)")
                #expect(
                    x.unorderedRows(beginningWith: p).sorted() == y.rows(beginningWith: p).sorted(),
                    "seed \(seed): \(field) prefix set \(p)")
                #expect(x.count(beginningWith: p) == y.count(beginningWith: p), "seed \(seed)")
            }
            #expect(x.rows(equalToAnyOf: values) == y.rows(equalToAnyOf: values), "seed \(seed): \(field) IN")
            #expect(x.count(equalToAnyOf: values) == y.count(equalToAnyOf: values), "seed \(seed): count \(field) IN")
        }
        if let x = a.text, let y = b.text {
            for q in ["cafe", "the coffee", "quiet late", "dome", "東京", "best", "the"] {
                #expect(x.rows(matchingAny: [q]) == y.rows(matchingAny: [q]), "seed \(seed): text any \(q)")
                #expect(x.rows(matchingAll: [q]) == y.rows(matchingAll: [q]), "seed \(seed): text all \(q)")
                TextTokenizer.forEachGroup(q) { g in
                    for t in g {
                        #expect(x.documentFrequency(token: t) == y.documentFrequency(token: t), "seed \(seed): df \(t)")
                    }
                }
            }
        } else {
            #expect(a.text == nil && b.text == nil)
        }
        for (name, x) in a.spatial {
            guard let y = b.spatial[name] else { continue }
            #expect(x.count == y.count, "seed \(seed): spatial count")
            for _ in 0..<5 {
                let c = Location(latitude: Double(rng.below(180)) - 90, longitude: Double(rng.below(360)) - 180)
                for km in [0.0, 500, 3000, 20_100] {
                    let expected = y.rows(withinKm: km, of: c)
                    #expect(x.rows(withinKm: km, of: c) == expected, "seed \(seed): radius \(km)")
                    #expect(
                        x.rows(withinKm: km, of: c, inclusive: false) == y.rows(withinKm: km, of: c, inclusive: false))
                    // A probe finds the same rows, or gives up (nil) when its node budget is spent:
                    // one node cannot hold more than a leaf's (and the buffer's) rows.
                    #expect(x.probe(withinKm: km, of: c, budget: .max) == expected, "seed \(seed): probe \(km)")
                    #expect(
                        x.probe(withinKm: km, of: c, inclusive: false, budget: .max)
                            == y.rows(withinKm: km, of: c, inclusive: false), "seed \(seed): probe < \(km)")
                    for budget in [0, 1, 4, 16] {
                        let p = x.probe(withinKm: km, of: c, budget: budget)
                        #expect(p == nil || p == expected, "seed \(seed): probe \(km) within \(budget) nodes")
                    }
                    if expected.count > 128 {
                        #expect(x.probe(withinKm: km, of: c, budget: 1) == nil, "seed \(seed): probe gave up")
                    }
                }
                var i1 = x.nearest(to: c)
                var i2 = y.nearest(to: c)
                let h1 = i1.next(25)
                #expect(h1.map(\.row) == i2.next(25).map(\.row), "seed \(seed): nearest")
                if let mid = h1.dropFirst(h1.count / 2).first {
                    var r1 = x.nearest(to: c, after: mid.position)
                    var r2 = y.nearest(to: c, after: mid.position)
                    #expect(r1.next(10).map(\.row) == r2.next(10).map(\.row), "seed \(seed): nearest resumed")
                }
                var m1 = x.nearest(to: c, maxKm: 2000)
                var m2 = y.nearest(to: c, maxKm: 2000)
                #expect(m1.next(1000).map(\.row) == m2.next(1000).map(\.row), "seed \(seed): nearest within")
            }
        }
    }

    /// A row given twice counts once, with its first location: in rows ascending (the previous
    /// row repeated) and in rows out of order alike, the section is that of the pairs without
    /// the repeats.
    @Test(arguments: [4, 5] as [UInt64])
    func aRowGivenTwiceIsPackedOnceWithItsFirstLocation(seed: UInt64) {
        var rng = SeededRandom(seed: seed)
        func place() -> Location {
            Location(
                latitude: Double.random(in: -80...80, using: &rng),
                longitude: Double.random(in: -170...170, using: &rng))
        }
        let unique = (0..<500).map { (RowID($0 * 3), place()) }
        for shuffled in [false, true] {
            var once = unique
            if shuffled { once.shuffle(using: &rng) }
            var twice: [(RowID, Location)] = []
            for (k, p) in once.enumerated() {
                twice.append(p)
                // A repeat right after (ascending input) or later (out of order): a new location.
                if k % 7 == 0 { twice.append((p.0, place())) }
                if shuffled, k % 11 == 5 { twice.append((once[k / 2].0, place())) }
            }
            #expect(StaticRTree.encode(points: twice) == StaticRTree.encode(points: once), "shuffled \(shuffled)")
        }
    }

    /// The mapped R-tree's cell count over a list of ranges (galloping from one bound to the
    /// next) against counting the points' cells one by one: ascending ranges as a covering gives
    /// them, and ranges out of order, overlapping, empty and open-ended.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func cellCountsOverRangesMatchCountingEachPoint(seed: UInt64) throws {
        var rng = SeededRandom(seed: seed)
        // Clustered points: many share a cell, as a city's places do.
        let centres = (0..<5).map { _ in
            (Double.random(in: -60...60, using: &rng), Double.random(in: -170...170, using: &rng))
        }
        let points = (0..<3_000).map { i -> (RowID, Location) in
            let c = centres[rng.below(centres.count)]
            let spread = rng.chance(0.5) ? 0.01 : 2.0
            return (
                RowID(i),
                Location(
                    latitude: c.0 + Double.random(in: -spread...spread, using: &rng),
                    longitude: c.1 + Double.random(in: -spread...spread, using: &rng))
            )
        }
        let b = Bytes(StaticRTree.encode(points: points))
        let tree = try StaticRTree(SectionBytes(b.view, keepAlive: b, name: "spatial:test"))
        let cells = points.map { Geohash.cell(latitude: $0.1.latitude, longitude: $0.1.longitude) }
        func model(_ ranges: [(UInt64, UInt64?)]) -> Int {
            ranges.reduce(0) { n, r in n + cells.filter { c in c >= r.0 && (r.1.map { c < $0 } ?? true) }.count }
        }
        for round in 0..<300 {
            // Bounds near real cells (so ranges hold points), sometimes anywhere.
            var bounds = (0..<1 + rng.below(16)).map { _ -> UInt64 in
                let c = cells[rng.below(cells.count)]
                return rng.chance(0.8) ? c &+ UInt64(rng.below(4)) : rng.next()
            }
            if round % 3 != 0 { bounds.sort() }  // a covering's ranges ascend; the others are shuffled
            var ranges: [(UInt64, UInt64?)] = []
            var i = 0
            while i < bounds.count {
                let lo = bounds[i]
                let hi: UInt64? = i + 1 < bounds.count ? bounds[i + 1] : (rng.chance(0.5) ? nil : lo)
                ranges.append((lo, hi))
                i += 2
            }
            if round % 4 == 1 {
                // Single cells, ascending: each range holds one point or a few, the bounds close.
                ranges = (0..<1 + rng.below(12)).map { _ in cells[rng.below(cells.count)] }.sorted().map {
                    ($0, $0 + 1)
                }
            }
            #expect(tree.cellCount(ranges) == model(ranges), "seed \(seed) round \(round): \(ranges)")
            if let r = ranges.first { #expect(tree.cellCount(r.0, r.1) == model([r]), "seed \(seed) round \(round)") }
        }
    }

    @Test func damagedSectionsFailWithAnErrorNotACrash() throws {
        var rng = SeededRandom(seed: 7)
        let t = RecordIndexesTests()
        let rows = (0..<50).map { (RowID($0), t.record($0, &rng)) }
        for (name, bytes) in RecordIndexes.encodeSections(schema: schema, rows: rows) {
            var cases: [[UInt8]] = [Array(bytes.prefix(bytes.count / 2)), Array(bytes.prefix(10)), []]
            var badMagic = bytes
            badMagic[0] ^= 0xFF
            cases.append(badMagic)
            var badCount = bytes
            for i in 8..<24 where i < badCount.count { badCount[i] = 0xFF }
            cases.append(badCount)
            for c in cases {
                let b = Bytes(c)
                let s = SectionBytes(b.view, keepAlive: b, name: name)
                var threw = false
                do {
                    if name.hasPrefix("ordered:") {
                        _ = try StaticOrdered(s)
                    } else if name.hasPrefix("text") {
                        _ = try StaticText(s)
                    } else {
                        _ = try StaticRTree(s)
                    }
                } catch {
                    threw = true
                    #expect(error.section == name)
                }
                #expect(threw, "\(name): damaged section of \(c.count) bytes was accepted")
            }
            // A damaged section is rebuilt from the rows, not trusted.
            let b = Bytes(Array(bytes.prefix(bytes.count / 2)))
            let idx = RecordIndexes(
                schema: schema, baseRowCount: 50, sections: [name: SectionBytes(b.view, keepAlive: b, name: name)],
                nodeSize: 4
            ) { rows }
            #expect(idx.rebuilt.contains(name))
        }
    }
}

@Suite struct StaticOrderedEncodingTests {
    /// A variable-width section holds exactly the entries sorted by (key, row) without repeats —
    /// the B+tree's order — for keys that tie on their 16 inline bytes and differ in the tail,
    /// tails that are prefixes of others, empty tails and repeated entries, in any input order.
    @Test(arguments: [1, 2, 3]) func variableKeysSortAndDedupeLikeTheModel(seed: UInt64) throws {
        var rng = SeededRandom(seed: seed)
        let prefixes: [UInt64] = [0, 1, 0x6162_6364_6566_6768, .max]
        var pairs: [(VarKey, RowID)] = []
        for _ in 0..<3000 {
            let tail = (0..<Int(rng.next() % 4)).map { _ in UInt8(rng.next() % 3) }
            let k = VarKey(
                a: prefixes[Int(rng.next() % 4)], b: prefixes[Int(rng.next() % 4)], tail: tail)
            pairs.append((k, RowID(rng.next() % 40)))
        }
        pairs += pairs.prefix(500)  // exact repeats
        // The model's order, written independently of VarKey's: inline words, tail bytes, row.
        func less(_ x: (VarKey, RowID), _ y: (VarKey, RowID)) -> Bool {
            if x.0.a != y.0.a { return x.0.a < y.0.a }
            if x.0.b != y.0.b { return x.0.b < y.0.b }
            if x.0.tail != y.0.tail { return x.0.tail.lexicographicallyPrecedes(y.0.tail) }
            return x.1 < y.1
        }
        var model: [(VarKey, RowID)] = []
        for p in pairs.sorted(by: less) where model.last.map({ less($0, p) }) ?? true { model.append(p) }
        let b = Bytes(StaticOrdered.encode(family: .string, variable: pairs))
        let s = try StaticOrdered(SectionBytes(b.view, keepAlive: b, name: "ordered:test"))
        let keys = try #require(s.variable)
        #expect(keys.count == model.count)
        for i in 0..<min(keys.count, model.count) {
            #expect(keys.key(i) == model[i].0 && keys.row(i) == model[i].1, "entry \(i)")
        }
    }
}

// Columns (Sources/Indexes/StaticColumn.swift): filters and sort keys on int64, double, date and
// string fields of base rows read the layers' columns instead of the rows' bytes. Queries over
// several checkpointed layers — rows deleted, updated in place (an ordered field only), replaced,
// added to the delta; values absent, negative, fractional; strings numbered, copied into the
// heap, or too long and read from their rows — answer exactly as a container that never
// checkpointed the same records.

import CirrusTestSupport
import Foundation
import Indexes
import RecordModel
import Testing

@testable import CirrusEmbedded
@testable import CirrusFacade

@Suite struct ColumnQueryTests {
    func record(_ i: Int, v: Int, rng: inout SeededRandom) -> Record {
        var f: RecordFields = ["name": .string("item \(i % 7)"), "v": .int64(Int64(v))]
        if rng.chance(0.8) { f["i"] = .int64(Int64(rng.below(41)) - 20) }
        if rng.chance(0.8) { f["d"] = .double(Double(rng.below(2001)) / 8 - 125) }
        if rng.chance(0.8) { f["t"] = .date(Timestamp(millisecondsSince1970: Int64(rng.below(50)) * 86_400_000 - 10)) }
        if rng.chance(0.5) { f["list"] = .list([.int64(Int64(rng.below(5))), .int64(Int64(rng.below(5)))]) }
        // Strings of every kind a column holds: numbered (few), copied into the heap (a second
        // spelling of one text), held in the row (too long to copy).
        switch rng.below(5) {
        case 0: f["label"] = .string("L\(rng.below(60))")
        case 1: f["label"] = .string(rng.chance(0.5) ? "caf\u{E9} \(i % 3)" : "cafe\u{301} \(i % 3)")
        case 2: f["label"] = .string("L\(rng.below(60)) " + String(repeating: "long ", count: 30))
        case 3: f["label"] = .string("L\(i)")
        default: break
        }
        return rec("r\(i)", "Item", f)
    }

    @Test func filtersAndSortsOnColumnsAnswerLikeRecords() async throws {
        let seed = TestSeed.next()
        var rng = SeededRandom(seed: seed)
        var layeredEnv = TestEnv()
        layeredEnv.checkpointThreshold = 1_000_000
        var plainEnv = TestEnv()
        plainEnv.checkpointThreshold = 1_000_000
        let layered = try layeredEnv.open()
        let plain = try plainEnv.open()
        let a = layered.publicDatabase(as: .user("_u"))
        let b = plain.publicDatabase(as: .user("_u"))
        func apply(saving: [Record], deleting: [RecordID] = []) async throws {
            for db in [a, b] {
                _ = try await db.modifyRecords(saving: saving, deleting: deleting, savePolicy: .allKeys)
            }
        }
        var current: [Int: Record] = [:]
        var saves = (0..<240).map { record($0, v: 0, rng: &rng) }
        for r in saves { current[Int(r.recordID.recordName.dropFirst())!] = r }
        try await apply(saving: saves)
        try layered.checkpoint()
        for round in 0..<3 {
            let ids = current.keys.sorted()
            let gone = Set((0..<8).map { _ in ids[rng.below(ids.count)] })
            try await apply(saving: [], deleting: gone.map { RecordID(recordName: "r\($0)") })
            for g in gone { current[g] = nil }
            // In place: only `v` (an ordered field) changes, so a base row keeps its row.
            saves = current.keys.sorted().filter { _ in rng.chance(0.1) }.map { k in
                var r = current[k]!
                r["v"] = .int64(Int64(round + 1))
                return r
            }
            // Replaced (new values of every field) and new records.
            saves += (0..<12).map { _ in record(rng.below(300), v: round, rng: &rng) }
            for r in saves { current[Int(r.recordID.recordName.dropFirst())!] = r }
            try await apply(saving: saves)
            if round < 2 { try layered.checkpoint() }
        }
        let layers = layered.embedded!.store.snapshot().base.values.map(\.layers.count).max() ?? 0
        #expect(layers >= 2, "seed \(seed): \(layers) layers")
        // The layered table's base rows really are read from columns.
        let table = try #require(layered.embedded!.table(owner: ZoneID.defaultOwnerName, type: "Item").0)
        var out: [FieldValue?] = []
        let sel = FieldSelection(["i", "d", "t", "name"])
        let base = (0..<table.baseCount).filter {
            !table.parts.baseRemoved.contains($0) && !table.parts.overlaid.contains($0)
        }
        let columns = try #require(table.parts.indexes.columnReader(sel))
        #expect(!base.isEmpty && base.allSatisfy { columns.values($0, into: &out) })
        #expect(table.parts.indexes.columnReader(FieldSelection(["list"])) == nil, "lists have no column")
        for row in base {
            let r = try #require(table.record(RowID(row)))
            #expect(table.values(RowID(row), of: sel, columns: columns, into: &out))
            #expect(out == [r["i"], r["d"], r["t"], r["name"]], "seed \(seed): row \(row)")
        }
        // A label too long to copy is read from its row, every other one from its column.
        let labels = try #require(table.parts.indexes.columnReader(FieldSelection(["label"])))
        for row in base {
            let r = try #require(table.record(RowID(row)))
            guard case .string(let label)? = r["label"] else { continue }
            let long = label.hasSuffix("long ")  // 155 bytes or more: more than a column copies
            #expect(labels.values(row, into: &out) == !long, "seed \(seed): row \(row)")
            if !long { #expect(out == [r["label"]], "seed \(seed): row \(row)") }
            let sel = FieldSelection(["label", "i"])
            #expect(table.values(RowID(row), of: sel, columns: table.parts.indexes.columnReader(sel), into: &out))
            #expect(out == [.string(label), r["i"]], "seed \(seed): row \(row)")
        }
        let queries = [
            RecordQuery(recordType: "Item", predicate: "name == 'item 3' AND i > 0"),
            RecordQuery(recordType: "Item", predicate: "name BEGINSWITH 'item' AND d < 0"),
            RecordQuery(
                recordType: "Item", predicate: "name == 'item 5' AND t >= %@",
                arguments: [.value(.date(Timestamp(millisecondsSince1970: 20 * 86_400_000)))]),
            RecordQuery(
                recordType: "Item", predicate: "name != 'item 1' AND i BETWEEN {-5, 5}",
                sortDescriptors: [.field("d", ascending: true)]),
            RecordQuery(
                recordType: "Item", predicate: "name == 'item 2'", sortDescriptors: [.field("t", ascending: false)]),
            RecordQuery(
                recordType: "Item", predicate: "name IN {'item 4', 'item 6'}",
                sortDescriptors: [.field("i", ascending: true), .field("d", ascending: false)]),
            RecordQuery(recordType: "Item", predicate: "v > 0 AND d > -60"),
            RecordQuery(
                recordType: "Item", predicate: "i > 0 AND name != 'item 2'",
                sortDescriptors: [.field("name", ascending: false), .field("t", ascending: true)]),
            RecordQuery(
                recordType: "Item", predicate: "list CONTAINS 3 AND i < 3",
                sortDescriptors: [.field("v", ascending: true)]),
            RecordQuery(
                recordType: "Item", predicate: "label BEGINSWITH 'L1' AND i > 0",
                sortDescriptors: [.field("label", ascending: true)]),
            RecordQuery(
                recordType: "Item", predicate: "i > -10", sortDescriptors: [.field("label", ascending: false)]),
            RecordQuery(recordType: "Item", predicate: "label == 'caf\u{E9} 1' AND d < 50"),
            RecordQuery(recordType: "Item", predicate: "v >= 0 AND label > 'L3'"),
        ]
        // Ordered streams whose pages are large enough to read their sort values from columns
        // (`StreamState.sortKeys`), and small ones that read them through the records.
        let streams = [
            RecordQuery(
                recordType: "Item", predicate: "TRUEPREDICATE", sortDescriptors: [.field("d", ascending: false)]),
            RecordQuery(
                recordType: "Item", predicate: "i >= -20",
                sortDescriptors: [.field("i", ascending: true), .field("t", ascending: false)]),
            RecordQuery(recordType: "Item", predicate: "v >= 0", sortDescriptors: [.field("t", ascending: true)]),
        ]
        for q in queries + streams {
            for limit in [9, 40] {
                let want = try await allPageNames(b, q, limit: limit)
                #expect(try await allPageNames(a, q, limit: limit) == want, "seed \(seed): \(q.predicate) by \(limit)")
            }
        }
        try layered.checkInvariants()
    }
}

// IndexConsistency: a query snapshot's rows and indexes must agree with a full scan of the
// records it should hold — rows, ordered index entries per field, text postings per word,
// spatial points.

import Indexes
import RecordModel
import Testing

@testable import CirrusEmbedded
@testable import CirrusFacade

enum IndexConsistency {
    static func check(_ snap: RecordTypeSnapshot, against expected: [Record], seed: UInt64) throws {
        #expect(snap.rowCount == expected.count, "seed \(seed): \(snap.recordType) rows")
        // Every field of every record is in the (persisted) schema.
        for r in expected {
            for name in r.fields.keys {
                #expect(snap.schema?.fields[name] != nil, "seed \(seed): \(snap.recordType).\(name) not in the schema")
            }
        }
        let rows = snap.allRows()
        #expect(rows == rows.sorted(), "seed \(seed): allRows sorted")
        var byRow: [RowID: Record] = [:]
        for row in rows { byRow[row] = snap.record(row) }
        let want = Dictionary(uniqueKeysWithValues: expected.map { ($0.recordID, $0) })
        let got = Dictionary(uniqueKeysWithValues: byRow.values.map { ($0.recordID, $0) })
        #expect(got == want, "seed \(seed): \(snap.recordType) records")
        for (row, r) in byRow { #expect(snap.row(for: r.recordID) == row, "seed \(seed)") }
        try snap.indexes.checkInvariants()
        #expect(snap.indexes.rowCount == expected.count, "seed \(seed)")
        for (field, index) in snap.indexes.ordered {
            guard case .user(let name) = field else { continue }
            let indexed = index.rows(in: .all)
            var scanned: [RowID] = []
            // Entries are unique per (value, row).
            for (row, r) in byRow { for _ in Set(r.fields[name]?.elements ?? []) { scanned.append(row) } }
            #expect(indexed.sorted() == scanned.sorted(), "seed \(seed): ordered index \(name)")
            for (row, r) in byRow {
                for v in r.fields[name]?.elements ?? [] {
                    #expect(index.rows(equalTo: v).contains(row), "seed \(seed): \(name) = \(v)")
                }
            }
        }
        if let text = snap.indexes.text {
            for word in ["apple", "pear", "plum", "fig", "kiwi", "lime"] {
                let want = byRow.filter { (_, r) in
                    snap.indexes.searchableFields.contains { f in
                        (r.fields[f]?.elements ?? []).contains { v in
                            if case .string(let s) = v { return s.split(separator: " ").contains { $0 == word } }
                            return false
                        }
                    }
                }.keys.sorted()
                #expect(text.rows(matchingAny: [word]) == want, "seed \(seed): text \(word)")
            }
        }
        for (name, index) in snap.indexes.spatial {
            let want = byRow.filter {
                if case .location = $0.value.fields[name] { return true }; return false
            }.keys.sorted()
            let got = index.rows(withinKm: 30_000, of: Location(latitude: 0, longitude: 0)).map { $0 }.sorted()
            #expect(got == want, "seed \(seed): spatial \(name)")
        }
    }
}

// Facade part of the `indexes` suite: building every index of a record type from records, and
// the latency of publishing a one-row commit through RecordIndexStore (copy-on-write snapshots).

import Foundation
import Indexes
import RecordModel

extension IndexesSuite {
    func runFacade(_ data: DataSet, _ rng: inout Rng) {
        let n = data.prices.count
        let schema = RecordTypeSchema(
            name: "Place",
            fields: [
                FieldSchema(name: "price", type: .double, options: [.queryable, .sortable]),
                FieldSchema(name: "name", type: .string, options: [.queryable, .sortable, .searchable]),
                FieldSchema(name: "about", type: .string, options: [.searchable]),
                FieldSchema(name: "location", type: .location, options: [.queryable]),
            ])
        func record(_ i: Int) -> Record {
            Record(
                recordType: "Place", recordID: RecordID(recordName: "p\(i)"),
                fields: [
                    "price": .double(data.prices[i]), "name": .string(data.names[i]),
                    "about": .string(data.texts[i]), "location": .location(data.locations[i]),
                ])
        }
        let rows = (0..<n).map { (RowID($0), record($0)) }
        var built: RecordIndexes?
        let tb = Measure.time { built = RecordIndexes(schema: schema, rows: rows, nodeSize: nodeSize) }
        guard let built else { return }
        Measure.print(Stat(name: "RecordIndexes bulk build (4 fields, 5 indexes)", median: tb, p99: tb, note: "1 run"))
        let store = RecordIndexStore(built)
        Measure.print(
            Measure.run("commit: update 1 row (store holds snapshot)", samples: min(samples, 500), batch: 1) { i in
                let r = rng.below(n)
                var new = rows[r].1
                new["price"] = .double(Double(i))
                new["location"] = .location(data.locations[(r + 1) % n])
                store.commit([.update(RowID(r), old: rows[r].1, new: new)])
                store.commit([.update(RowID(r), old: new, new: rows[r].1)])
            }, note: "per sample: 2 commits (update, revert)")
        Measure.print(
            Measure.run("snapshot()", samples: samples, batch: 64) { _ in
                _ = store.snapshot().rowCount
            })
    }
}

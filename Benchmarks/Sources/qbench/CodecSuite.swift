// The `codec` suite: what building a returned record costs, apart from finding it — a place
// row (as the store writes it: system fields set, one user created and last saved it) decoded
// whole with its segment's name table, its selected values read without building it, and
// encoded. All-matches queries at 1M spend most of their time here (docs/benchmarks.md,
// "Smaller field values, schemas behind one reference, one user id per row").

import ArgumentParser
import CirrusIO
import Foundation
import RecordLog
import RecordModel

struct CodecSuite: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "codec", abstract: "RecordCodec alone: decode, selected values and encode of place rows.")

    @Option(help: "Distinct place rows, decoded in turn (their bytes stay in the caches).") var size = 1_000
    @Option(help: "Samples per timed operation.") var samples = 2000
    @Option(help: "Data seed.") var seed: UInt64 = 42

    func validate() throws {
        guard size >= 1, samples >= 10 else { throw ValidationError("--size must be ≥ 1 and --samples ≥ 10") }
    }

    func run() throws {
        let user = RecordID(recordName: "_bench")
        let saved = Timestamp(millisecondsSince1970: 1_795_730_237_327)
        let records = PlaceSet(size: size, seed: seed).places.map { p -> Record in
            var r = p.record
            r.creationDate = saved
            r.modificationDate = saved
            r.creatorUserRecordID = user
            r.lastModifiedUserRecordID = user
            r.recordChangeTag = "2"
            return r
        }
        let rows = records.map { RecordCodec.encode($0) }
        let names = RecordCodec.NameTable(records: records, recordType: "Place")
        let bytes = rows.reduce(0) { $0 + $1.count } / rows.count
        print("qbench codec: \(rows.count) place rows, \(bytes) bytes on average (seed \(seed))")
        print(
            "operation".padding(toLength: 46, withPad: " ", startingAt: 0) + "median      p99         target      note")

        // Decoded records are kept in a ring, so each decode also frees the record it replaces
        // (as a query's result is freed by its caller).
        var ring = [Record?](repeating: nil, count: 1024)
        var failures = 0
        Measure.print(
            Measure.run("decode a row whole (name table), per row", samples: samples, batch: 64) { i in
                let k = i % rows.count
                let r = rows[k].withUnsafeBytes { try? RecordCodec.decode($0, names: names) }
                if r == nil { failures += 1 }
                ring[i & 1023] = r
            }, note: "and frees the one it replaces")
        let selection = FieldSelection(["kind", "population"])
        var values: [FieldValue?] = []
        Measure.print(
            Measure.run("read 2 fields of a row (no record)", samples: samples, batch: 64) { i in
                let k = i % rows.count
                do {
                    try rows[k].withUnsafeBytes { try RecordCodec.values($0, of: selection, into: &values) }
                } catch {
                    failures += 1
                }
            }, note: "kind, population")
        var sink = 0
        Measure.print(
            Measure.run("encode a record", samples: samples, batch: 64) { i in
                sink &+= RecordCodec.encode(records[i % records.count]).count
            })
        // The figures mean nothing if a row failed to decode or round-trip.
        let roundTrips = rows.indices.allSatisfy { k in
            (rows[k].withUnsafeBytes { try? RecordCodec.decode($0, names: names) }) == records[k]
        }
        guard failures == 0, roundTrips, sink > 0 else {
            let trips = roundTrips ? "ok" : "differ"
            throw ValidationError("codec: \(failures) rows failed to decode; round trips \(trips)")
        }
    }
}

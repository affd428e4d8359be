// The paths issue 52 added to the store: batched saves (a request of saves in a few
// statements), the nearest-first page as one KNN scan checked in Swift (and its fallback when
// rows at one distance straddle the fetched ones), and the administrator's import through COPY.
// Each test states what the item-by-item path, the exact sort or the embedded engine's import
// would give, from the data it wrote.

import CirrusFacade
import CirrusPostgres
import Foundation
import Indexes
import PostgresNIO
import QueryChecker
import RecordModel
import Testing

@Suite(.enabled(if: PG.available, PG.disabledReason))
struct PostgresBatchAndImportTests {
    static let schema = Schema(
        environment: .development,
        recordTypes: [
            RecordTypeSchema(
                name: "Spot",
                fields: [
                    FieldSchema(name: "name", type: .string, options: [.queryable, .sortable, .searchable]),
                    FieldSchema(name: "n", type: .int64, options: [.queryable, .sortable]),
                    FieldSchema(name: "at", type: .location, options: [.queryable]),
                    FieldSchema(name: "blobs", type: .list(.bytes), options: [.queryable]),
                    FieldSchema(name: "ref", type: .reference, options: [.queryable]),
                ])
        ])

    func store(_ name: String, _ db: PostgresTenant.Database = .public) async throws -> PostgresStore {
        let s = try await PG.store(PG.freshContainer(name), db)
        try await s.apply(schema: Self.schema)
        return s
    }

    static func spot(_ name: String, _ n: Int64, at: Location? = nil) -> Record {
        var r = Record(
            recordType: "Spot", recordID: RecordID(recordName: name), fields: ["name": .string(name), "n": .int64(n)])
        if let at { r["at"] = .location(at) }
        return r
    }

    /// The statistics PostgreSQL plans from follow the records a store writes: once 256 records
    /// are written (in any number of requests), the names and the type's table are analyzed —
    /// `reltuples` is -1 until a table is first analyzed or vacuumed.
    @Test func theStoreAnalyzesItsTablesAsTheRecordsGrow() async throws {
        let s = try await store("growth")
        let all = (0..<300).map { Self.spot(String(format: "g%03d", $0), Int64($0)) }
        _ = try await s.modify(saving: Array(all[..<200]), atomically: true)
        _ = try await s.modify(saving: Array(all[200...]), atomically: true)
        let namespace = s.tenant.namespace
        let counts = try await Shards.withConnection(PG.url!) { c in
            var out: [String: Double] = [:]
            let sql =
                "SELECT relname, reltuples::float8 FROM pg_class WHERE relnamespace = "
                + "\(Shards.literal(Shards.quote(namespace)))::regnamespace AND relname IN ('cirrus_names', 'r_Spot')"
            for try await (name, n) in try await c.query(PostgresQuery(unsafeSQL: sql), logger: Shards.logger)
                .decode((String, Double).self)
            {
                out[name] = n
            }
            return out
        }
        #expect(counts == ["cirrus_names": 300, "r_Spot": 300])
        #expect(try await s.records(for: all.map(\.recordID)).count == 300)
    }

    @Test func aBatchOfSavesGivesEachItemTheItemByItemOutcome() async throws {
        let s = try await store("batch")
        // 300 new records in one request: one tag, every record readable, the count right.
        let first = (0..<300).map { Self.spot(String(format: "s%03d", $0), Int64($0)) }
        let saved = try await s.modify(saving: first, policy: .ifServerRecordUnchanged, atomically: true).saved
        #expect(saved.count == 300 && Set(saved.map(\.recordChangeTag)).count == 1)
        #expect(try await s.records(for: first.map(\.recordID)).count == 300)
        // Non-atomic, mixed: a fresh tag, a stale tag, a new record, a value of the wrong type.
        var fresh = saved[0]
        fresh["n"] = .int64(1000)
        var stale = saved[1]
        stale.recordChangeTag = "stale"
        var wrong = saved[2]
        wrong["n"] = .string("not a number")
        let result = try await s.modify(
            saving: [fresh, stale, Self.spot("new", 1), wrong], policy: .ifServerRecordUnchanged,
            atomically: false)
        #expect(result.saved.map(\.recordID.recordName) == ["s000", "new"])
        #expect(result.failures[stale.recordID]?.code == .serverRecordChanged)
        #expect(result.failures[stale.recordID]?.serverRecord?.recordChangeTag == saved[1].recordChangeTag)
        #expect(result.failures[wrong.recordID]?.code == .invalidArguments)
        #expect(try await s.record(for: fresh.recordID)["n"] == .int64(1000))
        // Atomic with one bad item: nothing is written.
        var again = try await s.record(for: fresh.recordID)
        again["n"] = .int64(2000)
        await #expect {
            try await s.modify(saving: [again, Self.spot("never", 1), stale], atomically: true)
        } throws: { e in
            let e = e as! CirrusError
            return e.code == .batchRequestFailed && e.partialErrors[stale.recordID]?.code == .serverRecordChanged
        }
        #expect(try await s.record(for: fresh.recordID)["n"] == .int64(1000))
        #expect(try await s.records(for: [RecordID(recordName: "never")]).isEmpty)
        // changedKeys keeps the server's other fields; a missing list field stays missing (NULL).
        var partial = Record(recordType: "Spot", recordID: fresh.recordID, fields: ["n": .int64(7)])
        partial.recordChangeTag = nil
        let merged = try await s.modify(saving: [partial], policy: .changedKeys).saved[0]
        #expect(merged["name"] == .string("s000") && merged["n"] == .int64(7))
        let q = try await s.query("Spot", "ALL %@ IN %K", [.value(.list([])), .key("blobs")])
        #expect(try await s.records(matching: q).records.isEmpty)
        await s.close()
    }

    @Test func nearestFirstIsExactWhenManyRowsShareADistance() async throws {
        let s = try await store("knn")
        let paris = Location(latitude: 48.8566, longitude: 2.3522)
        // 40 records at one point (KNN cannot order them: the page falls back to the exact sort),
        // 40 spread around it.
        var records = (0..<40).map { Self.spot(String(format: "same%02d", $0), 1, at: paris) }
        records += (0..<40).map { i in
            Self.spot(
                String(format: "near%02d", i), 2,
                at: Location(latitude: 48.8566 + Double(i) * 0.001, longitude: 2.3522 + Double(i % 7) * 0.0005))
        }
        _ = try await s.modify(saving: records, policy: .allKeys)
        let here = Location(latitude: 48.8570, longitude: 2.3530)
        let q = try await s.query("Spot", "TRUEPREDICATE", sortDescriptors: [.distance(field: "at", from: here)])
        // The expected order: squared chord (as the executor computes it), then record name.
        func chord(_ l: Location) -> Double {
            let a = UnitVector(latitude: l.latitude, longitude: l.longitude)
            let b = UnitVector(latitude: here.latitude, longitude: here.longitude)
            return (b.x - a.x) * (b.x - a.x) + (b.y - a.y) * (b.y - a.y) + (b.z - a.z) * (b.z - a.z)
        }
        let expected = records.sorted { x, y in
            guard case .location(let a)? = x["at"], case .location(let b)? = y["at"] else { return false }
            let (ca, cb) = (chord(a), chord(b))
            return ca != cb ? ca < cb : x.recordID.recordName < y.recordID.recordName
        }.map(\.recordID.recordName)
        for size in [1, 7, 20] {
            var got: [String] = []
            var page = try await s.records(matching: q, resultsLimit: size)
            while true {
                got += page.records.map(\.recordID.recordName)
                guard let c = page.cursor else { break }
                page = try await s.records(continuingFrom: c, resultsLimit: size)
            }
            #expect(got == expected, "pages of \(size)")
        }
        await s.close()
    }

    @Test func anImportKeepsSystemFieldsAndRefusesWhatASaveRefuses() async throws {
        let s = try await store("import", .private(owner: "_alice"))
        var given = Self.spot("a", 1)
        given.creationDate = Timestamp(millisecondsSince1970: 1000)
        given.modificationDate = Timestamp(millisecondsSince1970: 2000)
        given.recordChangeTag = "imported"
        given.creatorUserRecordID = RecordID(recordName: "_creator")
        let target = Self.spot("target", 0)
        var source = Self.spot("source", 0)
        source["ref"] = .reference(Reference(recordID: target.recordID, action: .deleteSelf))
        var dangling = Self.spot("dangling", 0)
        dangling["ref"] = .reference(Reference(recordID: RecordID(recordName: "missing"), action: .deleteSelf))
        var zoned = Self.spot("z1", 5)
        zoned.recordID = RecordID(recordName: "z1", zoneID: ZoneID(zoneName: "Trips"))
        let batch1 = [given, target, source, dangling, zoned, Self.spot("a", 9)]
        // A later batch: a new record, a record of the first batch again.
        let batch2 = [Self.spot("b", 2), given]
        let refused = try await s.importing { importer in
            let first = try await importer.add(batch1)
            let second = try await importer.add(batch2)
            return (first.map { ($0.index, $0.error.code) }, second.map { ($0.index, $0.error.code) })
        }
        #expect(refused.0.map(\.0) == [3, 5] && refused.0.map(\.1) == [.referenceViolation, .invalidArguments])
        #expect(refused.1.map(\.0) == [1] && refused.1.map(\.1) == [.invalidArguments])
        let a = try await s.record(for: given.recordID)
        #expect(a.creationDate == given.creationDate && a.modificationDate == given.modificationDate)
        #expect(a.recordChangeTag == "imported" && a.creatorUserRecordID == given.creatorUserRecordID)
        #expect(a["n"] == .int64(1))
        #expect(try await s.record(for: zoned.recordID)["n"] == .int64(5))
        // The reference's rules hold: deleting the target deletes its source.
        try await s.delete(target.recordID)
        #expect(try await s.records(for: [source.recordID]).isEmpty)
        // Importing over existing records replaces them; missing system fields are filled in.
        let updated = try await s.importing { importer in try await importer.add([Self.spot("b", 3)]) }
        #expect(updated.isEmpty)
        let b = try await s.record(for: RecordID(recordName: "b"))
        #expect(b["n"] == .int64(3) && b.recordChangeTag != nil && b.creationDate != nil)
        // Export: every record, zone by zone (the default zone first), each in commit order.
        var names: [String] = []
        try await s.exportRecords { names.append($0.recordID.recordName) }
        #expect(names == ["a", "b", "z1"])
        // A failing import leaves nothing behind.
        struct Stop: Error {}
        await #expect(throws: (any Error).self) {
            try await s.importing { importer in
                _ = try await importer.add([Self.spot("c", 1)])
                throw Stop()
            }
        }
        #expect(try await s.records(for: [RecordID(recordName: "c")]).isEmpty)
        await s.close()
    }
}

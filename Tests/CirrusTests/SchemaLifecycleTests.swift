// Schema lifecycle: just-in-time types and fields in development (automatic index options, no
// system-field indexes), the locked production schema with exactly the declared options,
// promotion, add-only evolution, schema-language import/export, the Users type, and index
// rebuilds when a type's schema changes.

import CirrusTestSupport
import Indexes
import RecordLog
import RecordModel
import Testing

@testable import CirrusEmbedded
@testable import CirrusFacade

private let alice = "_alice"

@Suite struct SchemaLifecycleTests {
    @Test func developmentCreatesTypesAndFieldsWithAutomaticOptions() async throws {
        let c = try TestEnv().open()
        let db = c.privateDatabase(for: alice)
        try await db.save(
            rec(
                "p", "Place",
                [
                    "name": "Louvre", "visits": 3, "loc": .location(Location(latitude: 48.86, longitude: 2.34)),
                    "tags": ["art"],
                ]))
        let t = try #require(c.schema.recordTypes["Place"])
        #expect(t.fields["name"]?.options == [.queryable, .sortable, .searchable])
        #expect(t.fields["visits"]?.options == [.queryable, .sortable])
        #expect(t.fields["loc"]?.options == .queryable)
        #expect(t.fields["tags"]?.type == .list(.string))
        #expect(t.systemFieldOptions.isEmpty)
        #expect(c.schema.recordTypes["Users"] != nil)
        let snap = db.querySnapshot(recordType: "Place")!
        #expect(snap.indexes.catalog.kinds(for: .user("name")) == [.ordered, .text])
        #expect(snap.indexes.catalog.kinds(for: .user("loc")) == [.spatial])
        #expect(snap.indexes.catalog.kinds(for: .system(.recordName)).isEmpty)
        #expect(snap.environment == .development)
        // A new field later rebuilds the type's indexes over the existing rows.
        try await db.save(rec("q", "Place", ["name": "Orsay", "rating": 4.5]))
        let snap2 = db.querySnapshot(recordType: "Place")!
        #expect(snap2.indexes.ordered[.user("rating")]?.count == 1)
        #expect(snap2.indexes.ordered[.user("name")]?.count == 2)
        #expect(db.querySnapshot(recordType: "Nothing")!.schema == nil)
        #expect(db.querySnapshot(recordType: "Nothing")!.rowCount == 0)
    }

    @Test func importedSchemaDecidesIndexesAndSurvivesReopen() async throws {
        let env = TestEnv()
        var c = try env.open()
        try c.importSchema(
            """
            DEFINE SCHEMA
                RECORD TYPE Place (
                    "___recordID" REFERENCE QUERYABLE,
                    name STRING QUERYABLE,
                    visits INT64 SORTABLE,
                    GRANT READ TO "_world"
                );
            """)
        let db = c.privateDatabase(for: alice)
        try await db.save(rec("p", "Place", ["name": "Louvre", "visits": 3]))
        var snap = db.querySnapshot(recordType: "Place")!
        #expect(snap.indexes.catalog.kinds(for: .system(.recordName)) == [.ordered])
        #expect(snap.indexes.text == nil)  // name is not SEARCHABLE
        #expect(snap.schema?.grants == [Grant([.read], to: Grant.world)])
        try c.close()
        c = try env.open()
        snap = c.privateDatabase(for: alice).querySnapshot(recordType: "Place")!
        #expect(snap.indexes.catalog.kinds(for: .system(.recordName)) == [.ordered])
        #expect(c.exportSchema().contains("visits INT64 SORTABLE"))
        // Export → import is a fixed point.
        let text = c.exportSchema()
        try c.importSchema(text)
        #expect(c.exportSchema() == text)
    }

    /// An index added to a checkpointed type is built from its rows in memory at once and reaches
    /// the data segments at the next checkpoint, which `close()` writes for it: later opens map it
    /// instead of building it from every row (at 1M rows, 1.5 s and 1.4 GiB at each open). After a
    /// crash before that, the open that has to build it schedules the rewrite itself. A checkpoint
    /// that writes the type's changes as a new layer rewrites the index segments of the layers it
    /// keeps.
    @Test(arguments: ["close", "crash", "changes"])
    func anIndexAddedAfterACheckpointReachesTheSegments(_ how: String) async throws {
        var env = TestEnv()
        env.checkpointThreshold = 1_000_000
        var o = env.options()
        o.durability = .everyCommit
        func open() throws -> Container { try Container.open(at: env.dir, options: o) }
        func rebuilt(_ c: Container) -> [String] {
            c.privateDatabase(for: alice).querySnapshot(recordType: "Place")?.indexes.rebuilt ?? ["no table"]
        }
        func schema(_ visits: String) -> String {
            """
            DEFINE SCHEMA
                RECORD TYPE Place (
                    "___recordID" REFERENCE QUERYABLE,
                    name STRING QUERYABLE,
                    visits INT64\(visits),
                    GRANT READ TO "_world"
                );
            """
        }
        var c = try open()
        try c.importSchema(schema(""))
        _ = try await c.privateDatabase(for: alice).modifyRecords(
            saving: (0..<40).map { rec("p\($0)", "Place", ["name": .string("n\($0)"), "visits": .int64(Int64($0))]) },
            deleting: [])
        try c.checkpoint()
        try c.close()
        c = try open()
        #expect(rebuilt(c).isEmpty)
        try c.importSchema(schema(" QUERYABLE SORTABLE"))
        if how == "close" {
            try c.close()
        } else if how == "changes" {
            _ = try await c.privateDatabase(for: alice).modifyRecords(
                saving: [rec("p100", "Place", ["name": "n100", "visits": 5])], deleting: [])
            try c.checkpoint()
            #expect(rebuilt(c).isEmpty, "the layer kept by the checkpoint lacks the new index: \(rebuilt(c))")
            try c.close()
        } else {
            env.fs.crash()
            c = try open()
            #expect(!rebuilt(c).isEmpty, "the segments were expected to lack the new index after the crash")
            try c.close()
        }
        c = try open()
        #expect(rebuilt(c).isEmpty, "\(how): \(rebuilt(c)) built from the rows again at open")
        let (page, _) = try await c.privateDatabase(for: alice).records(
            matching: RecordQuery(recordType: "Place", predicate: "visits >= 30"), resultsLimit: 100)
        #expect(page.count == 10)
        try c.checkInvariants()
        try c.close()
    }

    @Test func importIsAddOnly() async throws {
        let c = try TestEnv().open()
        try await c.privateDatabase(for: alice).save(rec("p", "Place", ["name": "Louvre", "visits": 3]))
        let removesField = "DEFINE SCHEMA RECORD TYPE Place (name STRING QUERYABLE);"
        let e1 = await caught { try c.importSchema(removesField) }
        #expect(e1?.code == .serverRejectedRequest)
        #expect(e1?.message.contains("Place.visits would be removed") == true)
        let retypes = "DEFINE SCHEMA RECORD TYPE Place (name STRING, visits DOUBLE);"
        let e2 = await caught { try c.importSchema(retypes) }
        #expect(e2?.message.contains("would change type from INT64 to DOUBLE") == true)
        let removesType = "DEFINE SCHEMA RECORD TYPE Other (x STRING);"
        #expect(
            await caught { try c.importSchema(removesType) }?.message.contains("record type Place would be removed")
                == true)
        let bad = "DEFINE SCHEMA RECORD TYPE Place (name STRING"
        #expect(await code { try c.importSchema(bad) } == .invalidArguments)
        // Adding a field and changing options is fine.
        try c.importSchema(
            "DEFINE SCHEMA RECORD TYPE Place (name STRING SEARCHABLE, visits INT64, extra DOUBLE QUERYABLE);")
        #expect(c.schema.recordTypes["Place"]?.fields["extra"]?.type == .double)
        #expect(c.privateDatabase(for: alice).querySnapshot(recordType: "Place")!.indexes.text != nil)
    }

    @Test func promotionMakesProductionUseExactlyTheDeclaredOptions() async throws {
        let env = TestEnv()
        let dev = try env.open()
        try dev.importSchema("DEFINE SCHEMA RECORD TYPE Place (name STRING QUERYABLE, visits INT64);")
        try await dev.privateDatabase(for: alice).save(rec("p", "Place", ["name": "Louvre", "visits": 3, "auto": "x"]))
        let promoted = try dev.promoteSchema()
        #expect(promoted.environment == .production)
        try dev.close()
        let prod = try env.open(.production)
        #expect(prod.schema.recordTypes["Place"]?.fields["visits"]?.options == [])
        #expect(prod.schema.recordTypes["Place"]?.fields["auto"]?.options == [.queryable, .sortable, .searchable])
        let db = prod.privateDatabase(for: alice)
        try await db.save(rec("p", "Place", ["name": "Louvre", "visits": 3]))
        let snap = db.querySnapshot(recordType: "Place")!
        #expect(snap.environment == .production)
        #expect(snap.indexes.ordered[.user("visits")] == nil)
        #expect(snap.indexes.ordered[.user("name")]?.count == 1)
        // Development data is not production data.
        #expect(snap.rowCount == 1)
        #expect(await code { try prod.promoteSchema() } == .invalidArguments)
        try prod.close()
        // Promoting again after development dropped a field is refused.
        let dev2 = try env.open()
        #expect(throws: Never.self) { try dev2.promoteSchema() }  // unchanged: fine
    }

    @Test func productionImportIsAddOnlyAgainstProduction() async throws {
        let env = TestEnv()
        let dev = try env.open()
        try await dev.privateDatabase(for: alice).save(rec("p", "Place", ["name": "Louvre"]))
        try dev.promoteSchema()
        try dev.close()
        let prod = try env.open(.production)
        #expect(
            await code { try prod.importSchema("DEFINE SCHEMA RECORD TYPE Place (other STRING);") }
                == .serverRejectedRequest)
        try prod.importSchema(
            "DEFINE SCHEMA RECORD TYPE Place (name STRING QUERYABLE SORTABLE SEARCHABLE, more INT64 QUERYABLE);")
        try await prod.privateDatabase(for: alice).save(rec("p", "Place", ["name": "Louvre", "more": 1]))
    }

    @Test func usersTypeExistsAndCannotBeQueried() async throws {
        let c = try TestEnv().open()
        #expect(c.exportSchema().contains("RECORD TYPE Users"))
        #expect(await code { try c.publicDatabase.checkCanRead(recordType: "Users") } == .invalidArguments)
        // A user may save their own Users record in the public database, nobody else's.
        let pub = c.publicDatabase(as: .user(alice))
        try await pub.save(rec(alice, "Users", ["nickname": "al"]))
        #expect(await code { try await pub.save(rec("_bob", "Users")) } == .permissionFailure)
        #expect(await code { try await c.privateDatabase(for: alice).save(rec(alice, "Users")) } == .permissionFailure)
    }
}

// The schema lifecycle through `Container` on both engines: a schema imported from CloudKit's
// schema language (`applySchema`), the add-only rule, unreadable text, and promotion from
// development to production (`promoteSchemaToProduction`), after which production is locked:
// a new type or field is refused, a declared one is saved, and a query needing an index the
// schema does not declare is refused. Expectations come from the schema text written here.

import Cirrus
import CirrusPostgres
import CirrusTestSupport
import Foundation
import RecordModel
import Testing

private let placeSchema = """
    DEFINE SCHEMA
        RECORD TYPE Place (
            "___recordID" REFERENCE QUERYABLE,
            name STRING QUERYABLE SORTABLE,
            visits INT64 QUERYABLE,
            note STRING,
            GRANT WRITE TO "_creator",
            GRANT CREATE TO "_icloud",
            GRANT READ TO "_world"
        );
    """

@Suite(.serialized) struct SchemaLifecycleEngineTests {
    /// The production container of `f`'s development one, on the same engine.
    func production(of f: EngineFixture) async throws -> Container {
        if let directory = f.directory { return try Container.open(at: directory, environment: .production) }
        let id = try #require(f.container.postgres?.containerID)
        return try await Container.open(postgres: PG.url!, containerID: id, environment: .production)
    }

    @Test(arguments: Engine.available)
    func importedSchemasAreAddOnlyAndPromotionLocksProduction(_ engine: Engine) async throws {
        let f = try await EngineFixture(engine)
        let imported = try await f.container.applySchema(placeSchema)
        #expect(imported.recordTypes["Place"]?.fields.keys.sorted() == ["name", "note", "visits"])
        #expect(f.container.schema.recordTypes["Place"]?.fields["name"]?.options == [.queryable, .sortable])
        #expect(f.container.schema.recordTypes["Users"] != nil, "the Users type is kept")
        // Importing the same text again changes nothing; removing a field or retyping it is refused.
        #expect(try await f.container.applySchema(placeSchema) == imported)
        let removed = placeSchema.replacingOccurrences(of: "note STRING,", with: "")
        #expect(await code { try await f.container.applySchema(removed) } == .serverRejectedRequest)
        let retyped = placeSchema.replacingOccurrences(of: "note STRING,", with: "note INT64,")
        #expect(await code { try await f.container.applySchema(retyped) } == .serverRejectedRequest)
        #expect(await code { try await f.container.applySchema("DEFINE SCHEMA RECORD TYPE (") } == .invalidArguments)
        #expect(f.container.schema == imported, "a refused import changes nothing")
        // Development still grows the schema just in time.
        let dev = f.container.publicDatabase(as: .user("_alice"))
        _ = try await dev.save(
            Record(recordType: "Place", recordID: RecordID(recordName: "p1"), fields: ["name": "Louvre", "rank": 1]))
        #expect(f.container.schema.recordTypes["Place"]?.fields["rank"] != nil)

        // Promotion: production gets development's types, fields and options.
        let promoted = try await f.container.promoteSchemaToProduction()
        #expect(promoted.environment == .production)
        #expect(promoted.recordTypes["Place"]?.fields.keys.sorted() == ["name", "note", "rank", "visits"])
        let prod = try await production(of: f)
        #expect(prod.schema.recordTypes["Place"]?.fields["visits"]?.options == [.queryable])
        #expect(await code { try await prod.promoteSchemaToProduction() } == .invalidArguments)
        let db = prod.publicDatabase(as: .user("_bob"))
        let saved = try await db.save(
            Record(recordType: "Place", recordID: RecordID(recordName: "q1"), fields: ["name": "Orsay", "visits": 3]))
        #expect(saved.recordChangeTag != nil)
        // Production is locked: no new type, no new field.
        #expect(
            await code {
                try await db.save(Record(recordType: "Museum", recordID: RecordID(recordName: "m"), fields: ["x": 1]))
            } == .serverRejectedRequest)
        #expect(
            await code {
                try await db.save(
                    Record(recordType: "Place", recordID: RecordID(recordName: "q2"), fields: ["color": "red"]))
            } == .serverRejectedRequest)
        // Queries follow the declared options: `visits` is queryable, `note` is not.
        let q = RecordQuery(recordType: "Place", predicate: "visits == 3")
        #expect(try await db.records(matching: q).matchResults.map(\.0.recordName) == ["q1"])
        let unindexed = RecordQuery(recordType: "Place", predicate: "note == 'x'")
        #expect(await code { try await db.records(matching: unindexed) } == .invalidArguments)
        // Promoting again with nothing new changes nothing (a container directory's production
        // store takes one writer: its container is closed first).
        let before = prod.schema
        try prod.close()
        #expect(try await f.container.promoteSchemaToProduction() == before)
        try await f.close()
    }
}

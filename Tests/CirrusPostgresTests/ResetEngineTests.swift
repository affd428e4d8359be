// Reset of the development environment on both engines (`Container.resetDevelopment(at:)` for a
// directory, `resetDevelopment(postgres:containerID:)` on PostgreSQL): refused while development
// is open; once it is closed, the schema (but `Users`), records, zones, subscriptions and the
// cursor secret go, and production is left as it was.

import Cirrus
import CirrusPostgres
import CirrusTestSupport
import Foundation
import RecordModel
import Testing

@Suite(.serialized) struct ResetEngineTests {
    @Test(arguments: Engine.available)
    func resetEmptiesDevelopmentAndLeavesProduction(_ engine: Engine) async throws {
        let f = try await EngineFixture(engine)
        let dev = f.container
        let containerID = dev.postgres?.containerID
        func open(_ environment: Environment) async throws -> Container {
            if let directory = f.directory { return try Container.open(at: directory, environment: environment) }
            return try await Container.open(
                postgres: try #require(PG.url), containerID: try #require(containerID), environment: environment)
        }
        func reset() async throws {
            if let directory = f.directory {
                try Container.resetDevelopment(at: directory)
            } else {
                try await Container.resetDevelopment(
                    postgres: try #require(PG.url), containerID: try #require(containerID))
            }
        }
        let alice = dev.privateDatabase(for: "_alice")
        let zone = try await alice.save(zone: ZoneID(zoneName: "Trips"))
        _ = try await alice.save(rec("r1", "Note", ["n": 1]))
        _ = try await alice.save(rec("z1", "Note", zone: zone, ["n": 2]))
        _ = try await alice.save(Subscription(id: "s", recordType: "Note", predicate: "n > 0"))
        let page = try await alice.records(
            matching: RecordQuery(recordType: "Note", predicate: "TRUEPREDICATE"), resultsLimit: 1)
        let token = alice.token(for: try #require(page.queryCursor))
        _ = try await dev.promoteSchemaToProduction()
        let prod = try await open(.production)
        _ = try await prod.privateDatabase(for: "_alice").save(rec("kept", "Note", ["n": 3]))
        let prodSchema = prod.schema
        // Refused while development is open; nothing changes.
        #expect(await code { try await reset() } == .internalError)
        #expect(try await alice.record(for: rid("r1"))["n"] == 1)
        try dev.close()
        try await reset()
        let fresh = try await open(.development)
        #expect(fresh.schema.recordTypes.keys.sorted() == ["Users"])
        let db = fresh.privateDatabase(for: "_alice")
        #expect(await code { try await db.record(for: rid("r1")) } == .unknownItem)
        #expect(try await db.allZones() == [.default])
        #expect(try await db.allSubscriptions().isEmpty)
        #expect(await code { try db.cursor(fromToken: token) } == .invalidArguments, "a new cursor secret")
        // Production as it was.
        #expect(prod.schema == prodSchema)
        #expect(try await prod.privateDatabase(for: "_alice").record(for: rid("kept"))["n"] == 3)
        try fresh.close()
        try prod.close()
        if let directory = f.directory { try? FileManager.default.removeItem(atPath: directory) }
    }
}

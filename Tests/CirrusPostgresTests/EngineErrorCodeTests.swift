// One test per CloudKit error code the façade raises, each asserting the code number, that the
// message names the record or zone, and that nothing was written when the call failed — on
// every engine this run reaches (`Engine.available`: the embedded one, and PostgreSQL when
// CIRRUS_POSTGRES_URL is set), with the same assertions. Each test opens a fresh container
// (on PostgreSQL its own container id) and closes it.
//
// Embedded-only, in Tests/CirrusTests/ErrorCodeTests.swift, because what they need exists only
// for a container directory:
// - internalError writing a read-only container: read-only is an option of `Container.open(at:)`
//   (a directory opened by a reader); `Container.open(postgres:)` has no read-only mode.
// - changeTokenExpired for a token compaction made too old: PostgreSQL keeps tombstones until
//   their zone is deleted and has no compaction (PostgresStore+Changes.swift), so no token of a
//   live zone expires there. The unknown-token case runs here, on both.
// The code numbers and zoneBusy stay there too: properties of `CirrusError`, no engine involved.
// quotaExceeded is QuotaEngineTests' (both engines: each takes its quota its own way, an option
// of the directory or of `Container.open(postgres:…)`).
//
// serverRejectedRequest in production promotes the development schema
// (`EngineFixture.reopenPromoted()`); everything else is the same calls on both. These tests are
// the contract, not a list of what passes: a façade promise the PostgreSQL backend broke would
// fail here.

import Cirrus
import CirrusPostgres
import CirrusTestSupport
import RecordModel
import Testing

private let alice = "_alice"
private let bob = "_bob"

@Suite(.serialized) struct EngineErrorCodeTests {
    @Test(arguments: Engine.available)
    func partialFailureInTheDefaultZone(_ engine: Engine) async throws {
        try await withFixture(engine) { f in
            let db = f.container.privateDatabase(for: alice)
            let r = try await db.modifyRecords(saving: [rec("ok"), rec("bad", ["1x": 1])], deleting: [rid("missing")])
            let p = try #require(r.partialFailure)
            #expect(p.code == .partialFailure && p.errorCode == 2)
            #expect(p.partialErrors[rid("bad")]?.code == .invalidArguments)
            #expect(p.partialErrors[rid("missing")]?.code == .unknownItem)
            #expect(p.partialErrors[rid("ok")] == nil)
            #expect(try await db.record(for: rid("ok")).recordID.recordName == "ok")  // the good item was saved
            #expect(throws: CirrusError.self) { try r.get() }
        }
    }

    @Test(arguments: Engine.available)
    func notAuthenticatedForAnonymousWrites(_ engine: Engine) async throws {
        try await withFixture(engine) { f in
            let c = f.container
            #expect(await code { try await c.publicDatabase.save(rec("a")) } == .notAuthenticated)
            #expect(
                await code { try await c.privateDatabase(for: alice).acting(as: .anonymous).record(for: rid("a")) }
                    == .notAuthenticated)
        }
    }

    @Test(arguments: Engine.available)
    func permissionFailureWritingAnotherCreatorsPublicRecord(_ engine: Engine) async throws {
        try await withFixture(engine) { f in
            let c = f.container
            let saved = try await c.publicDatabase(as: .user(alice)).save(rec("a", ["n": 1]))
            var mine = saved
            mine["n"] = 2
            let e = await code { try await c.publicDatabase(as: .user(bob)).save(mine) }
            #expect(e == .permissionFailure)
            #expect(
                await code { try await c.publicDatabase(as: .user(bob)).deleteRecord(withID: rid("a")) }
                    == .permissionFailure)
            #expect(try await c.publicDatabase.record(for: rid("a"))["n"] == 1)
        }
    }

    @Test(arguments: Engine.available)
    func unknownItemForMissingRecords(_ engine: Engine) async throws {
        try await withFixture(engine) { f in
            let c = f.container
            let error = try #require(
                await caught { try await c.privateDatabase(for: alice).record(for: rid("nope")) })
            #expect(error.code == .unknownItem)
            #expect(error.recordID == rid("nope"))
            #expect("\(error)".contains("record \"nope\""))
            // A save carrying a change tag for a record the server no longer has.
            var r = rec("gone")
            r.recordChangeTag = "abc"
            #expect(await code { try await c.privateDatabase(for: alice).save(r) } == .unknownItem)
        }
    }

    @Test(arguments: Engine.available)
    func invalidArgumentsForBadRecords(_ engine: Engine) async throws {
        try await withFixture(engine) { f in
            let db = f.container.privateDatabase(for: alice)
            #expect(await code { try await db.save(rec("bad name")) } == .invalidArguments)
            #expect(await code { try await db.save(rec("a", ["_x": 1])) } == .invalidArguments)
            _ = try await db.save(rec("b", ["n": 1]))
            // Retyping a field by saving another type of value.
            #expect(await code { try await db.save(rec("c", ["n": "one"])) } == .invalidArguments)
            #expect(await code { try db.checkCanRead(recordType: "Users") } == .invalidArguments)
        }
    }

    @Test(arguments: Engine.available)
    func serverRecordChangedCarriesTheServerRecord(_ engine: Engine) async throws {
        try await withFixture(engine) { f in
            let db = f.container.privateDatabase(for: alice)
            let v1 = try await db.save(rec("a", ["n": 1]))
            var v2 = v1
            v2["n"] = 2
            let saved2 = try await db.save(v2)
            var stale = v1
            stale["n"] = 3
            let error = try #require(await caught { try await db.save(stale) })
            #expect(error.code == .serverRecordChanged)
            #expect(error.serverRecord == saved2)
            // A new record without a tag whose name exists is also a conflict.
            #expect(await code { try await db.save(rec("a", ["n": 9])) } == .serverRecordChanged)
            // The other policies overwrite.
            #expect(try await db.save(stale, savePolicy: .allKeys)["n"] == 3)
        }
    }

    @Test(arguments: Engine.available)
    func serverRejectedRequestForProductionSchemaViolations(_ engine: Engine) async throws {
        try await withFixture(engine) { f in
            try await f.container.privateDatabase(for: alice).save(rec("a", ["n": 1]))
            let prod = try await f.reopenPromoted()
            let db = prod.privateDatabase(for: alice)
            #expect(await code { try await db.save(rec("p", "Unknown")) } == .serverRejectedRequest)
            #expect(await code { try await db.save(rec("p", ["other": 1])) } == .serverRejectedRequest)
            #expect(try await db.save(rec("p", ["n": 5]))["n"] == 5)
            try prod.close()
        }
    }

    @Test(arguments: Engine.available)
    func constraintViolationWhenARecordNameChangesType(_ engine: Engine) async throws {
        try await withFixture(engine) { f in
            let db = f.container.privateDatabase(for: alice)
            try await db.save(rec("a", "Note"))
            #expect(await code { try await db.save(rec("a", "Place"), savePolicy: .allKeys) } == .constraintViolation)
        }
    }

    @Test(arguments: Engine.available)
    func operationCancelledInACancelledTask(_ engine: Engine) async throws {
        try await withFixture(engine) { f in
            let db = f.container.privateDatabase(for: alice)
            let task = Task { () async -> CirrusError.Code? in
                withUnsafeCurrentTask { $0?.cancel() }
                return await code { try await db.save(rec("a")) }
            }
            #expect(await task.value == .operationCancelled)
            #expect(await code { try await db.record(for: rid("a")) } == .unknownItem)
        }
    }

    @Test(arguments: Engine.available)
    func changeTokenExpiredForUnknownTokens(_ engine: Engine) async throws {
        try await withFixture(engine) { f in
            let db = f.container.privateDatabase(for: alice)
            let z = try await db.save(zone: ZoneID(zoneName: "Z"))
            try await db.save(rec("a", zone: z))
            #expect(
                await code { try await db.changes(in: z, since: ChangeToken(data: [1, 2, 3])) } == .changeTokenExpired)
            let fresh = try await db.changes(in: z, since: nil)
            #expect(fresh.changed.count == 1)
        }
    }

    @Test(arguments: Engine.available)
    func changeTokenExpiredForAnotherZonesOrAnEarlierZonesToken(_ engine: Engine) async throws {
        try await withFixture(engine) { f in
            let db = f.container.privateDatabase(for: alice)
            let z = try await db.save(zone: ZoneID(zoneName: "Z"))
            try await db.save(rec("a", zone: z))
            let token = try await db.changes(in: z, since: nil).token
            let y = try await db.save(zone: ZoneID(zoneName: "Y"))
            #expect(await code { try await db.changes(in: y, since: token) } == .changeTokenExpired)
            // A zone of the same name made again is another zone: the old token is older than it.
            try await db.deleteZone(z)
            try await db.save(zone: z)
            #expect(await code { try await db.changes(in: z, since: token) } == .changeTokenExpired)
            #expect(try await db.changes(in: z, since: nil).changed.isEmpty)
        }
    }

    @Test(arguments: Engine.available)
    func batchRequestFailedForTheOtherItemsOfAnAtomicZone(_ engine: Engine) async throws {
        try await withFixture(engine) { f in
            let db = f.container.privateDatabase(for: alice)
            let z = try await db.save(zone: ZoneID(zoneName: "Z"))
            let r = try await db.modifyRecords(
                saving: [rec("a", zone: z), rec("bad", zone: z, ["1x": 1]), rec("d")], deleting: [])
            #expect(r.saveResults[0].1.errorCode == .batchRequestFailed)
            #expect(r.saveResults[1].1.errorCode == .invalidArguments)
            #expect(try r.saveResults[2].1.get().recordID.recordName == "d")  // the default zone item is independent
            #expect(await code { try await db.record(for: rid("a", zone: z)) } == .unknownItem)
        }
    }

    @Test(arguments: Engine.available)
    func badDatabaseForPublicCustomZonesAndDefaultZoneChanges(_ engine: Engine) async throws {
        try await withFixture(engine) { f in
            let c = f.container
            let pub = c.publicDatabase(as: .user(alice))
            #expect(await code { try await pub.save(zone: ZoneID(zoneName: "Z")) } == .badDatabase)
            #expect(await code { try await pub.save(rec("a", zone: ZoneID(zoneName: "Z"))) } == .badDatabase)
            #expect(
                await code { try await c.privateDatabase(for: alice).changes(in: .default, since: nil) }
                    == .badDatabase)
        }
    }

    @Test(arguments: Engine.available)
    func zoneNotFoundForMissingZones(_ engine: Engine) async throws {
        try await withFixture(engine) { f in
            let db = f.container.privateDatabase(for: alice)
            let z = ZoneID(zoneName: "Nope")
            #expect(await code { try await db.save(rec("a", zone: z)) } == .zoneNotFound)
            #expect(await code { try await db.deleteZone(z) } == .zoneNotFound)
            #expect(await code { try await db.changes(in: z, since: nil) } == .zoneNotFound)
            #expect(await code { try await db.record(for: rid("a", zone: z)) } == .zoneNotFound)
        }
    }

    @Test(arguments: Engine.available)
    func limitExceededPast400Items(_ engine: Engine) async throws {
        try await withFixture(engine) { f in
            let db = f.container.privateDatabase(for: alice)
            let many = (0..<401).map { rec("r\($0)") }
            #expect(await code { try await db.modifyRecords(saving: many, deleting: []) } == .limitExceeded)
            _ = try await db.modifyRecords(saving: Array(many.prefix(400)), deleting: []).get()
            #expect(await code { try await db.records(for: many.map(\.recordID)) } == .limitExceeded)
        }
    }

    @Test(arguments: Engine.available)
    func referenceViolationForBadDeleteSelfReferences(_ engine: Engine) async throws {
        try await withFixture(engine) { f in
            let db = f.container.privateDatabase(for: alice)
            let dangling = FieldValue.reference(Reference(recordID: rid("nobody"), action: .deleteSelf))
            #expect(await code { try await db.save(rec("a", ["parent": dangling])) } == .referenceViolation)
            let z = try await db.save(zone: ZoneID(zoneName: "Z"))
            try await db.save(rec("t", zone: z))
            let crossZone = FieldValue.reference(Reference(recordID: rid("t", zone: z), action: .deleteSelf))
            #expect(await code { try await db.save(rec("b", ["parent": crossZone])) } == .referenceViolation)
        }
    }
}

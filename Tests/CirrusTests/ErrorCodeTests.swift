// One test per CloudKit error code the façade raises, each asserting the code number, that the
// message names the record or zone, and that nothing was written when the call failed.

import RecordLog
import RecordModel
import Testing

@testable import Cirrus

private let alice = "_alice"
private let bob = "_bob"

@Suite struct ErrorCodeTests {
    @Test func codeNumbersAreCloudKits() {
        let expected: [CirrusError.Code: Int] = [
            .internalError: 1, .partialFailure: 2, .networkUnavailable: 3, .networkFailure: 4, .notAuthenticated: 9,
            .permissionFailure: 10, .unknownItem: 11,
            .invalidArguments: 12, .serverRecordChanged: 14, .serverRejectedRequest: 15, .constraintViolation: 19,
            .operationCancelled: 20, .changeTokenExpired: 21, .batchRequestFailed: 22, .zoneBusy: 23, .badDatabase: 24,
            .quotaExceeded: 25, .zoneNotFound: 26, .limitExceeded: 27, .referenceViolation: 31,
        ]
        for (c, n) in expected { #expect(c.rawValue == n) }
        #expect(CirrusError.Code.allCases.count == expected.count)
    }

    @Test func internalErrorWhenWritingAReadOnlyContainer() async throws {
        let env = TestEnv()
        try env.open().close()
        let ro = try Container.open(at: env.dir, options: env.options(readOnly: true))
        let e = await code { try await ro.privateDatabase(for: alice).save(rec("a")) }
        #expect(e == .internalError)
    }

    @Test func partialFailureInTheDefaultZone() async throws {
        let c = try TestEnv().open()
        let db = c.privateDatabase(for: alice)
        let r = try await db.modifyRecords(saving: [rec("ok"), rec("bad", ["1x": 1])], deleting: [rid("missing")])
        let p = try #require(r.partialFailure)
        #expect(p.code == .partialFailure && p.errorCode == 2)
        #expect(p.partialErrors[rid("bad")]?.code == .invalidArguments)
        #expect(p.partialErrors[rid("missing")]?.code == .unknownItem)
        #expect(p.partialErrors[rid("ok")] == nil)
        #expect(try await db.record(for: rid("ok")).recordID.recordName == "ok")  // the good item was saved
        #expect(throws: CirrusError.self) { try r.get() }
    }

    @Test func notAuthenticatedForAnonymousWrites() async throws {
        let c = try TestEnv().open()
        #expect(await code { try await c.publicDatabase.save(rec("a")) } == .notAuthenticated)
        #expect(
            await code { try await c.privateDatabase(for: alice).acting(as: .anonymous).record(for: rid("a")) }
                == .notAuthenticated)
    }

    @Test func permissionFailureWritingAnotherCreatorsPublicRecord() async throws {
        let c = try TestEnv().open()
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

    @Test func unknownItemForMissingRecords() async throws {
        let c = try TestEnv().open()
        let error = try #require(await caught { try await c.privateDatabase(for: alice).record(for: rid("nope")) })
        #expect(error.code == .unknownItem)
        #expect(error.recordID == rid("nope"))
        #expect("\(error)".contains("record \"nope\""))
        // A save carrying a change tag for a record the server no longer has.
        var r = rec("gone")
        r.recordChangeTag = "abc"
        #expect(await code { try await c.privateDatabase(for: alice).save(r) } == .unknownItem)
    }

    @Test func invalidArgumentsForBadRecords() async throws {
        let c = try TestEnv().open()
        let db = c.privateDatabase(for: alice)
        #expect(await code { try await db.save(rec("bad name")) } == .invalidArguments)
        #expect(await code { try await db.save(rec("a", ["_x": 1])) } == .invalidArguments)
        _ = try await db.save(rec("b", ["n": 1]))
        // Retyping a field by saving another type of value.
        #expect(await code { try await db.save(rec("c", ["n": "one"])) } == .invalidArguments)
        #expect(await code { try db.checkCanRead(recordType: "Users") } == .invalidArguments)
    }

    @Test func serverRecordChangedCarriesTheServerRecord() async throws {
        let c = try TestEnv().open()
        let db = c.privateDatabase(for: alice)
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

    @Test func serverRejectedRequestForProductionSchemaViolations() async throws {
        let env = TestEnv()
        let dev = try env.open()
        try await dev.privateDatabase(for: alice).save(rec("a", ["n": 1]))
        try dev.promoteSchema()
        try dev.close()
        let prod = try env.open(.production)
        let db = prod.privateDatabase(for: alice)
        #expect(await code { try await db.save(rec("p", "Unknown")) } == .serverRejectedRequest)
        #expect(await code { try await db.save(rec("p", ["other": 1])) } == .serverRejectedRequest)
        #expect(try await db.save(rec("p", ["n": 5]))["n"] == 5)
    }

    @Test func constraintViolationWhenARecordNameChangesType() async throws {
        let c = try TestEnv().open()
        let db = c.privateDatabase(for: alice)
        try await db.save(rec("a", "Note"))
        #expect(await code { try await db.save(rec("a", "Place"), savePolicy: .allKeys) } == .constraintViolation)
    }

    @Test func operationCancelledInACancelledTask() async throws {
        let c = try TestEnv().open()
        let db = c.privateDatabase(for: alice)
        let task = Task { () async -> CirrusError.Code? in
            withUnsafeCurrentTask { $0?.cancel() }
            return await code { try await db.save(rec("a")) }
        }
        #expect(await task.value == .operationCancelled)
        #expect(await code { try await db.record(for: rid("a")) } == .unknownItem)
    }

    @Test func changeTokenExpiredForUnknownAndCompactedTokens() async throws {
        let c = try TestEnv().open()
        let db = c.privateDatabase(for: alice)
        let z = try await db.save(zone: ZoneID(zoneName: "Z"))
        try await db.save(rec("a", zone: z))
        let page = try await db.changes(in: z, since: nil)
        #expect(await code { try await db.changes(in: z, since: ChangeToken(data: [1, 2, 3])) } == .changeTokenExpired)
        try await db.save(rec("b", zone: z))
        try c.compact()
        #expect(await code { try await db.changes(in: z, since: page.token) } == .changeTokenExpired)
        let fresh = try await db.changes(in: z, since: nil)
        #expect(fresh.changed.count == 2)
    }

    @Test func batchRequestFailedForTheOtherItemsOfAnAtomicZone() async throws {
        let c = try TestEnv().open()
        let db = c.privateDatabase(for: alice)
        let z = try await db.save(zone: ZoneID(zoneName: "Z"))
        let r = try await db.modifyRecords(
            saving: [rec("a", zone: z), rec("bad", zone: z, ["1x": 1]), rec("d")], deleting: [])
        #expect(r.saveResults[0].1.errorCode == .batchRequestFailed)
        #expect(r.saveResults[1].1.errorCode == .invalidArguments)
        #expect(try r.saveResults[2].1.get().recordID.recordName == "d")  // the default zone item is independent
        #expect(await code { try await db.record(for: rid("a", zone: z)) } == .unknownItem)
    }

    @Test func zoneBusyIsReservedButNeverRaised() {
        // Writes serialize on the container's write lock instead of failing with zoneBusy.
        #expect(CirrusError(.zoneBusy, "x").errorCode == 23)
    }

    @Test func badDatabaseForPublicCustomZonesAndDefaultZoneChanges() async throws {
        let c = try TestEnv().open()
        let pub = c.publicDatabase(as: .user(alice))
        #expect(await code { try await pub.save(zone: ZoneID(zoneName: "Z")) } == .badDatabase)
        #expect(await code { try await pub.save(rec("a", zone: ZoneID(zoneName: "Z"))) } == .badDatabase)
        #expect(
            await code { try await c.privateDatabase(for: alice).changes(in: .default, since: nil) } == .badDatabase)
    }

    @Test func quotaExceededPastTheRecordQuota() async throws {
        let c = try TestEnv().open(quota: 2)
        let db = c.privateDatabase(for: alice)
        try await db.save(rec("a"))
        try await db.save(rec("b"))
        #expect(await code { try await db.save(rec("c")) } == .quotaExceeded)
        try await db.deleteRecord(withID: rid("a"))
        try await db.save(rec("c"))
    }

    @Test func zoneNotFoundForMissingZones() async throws {
        let c = try TestEnv().open()
        let db = c.privateDatabase(for: alice)
        let z = ZoneID(zoneName: "Nope")
        #expect(await code { try await db.save(rec("a", zone: z)) } == .zoneNotFound)
        #expect(await code { try await db.deleteZone(z) } == .zoneNotFound)
        #expect(await code { try await db.changes(in: z, since: nil) } == .zoneNotFound)
        #expect(await code { try await db.record(for: rid("a", zone: z)) } == .zoneNotFound)
    }

    @Test func limitExceededPast400Items() async throws {
        let c = try TestEnv().open()
        let db = c.privateDatabase(for: alice)
        let many = (0..<401).map { rec("r\($0)") }
        #expect(await code { try await db.modifyRecords(saving: many, deleting: []) } == .limitExceeded)
        _ = try await db.modifyRecords(saving: Array(many.prefix(400)), deleting: []).get()
        #expect(await code { try await db.records(for: many.map(\.recordID)) } == .limitExceeded)
    }

    @Test func referenceViolationForBadDeleteSelfReferences() async throws {
        let c = try TestEnv().open()
        let db = c.privateDatabase(for: alice)
        let dangling = FieldValue.reference(Reference(recordID: rid("nobody"), action: .deleteSelf))
        #expect(await code { try await db.save(rec("a", ["parent": dangling])) } == .referenceViolation)
        let z = try await db.save(zone: ZoneID(zoneName: "Z"))
        try await db.save(rec("t", zone: z))
        let crossZone = FieldValue.reference(Reference(recordID: rid("t", zone: z), action: .deleteSelf))
        #expect(await code { try await db.save(rec("b", ["parent": crossZone])) } == .referenceViolation)
    }
}

extension Result where Failure == CirrusError {
    var errorCode: CirrusError.Code? {
        if case .failure(let e) = self { return e.code }
        return nil
    }
}

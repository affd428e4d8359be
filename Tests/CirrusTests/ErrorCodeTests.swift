// The error codes whose cause exists only on the embedded engine (a container directory), and
// the code numbers themselves. One test per case, each asserting the code and that nothing was
// written when the call failed.
//
// Every other error-code test describes façade behaviour and runs on both engines, the embedded
// one and PostgreSQL, with the same assertions: Tests/CirrusPostgresTests/EngineErrorCodeTests.swift
// (that target depends on CirrusPostgres; this one does not). These stay here, on TestEnv's
// in-memory directory, because:
// - internalError writing a read-only container: read-only is an option of opening a
//   directory; `Container.open(postgres:)` has no read-only mode.
// - changeTokenExpired for a compacted token: compaction rewrites the directory's log and drops
//   old tombstones; PostgreSQL keeps tombstones until their zone is deleted and never compacts,
//   so no token of a live zone expires there (the unknown-token case runs on both engines).
// - quotaExceeded on TestEnv's directory (the same rule on both engines: QuotaEngineTests in
//   Tests/CirrusPostgresTests).
// - the code numbers and zoneBusy: properties of `CirrusError`, no engine involved.

import CirrusTestSupport
import RecordLog
import RecordModel
import Testing

@testable import CirrusEmbedded
@testable import CirrusFacade

private let alice = "_alice"

@Suite struct ErrorCodeTests {
    @Test func codeNumbersAreCloudKits() {
        // CloudKit's CKError.Code raw values (CloudKit/CKError.h).
        let expected: [CirrusError.Code: Int] = [
            .internalError: 1, .partialFailure: 2, .networkUnavailable: 3, .networkFailure: 4, .badContainer: 5,
            .serviceUnavailable: 6, .requestRateLimited: 7, .missingEntitlement: 8, .notAuthenticated: 9,
            .permissionFailure: 10, .unknownItem: 11, .invalidArguments: 12, .resultsTruncated: 13,
            .serverRecordChanged: 14, .serverRejectedRequest: 15, .assetFileNotFound: 16, .assetFileModified: 17,
            .incompatibleVersion: 18, .constraintViolation: 19, .operationCancelled: 20, .changeTokenExpired: 21,
            .batchRequestFailed: 22, .zoneBusy: 23, .badDatabase: 24, .quotaExceeded: 25, .zoneNotFound: 26,
            .limitExceeded: 27, .userDeletedZone: 28, .tooManyParticipants: 29, .alreadyShared: 30,
            .referenceViolation: 31, .managedAccountRestricted: 32, .participantMayNeedVerification: 33,
            .serverResponseLost: 34, .assetNotAvailable: 35, .accountTemporarilyUnavailable: 36,
        ]
        for (c, n) in expected { #expect(c.rawValue == n) }
        #expect(CirrusError.Code.allCases.count == expected.count)
    }

    /// An error is one reference wide (its details boxed): a query's results hold a
    /// `Result<Record, CirrusError>` per record (about 170 bytes an element with the details inline). A change to a copy leaves the original as it was.
    @Test func errorsAreOneWordAndCopiedOnWrite() {
        #expect(MemoryLayout<CirrusError>.size == MemoryLayout<Int>.size)
        // A record or an error, and the case: two words.
        #expect(MemoryLayout<Result<Record, CirrusError>>.stride == 2 * MemoryLayout<Int>.size)
        let original = CirrusError(.unknownItem, "gone", recordID: RecordID(recordName: "a"))
        var copy = original
        copy.code = .partialFailure
        copy.partialErrors[RecordID(recordName: "b")] = CirrusError(.zoneBusy, "busy")
        copy.message += " twice"
        #expect(original.code == .unknownItem && original.message == "gone" && original.partialErrors.isEmpty)
        #expect(copy.code == .partialFailure && copy.message == "gone twice" && copy.partialErrors.count == 1)
        #expect(copy.recordID == original.recordID)
    }

    @Test func internalErrorWhenWritingAReadOnlyContainer() async throws {
        let env = TestEnv()
        try env.open().close()
        let ro = try Container.open(at: env.dir, options: env.options(readOnly: true))
        let e = await code { try await ro.privateDatabase(for: alice).save(rec("a")) }
        #expect(e == .internalError)
    }

    @Test func changeTokenExpiredForCompactedTokens() async throws {
        let c = try TestEnv().open()
        let db = c.privateDatabase(for: alice)
        let z = try await db.save(zone: ZoneID(zoneName: "Z"))
        try await db.save(rec("a", zone: z))
        let page = try await db.changes(in: z, since: nil)
        try await db.save(rec("b", zone: z))
        try c.compact()
        #expect(await code { try await db.changes(in: z, since: page.token) } == .changeTokenExpired)
        let fresh = try await db.changes(in: z, since: nil)
        #expect(fresh.changed.count == 2)
    }

    @Test func zoneBusyIsReservedButNeverRaised() {
        // Writes serialize on the container's write lock instead of failing with zoneBusy.
        #expect(CirrusError(.zoneBusy, "x").errorCode == 23)
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
}

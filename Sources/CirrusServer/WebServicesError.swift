// WebServicesError: CloudKit Web Services' error object and its HTTP status.
//
//   {"uuid": "…", "serverErrorCode": "NOT_FOUND", "reason": "record not found", "recordName": "n1"}
//
// The codes and statuses are CloudKit's (docs/web-services.md has the table). Cirrus's errors
// (CirrusError, with CKError numbers) map onto them in `init(_:)`; codes CloudKit Web Services
// does not have (changeTokenExpired, limitExceeded, badDatabase) become BAD_REQUEST with the
// reason saying which.

import Cirrus
import Foundation
import RecordModel

/// One CloudKit Web Services error: the response body of a failed request, or one element of a
/// `records` list for an item that failed.
public struct WebServicesError: Error, Sendable, Equatable, CustomStringConvertible {
    /// CloudKit's `serverErrorCode` values, with their HTTP statuses.
    public enum Code: String, Sendable, CaseIterable {
        case accessDenied = "ACCESS_DENIED"
        case atomicError = "ATOMIC_ERROR"
        case authenticationFailed = "AUTHENTICATION_FAILED"
        case authenticationRequired = "AUTHENTICATION_REQUIRED"
        case badRequest = "BAD_REQUEST"
        case conflict = "CONFLICT"
        case exists = "EXISTS"
        case internalError = "INTERNAL_ERROR"
        case notFound = "NOT_FOUND"
        case quotaExceeded = "QUOTA_EXCEEDED"
        case throttled = "THROTTLED"
        case tryAgainLater = "TRY_AGAIN_LATER"
        case validatingReferenceError = "VALIDATING_REFERENCE_ERROR"
        case zoneNotFound = "ZONE_NOT_FOUND"

        /// The HTTP status CloudKit answers with.
        public var status: Int {
            switch self {
            case .accessDenied: 403
            case .atomicError, .badRequest: 400
            case .authenticationFailed: 401
            case .authenticationRequired: 421
            case .conflict, .exists: 409
            case .internalError: 500
            case .notFound, .zoneNotFound: 404
            case .quotaExceeded: 413
            case .throttled: 429
            case .tryAgainLater: 503
            case .validatingReferenceError: 412
            }
        }
    }

    /// The `serverErrorCode`.
    public var code: Code
    /// Why, in words (`reason`).
    public var reason: String
    /// The record the error is about, for per-record errors.
    public var recordName: String?
    /// The zone the error is about, for per-zone errors.
    public var zoneID: ZoneID?
    /// For a CONFLICT on save: the server's version of the record.
    public var serverRecord: Record?
    /// For TRY_AGAIN_LATER: seconds to wait before retrying (`retryAfter` in the JSON).
    public var retryAfter: Double?

    /// An error with its code and reason.
    public init(_ code: Code, _ reason: String, recordName: String? = nil, zoneID: ZoneID? = nil) {
        self.code = code
        self.reason = reason
        self.recordName = recordName
        self.zoneID = zoneID
    }

    /// The Web Services form of a Cirrus error.
    public init(_ e: CirrusError) {
        let code: Code
        var reason = e.message
        switch e.code {
        case .internalError, .partialFailure, .operationCancelled: code = .internalError
        case .notAuthenticated: code = .authenticationRequired
        case .permissionFailure: code = .accessDenied
        case .unknownItem: code = .notFound
        case .invalidArguments, .serverRejectedRequest: code = .badRequest
        case .serverRecordChanged: code = .conflict
        case .constraintViolation: code = .exists
        case .batchRequestFailed: code = .atomicError
        case .zoneBusy, .networkUnavailable, .networkFailure, .serviceUnavailable: code = .tryAgainLater
        case .quotaExceeded: code = .quotaExceeded
        case .zoneNotFound: code = .zoneNotFound
        case .referenceViolation: code = .validatingReferenceError
        case .changeTokenExpired:
            code = .badRequest
            reason = "change token expired: \(e.message); fetch again without a token"
        case .limitExceeded:
            code = .badRequest
            reason = "limit exceeded: \(e.message)"
        case .badDatabase:
            code = .badRequest
            reason = "not supported by this database or zone: \(e.message)"
        // CloudKit's codes that no engine raises (CirrusError.Code), in their nearest Web
        // Services form.
        case .requestRateLimited: code = .throttled
        case .accountTemporarilyUnavailable, .serverResponseLost: code = .tryAgainLater
        case .missingEntitlement, .managedAccountRestricted, .participantMayNeedVerification: code = .accessDenied
        case .badContainer, .assetNotAvailable, .assetFileNotFound: code = .notFound
        case .userDeletedZone: code = .zoneNotFound
        case .alreadyShared: code = .exists
        case .resultsTruncated, .assetFileModified, .incompatibleVersion, .tooManyParticipants: code = .badRequest
        }
        self.init(code, reason, recordName: e.recordID?.recordName, zoneID: e.zoneID)
        serverRecord = e.serverRecord
        retryAfter = e.retryAfterSeconds
    }

    /// `CODE: reason`.
    public var description: String { "\(code.rawValue): \(reason)" }

    /// The error object; `uuid` identifies this occurrence (CloudKit's request id).
    public var json: JSONValue {
        var m: [(String, JSONValue)] = [
            ("uuid", .string(UUID().uuidString.lowercased())), ("serverErrorCode", .string(code.rawValue)),
            ("reason", .string(reason)),
        ]
        if let recordName { m.append(("recordName", .string(recordName))) }
        if let zoneID { m.append(("zoneID", zoneID.webServicesJSON)) }
        if let serverRecord { m.append(("serverRecord", serverRecord.webServicesJSON)) }
        if let retryAfter { m.append(("retryAfter", .number(retryAfter))) }
        return .object(m)
    }
}

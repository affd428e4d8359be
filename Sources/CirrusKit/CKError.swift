// CKError: CloudKit's error — Apple's codes with their raw values, the userInfo keys, and the
// accessors code reads (serverRecord, partialErrorsByItemID, retryAfterSeconds, …). Cirrus's own
// errors (CirrusError, which already numbers its codes as CloudKit does) and Web Services error
// objects are turned into these in one place each (CirrusError+CKError, RemoteErrors).

/// The domain of CloudKit errors.
public let CKErrorDomain: String = "CKErrorDomain"
/// userInfo key: seconds to wait before retrying (a `Double`).
public let CKErrorRetryAfterKey: String = "CKRetryAfter"
/// userInfo key: the per-item errors of a partial failure (`[AnyHashable: any Error]`).
public let CKPartialErrorsByItemIDKey: String = "CKPartialErrors"
/// userInfo key: the record the client last fetched, for serverRecordChanged.
public let CKRecordChangedErrorAncestorRecordKey: String = "AncestorRecord"
/// userInfo key: the server's version of the record, for serverRecordChanged.
public let CKRecordChangedErrorServerRecordKey: String = "ServerRecord"
/// userInfo key: the record the client tried to save, for serverRecordChanged.
public let CKRecordChangedErrorClientRecordKey: String = "ClientRecord"

/// A CloudKit error.
///
/// ```swift
/// do {
///     try await database.save(note)
/// } catch let error as CKError where error.code == .serverRecordChanged {
///     let theirs = error.serverRecord
/// }
/// ```
///
/// `@unchecked Sendable`: the error is immutable after it is made; its userInfo holds only
/// values CirrusKit puts there (strings, numbers, `CKRecord`s — which lock their own state — and
/// other errors), as Apple's does.
public struct CKError: Error, CustomNSError, LocalizedError, Hashable, CustomStringConvertible, @unchecked Sendable {
    /// CloudKit's error codes, with Apple's raw values.
    public enum Code: Int, Sendable, Hashable, CaseIterable {
        /// A nonrecoverable error CloudKit encountered.
        case internalError = 1
        /// Some items of a batch failed (`partialErrorsByItemID`).
        case partialFailure = 2
        /// The network is not available.
        case networkUnavailable = 3
        /// The network is available but CloudKit is inaccessible.
        case networkFailure = 4
        /// The container is not known.
        case badContainer = 5
        /// CloudKit is unavailable.
        case serviceUnavailable = 6
        /// Too many requests; retry after `retryAfterSeconds`.
        case requestRateLimited = 7
        /// The app is missing a required entitlement.
        case missingEntitlement = 8
        /// There is no signed-in user (or the credentials were refused).
        case notAuthenticated = 9
        /// The user may not do this.
        case permissionFailure = 10
        /// The record, zone or subscription does not exist.
        case unknownItem = 11
        /// Bad client request: a predicate CloudKit refuses, a value of the wrong type, …
        case invalidArguments = 12
        /// The query results were truncated (deprecated by Apple).
        case resultsTruncated = 13
        /// The record was changed on the server since it was fetched (`serverRecord`).
        case serverRecordChanged = 14
        /// The server refused the request.
        case serverRejectedRequest = 15
        /// An asset's file is missing.
        case assetFileNotFound = 16
        /// An asset's file changed while it was being saved.
        case assetFileModified = 17
        /// The client's version is incompatible.
        case incompatibleVersion = 18
        /// A unique-field constraint was violated.
        case constraintViolation = 19
        /// The operation was cancelled.
        case operationCancelled = 20
        /// The change token expired; fetch again without it.
        case changeTokenExpired = 21
        /// Another item of an atomic batch failed.
        case batchRequestFailed = 22
        /// The zone is busy; retry later.
        case zoneBusy = 23
        /// The operation is not allowed on this database (e.g. custom zones in the public one).
        case badDatabase = 24
        /// The user's storage quota is exhausted.
        case quotaExceeded = 25
        /// The zone does not exist.
        case zoneNotFound = 26
        /// The request is too large (too many items or bytes).
        case limitExceeded = 27
        /// The user deleted the zone.
        case userDeletedZone = 28
        /// A share has too many participants.
        case tooManyParticipants = 29
        /// The record is already shared.
        case alreadyShared = 30
        /// A reference points at a record that does not exist.
        case referenceViolation = 31
        /// The account is managed and restricted.
        case managedAccountRestricted = 32
        /// A share participant may need to verify their account.
        case participantMayNeedVerification = 33
        /// The server's response was lost.
        case serverResponseLost = 34
        /// The asset is not available.
        case assetNotAvailable = 35
        /// The account is temporarily unavailable.
        case accountTemporarilyUnavailable = 36

        /// Whether an error is a `CKError` with this code: `catch CKError.unknownItem { … }`.
        public static func ~= (match: Code, error: any Error) -> Bool {
            (error as? CKError)?.code == match
        }
    }

    /// The error's code.
    public let code: Code
    /// More about the error, under the `CK…Key` constants and `NSLocalizedDescriptionKey`.
    public let userInfo: [String: Any]

    /// An error with `code` and `userInfo` (as Apple's `CKError(_:userInfo:)`).
    public init(_ code: Code, userInfo: [String: Any] = [:]) {
        self.code = code
        self.userInfo = userInfo
    }

    /// An error with `code` and a message (`localizedDescription`).
    init(_ code: Code, _ message: String, _ more: [String: Any] = [:]) {
        var info = more
        info[NSLocalizedDescriptionKey] = message
        self.init(code, userInfo: info)
    }

    /// `CKErrorDomain`.
    public static var errorDomain: String { CKErrorDomain }
    /// The code's raw value.
    public var errorCode: Int { code.rawValue }
    /// The message: the server's reason, or for a predicate CloudKit refuses the checker's
    /// message with the predicate, a caret under the part at fault and a hint.
    public var localizedDescription: String {
        (userInfo[NSLocalizedDescriptionKey] as? String) ?? "CloudKit error \(code.rawValue) (\(code))"
    }
    /// `localizedDescription` (Foundation's `LocalizedError`).
    public var errorDescription: String? { localizedDescription }
    /// `CKError <code> (<raw value>): message`.
    public var description: String { "CKError \(code) (\(code.rawValue)): \(localizedDescription)" }

    /// For partialFailure: the error of each failed item, keyed by its `CKRecord.ID`,
    /// `CKRecordZone.ID` or subscription id.
    public var partialErrorsByItemID: [AnyHashable: any Error]? {
        userInfo[CKPartialErrorsByItemIDKey] as? [AnyHashable: any Error]
    }
    /// For serverRecordChanged: the server's version of the record.
    public var serverRecord: CKRecord? { userInfo[CKRecordChangedErrorServerRecordKey] as? CKRecord }
    /// For serverRecordChanged: the record that could not be saved.
    public var clientRecord: CKRecord? { userInfo[CKRecordChangedErrorClientRecordKey] as? CKRecord }
    /// For serverRecordChanged: the version the client last fetched, when known (Cirrus does not
    /// keep it: always nil, as CloudKit's is when the record was not fetched in this process).
    public var ancestorRecord: CKRecord? { userInfo[CKRecordChangedErrorAncestorRecordKey] as? CKRecord }
    /// Seconds to wait before retrying, when the server said so.
    public var retryAfterSeconds: Double? {
        if let d = userInfo[CKErrorRetryAfterKey] as? Double { return d }
        return (userInfo[CKErrorRetryAfterKey] as? NSNumber)?.doubleValue
    }

    /// Equal when the codes and messages are.
    public static func == (a: CKError, b: CKError) -> Bool {
        a.code == b.code && a.localizedDescription == b.localizedDescription
    }

    /// Hashes the code and the message.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(localizedDescription)
    }
}

extension CKError {
    /// `internalError` (1).
    public static var internalError: Code { .internalError }
    /// `partialFailure` (2).
    public static var partialFailure: Code { .partialFailure }
    /// `networkUnavailable` (3).
    public static var networkUnavailable: Code { .networkUnavailable }
    /// `networkFailure` (4).
    public static var networkFailure: Code { .networkFailure }
    /// `notAuthenticated` (9).
    public static var notAuthenticated: Code { .notAuthenticated }
    /// `permissionFailure` (10).
    public static var permissionFailure: Code { .permissionFailure }
    /// `unknownItem` (11).
    public static var unknownItem: Code { .unknownItem }
    /// `invalidArguments` (12).
    public static var invalidArguments: Code { .invalidArguments }
    /// `serverRecordChanged` (14).
    public static var serverRecordChanged: Code { .serverRecordChanged }
    /// `serverRejectedRequest` (15).
    public static var serverRejectedRequest: Code { .serverRejectedRequest }
    /// `operationCancelled` (20).
    public static var operationCancelled: Code { .operationCancelled }
    /// `changeTokenExpired` (21).
    public static var changeTokenExpired: Code { .changeTokenExpired }
    /// `batchRequestFailed` (22).
    public static var batchRequestFailed: Code { .batchRequestFailed }
    /// `zoneNotFound` (26).
    public static var zoneNotFound: Code { .zoneNotFound }
    /// `limitExceeded` (27).
    public static var limitExceeded: Code { .limitExceeded }
}

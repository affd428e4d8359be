// CKError: CloudKit's error — Apple's codes with their raw values, the userInfo keys, and the
// accessors code reads (serverRecord, partialErrorsByItemID, retryAfterSeconds, …). Cirrus's own
// errors (CirrusError, which already numbers its codes as CloudKit does) and Web Services error
// objects are turned into these in one place each (CirrusError+CKError, RemoteErrors). Its codes
// are the façade's: `CKError.Code` is `CirrusError.Code`.

import Cirrus

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
    /// CloudKit's error codes, with Apple's raw values: the façade's `CirrusError.Code`, one list
    /// for both (so a Cirrus error's code is a CloudKit error's code as it is).
    public typealias Code = CirrusError.Code

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

extension CirrusError.Code {
    /// Whether an error is a `CKError` with this code: `catch CKError.unknownItem { … }`.
    public static func ~= (match: CirrusError.Code, error: any Error) -> Bool {
        (error as? CKError)?.code == match
    }
}

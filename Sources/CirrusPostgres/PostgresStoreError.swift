// PostgresStoreError: the one error type of the PostgreSQL backend, with CloudKit's error numbers
// where CloudKit has an equivalent, and where it happened (server address, statement, record).
//
// Rendered to text in one place (`description`). A lost connection, an unreachable server and a
// statement PostgreSQL refused are errors with the server's address, never crashes.

import RecordModel

/// What went wrong in a ``PostgresStore`` call, and where.
///
/// ```swift
/// do {
///     try await store.modify(saving: [record])
/// } catch let e as PostgresStoreError where e.code == .serverRecordChanged {
///     let theirs = e.serverRecord   // merge and save again with theirs.recordChangeTag
/// }
/// ```
public struct PostgresStoreError: Error, Sendable, CustomStringConvertible {
    /// CloudKit's error numbers (`CKError.Code`) for the cases the backend raises.
    public enum Code: Int, Sendable, Hashable {
        /// A server-side failure: PostgreSQL refused a statement, or stored bytes do not decode.
        case internalError = 1
        /// Some items of a non-atomic batch failed; ``PostgresStoreError/partialErrors`` has them.
        case partialFailure = 2
        /// The server cannot be reached (refused, unknown host, connect timeout).
        case networkUnavailable = 3
        /// The connection was lost, or the server did not answer in time.
        case networkFailure = 4
        /// A call that needs a signed-in user was made anonymously.
        case notAuthenticated = 9
        /// The caller may not do this (a grant of the schema, or another user's database).
        case permissionFailure = 10
        /// No such record (or a tag given for a record the server no longer has).
        case unknownItem = 11
        /// A value, field, query or schema the backend cannot accept.
        case invalidArguments = 12
        /// `ifServerRecordUnchanged` and the tag differs; ``PostgresStoreError/serverRecord`` is the server's.
        case serverRecordChanged = 14
        /// A schema change that is not add-only, or a record type the schema does not have.
        case serverRejectedRequest = 15
        /// A record name already used by a record of another type.
        case constraintViolation = 19
        /// A change token this tenant did not issue, or one older than its zone.
        case changeTokenExpired = 21
        /// Another item of an atomic batch failed, so this one was not written.
        case batchRequestFailed = 22
        /// A new record past the database's record quota.
        case quotaExceeded = 25
        /// The record's custom zone does not exist (zones are kept only through `Container.open(postgres:…)`).
        case zoneNotFound = 26
        /// More items in one request than CloudKit allows (400), or more deleteSelf references
        /// to one record than it allows (750).
        case limitExceeded = 27
        /// A deleteSelf reference to a record that does not exist or is in another zone.
        case referenceViolation = 31
    }

    /// The kind of failure.
    public var code: Code
    /// What happened, in words.
    public var message: String
    /// Where: the server (`host:port/database`) and, for SQL failures, the statement's first line.
    public var location: String?
    /// The record concerned, if any.
    public var recordID: RecordID?
    /// For ``Code/serverRecordChanged``: the server's current record.
    public var serverRecord: Record?
    /// For ``Code/partialFailure`` and ``Code/batchRequestFailed``: each failed item's error.
    public var partialErrors: [RecordID: PostgresStoreError]
    /// For a rolled-back request with atomic zones: each failed item's error by its position in
    /// the request (a record may appear twice, so ids do not say which item failed).
    var itemErrors: [Int: PostgresStoreError] = [:]
    /// A batched write (PostgresStore+Batch.swift) that PostgreSQL refused: the request was
    /// rolled back and runs again item by item, so that each item gets its own outcome.
    var batchRefused = false

    /// An error; `location`, `recordID` and `serverRecord` when known.
    public init(
        _ code: Code, _ message: String, location: String? = nil, recordID: RecordID? = nil,
        serverRecord: Record? = nil, partialErrors: [RecordID: PostgresStoreError] = [:]
    ) {
        self.code = code
        self.message = message
        self.location = location
        self.recordID = recordID
        self.serverRecord = serverRecord
        self.partialErrors = partialErrors
    }

    /// `serverRecordChanged (14): … [record n1 in Paris] at 127.0.0.1:5432/cirrus`.
    public var description: String {
        var s = "\(code) (\(code.rawValue)): \(message)"
        if let r = recordID { s += " [record \(r.recordName) in \(r.zoneID.zoneName)]" }
        if let l = location { s += " at \(l)" }
        return s
    }
}

// CirrusError: the one error type of the Cirrus façade, numbered like CloudKit's CKError so code
// ported from CloudKit reads naturally (CKQUERY.md §4). Every error says what went wrong and,
// when it concerns one record or zone, which one. Rendered to text in one place (`description`).

import RecordModel

/// An error of a Cirrus database call, with CloudKit's `CKError` code numbers.
///
/// ```swift
/// do { _ = try await db.record(for: RecordID(recordName: "missing")) }
/// catch let e as CirrusError where e.code == .unknownItem { print(e) }   // unknownItem (11): record "missing" …
/// ```
public struct CirrusError: Error, Sendable, CustomStringConvertible {
    /// CloudKit's error codes, with Apple's raw values (CirrusKit's `CKError.Code` is this type).
    /// Never change the numbers. The engines raise 1–4, 6, 9–12, 14, 15, 19–22 and 24–27, 31
    /// (docs/database.md, "Errors"); the others are CloudKit's, for code ported from it.
    public enum Code: Int, Sendable, Hashable, CaseIterable {
        /// A nonrecoverable error CloudKit encountered.
        case internalError = 1
        /// Some items of a batch failed (`partialErrorsByItemID`).
        case partialFailure = 2
        /// The storage server cannot be reached (a backend over the network: refused, timed out).
        case networkUnavailable = 3
        /// The connection to the storage server was lost, or it did not answer in time.
        case networkFailure = 4
        /// The container is not known.
        case badContainer = 5
        /// The service cannot take the request now (its disk is full, an I/O error): nothing of the
        /// request was done; retry after `retryAfterSeconds`.
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
    }

    // The details live in one shared, copy-on-write box, so the error is one reference wide: a
    // query's `matchResults` hold a `(RecordID, Result<Record, CirrusError>)` per record, and
    // with the details inline an element was about 176 bytes (a 1,500-row result a fresh 260 KiB,
    // faulted in page by page, and copied through value witnesses); boxed, 64.
    private final class Details: @unchecked Sendable {
        // @unchecked: written only through `CirrusError`'s setters after `unique()` made the box
        // the error's own; a shared box is never written.
        var code: Code
        var message: String
        var recordID: RecordID?
        var zoneID: ZoneID?
        var serverRecord: Record?
        var partialErrors: [RecordID: CirrusError]
        var retryAfterSeconds: Double?
        var location: String?
        var itemErrors: [Int: CirrusError] = [:]
        var batchRefused = false

        init(
            _ code: Code, _ message: String, _ recordID: RecordID?, _ zoneID: ZoneID?, _ serverRecord: Record?,
            _ partialErrors: [RecordID: CirrusError], _ location: String?
        ) {
            self.code = code
            self.message = message
            self.recordID = recordID
            self.zoneID = zoneID
            self.serverRecord = serverRecord
            self.partialErrors = partialErrors
            self.location = location
        }

        func copy() -> Details {
            let d = Details(code, message, recordID, zoneID, serverRecord, partialErrors, location)
            d.retryAfterSeconds = retryAfterSeconds
            d.itemErrors = itemErrors
            d.batchRefused = batchRefused
            return d
        }
    }

    private var details: Details

    /// The box, copied first when another error shares it.
    private mutating func unique() -> Details {
        if !isKnownUniquelyReferenced(&details) { details = details.copy() }
        return details
    }

    /// What kind of error; `errorCode` is its CloudKit number.
    public var code: Code {
        get { details.code }
        _modify { yield &unique().code }
    }
    /// A sentence saying what went wrong.
    public var message: String {
        get { details.message }
        _modify { yield &unique().message }
    }
    /// The record concerned, when the error is about one record.
    public var recordID: RecordID? {
        get { details.recordID }
        _modify { yield &unique().recordID }
    }
    /// The zone concerned, when the error is about one zone.
    public var zoneID: ZoneID? {
        get { details.zoneID }
        _modify { yield &unique().zoneID }
    }
    /// For `serverRecordChanged`: the record as the server has it now (merge and retry with its tag).
    public var serverRecord: Record? {
        get { details.serverRecord }
        _modify { yield &unique().serverRecord }
    }
    /// For `serviceUnavailable`: how long to wait before retrying, in seconds (CloudKit's
    /// `CKErrorRetryAfterKey`).
    public var retryAfterSeconds: Double? {
        get { details.retryAfterSeconds }
        _modify { yield &unique().retryAfterSeconds }
    }
    /// For `partialFailure` and `batchRequestFailed`: the error of each failed item, by record id.
    public var partialErrors: [RecordID: CirrusError] {
        get { details.partialErrors }
        _modify { yield &unique().partialErrors }
    }
    /// Where it happened, when the engine is a server: its address (`host:port/database`) and,
    /// for a statement it refused, the statement's first line. Nil for the embedded engine, whose
    /// errors name their files in the message.
    public var location: String? {
        get { details.location }
        _modify { yield &unique().location }
    }
    /// For a rolled-back request with atomic zones: each failed item's error by its position in
    /// the request (a record may appear twice, so ids do not say which item failed). Engines'
    /// bookkeeping; callers read `partialErrors`.
    package var itemErrors: [Int: CirrusError] {
        get { details.itemErrors }
        _modify { yield &unique().itemErrors }
    }
    /// A batched write the engine refused as a whole: it is run again item by item, so that
    /// each item gets its own outcome (CirrusPostgres's batched saves).
    package var batchRefused: Bool {
        get { details.batchRefused }
        _modify { yield &unique().batchRefused }
    }

    /// An error of `code` saying `message`, about the record, zone or failed items given, and
    /// where it happened (`location`) when the engine is a server.
    public init(
        _ code: Code, _ message: String, location: String? = nil, recordID: RecordID? = nil, zoneID: ZoneID? = nil,
        serverRecord: Record? = nil, partialErrors: [RecordID: CirrusError] = [:]
    ) {
        details = Details(code, message, recordID, zoneID, serverRecord, partialErrors, location)
    }

    /// CloudKit's number for the code.
    public var errorCode: Int { code.rawValue }

    /// `code (number): record "name" in zone "z": message (at location)`.
    public var description: String {
        var s = "\(code) (\(code.rawValue)): "
        if let r = recordID {
            s +=
                "record \"\(r.recordName)\"" + (r.zoneID.isDefaultZone ? "" : " in zone \"\(r.zoneID.zoneName)\"")
                + ": "
        } else if let z = zoneID {
            s += "zone \"\(z.zoneName)\": "
        }
        s += message
        if let location { s += " (at \(location))" }
        if !partialErrors.isEmpty {
            for (id, e) in partialErrors.sorted(by: { $0.key < $1.key }) { s += "\n  \(id.recordName): \(e)" }
        }
        return s
    }
}

extension CirrusError {
    package static func record(_ code: Code, _ id: RecordID, _ message: String) -> CirrusError {
        CirrusError(code, message, recordID: id)
    }

    package static func zone(_ code: Code, _ z: ZoneID, _ message: String) -> CirrusError {
        CirrusError(code, message, zoneID: z)
    }

    package static func cancelled() -> CirrusError {
        CirrusError(.operationCancelled, "the task was cancelled before the call ran")
    }

    /// Wraps a store failure (I/O, closed store) as internalError; a record rule as invalidArguments.
    package static func from(_ e: any Error, recordID: RecordID? = nil) -> CirrusError {
        if let c = e as? CirrusError { return c }
        if let v = e as? RecordValidationError {
            return CirrusError(.invalidArguments, v.message, recordID: v.recordID ?? recordID)
        }
        return CirrusError(.internalError, "\(e)", recordID: recordID)
    }
}

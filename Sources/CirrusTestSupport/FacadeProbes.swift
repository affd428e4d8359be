// FacadeProbes: the short record constructors and error probes the façade's tests share — the
// embedded suites (Tests/CirrusTests) and those written for both engines
// (Tests/CirrusPostgresTests) — so that each is written once.

import Cirrus
import RecordModel

/// A record of `type` (default `Note`) named `name` in `zone`, with `fields`.
public func rec(
    _ name: String, _ type: String = "Note", zone: ZoneID = .default, _ fields: RecordFields = [:]
) -> Record {
    Record(recordType: type, recordID: RecordID(recordName: name, zoneID: zone), fields: fields)
}

/// A `Note` named `name` in `zone`, with `fields`.
public func rec(_ name: String, zone: ZoneID = .default, _ fields: RecordFields) -> Record {
    Record(recordType: "Note", recordID: RecordID(recordName: name, zoneID: zone), fields: fields)
}

/// The id `name` in `zone`.
public func rid(_ name: String, zone: ZoneID = .default) -> RecordID { RecordID(recordName: name, zoneID: zone) }

/// The code of the error `body` throws, nil if it does not throw (internalError for an error
/// that is not a CirrusError).
public func code<T>(_ body: () async throws -> T) async -> CirrusError.Code? {
    await attempt(body).errorCode
}

/// The error `body` throws, nil if it does not throw.
public func caught<T>(_ body: () async throws -> T) async -> CirrusError? {
    if case .failure(let e) = await attempt(body) { return e }
    return nil
}

/// `body`'s value or its CirrusError (avoids a typed-throws do/catch in async code, which
/// crashes this compiler).
public func attempt<T>(_ body: () async throws -> T) async -> Result<T, CirrusError> {
    do {
        return .success(try await body())
    } catch let e as CirrusError {
        return .failure(e)
    } catch {
        return .failure(CirrusError(.internalError, "\(error)"))
    }
}

extension Result where Failure == CirrusError {
    /// The code of a failure, nil for a success.
    public var errorCode: CirrusError.Code? {
        if case .failure(let e) = self { return e.code }
        return nil
    }
}

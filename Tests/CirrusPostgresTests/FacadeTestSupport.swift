// What the façade suites written for both engines share (EngineErrorCodeTests,
// EngineIsolationTests): a fresh container per test on one `Engine` that is closed whether the
// test passes or throws, the engine's way of promoting the development schema to production,
// and the short record constructors and error probes of Tests/CirrusTests/TestHelpers.swift
// (that target does not depend on CirrusPostgres, so the few helpers are repeated here; the
// assertions are not).

import Cirrus
import CirrusPostgres
import RecordModel
import Testing

/// Runs `body` on a fresh, empty development container of `engine` (on PostgreSQL: a container
/// id no other test uses, so its own namespace) and closes the container afterwards, also when
/// `body` throws.
func withFixture<T>(_ engine: Engine, _ body: (EngineFixture) async throws -> T) async throws -> T {
    let f = try await EngineFixture(engine)
    let value: T
    do {
        value = try await body(f)
    } catch {
        try? await f.close()
        throw error
    }
    try await f.close()
    return value
}

extension EngineFixture {
    /// The container opened again in production after its development schema was promoted
    /// (`promoteSchemaToProduction()`, on either engine). The development container is closed;
    /// the caller closes the one returned.
    func reopenPromoted() async throws -> Container {
        _ = try await container.promoteSchemaToProduction()
        try container.close()
        switch engine {
        case .embedded:
            return try Container.open(at: try #require(directory), environment: .production)
        case .postgres:
            let pg = try #require(container.postgres)
            return try await Container.open(
                postgres: try #require(PG.url), containerID: pg.containerID, environment: .production)
        }
    }
}

func rec(
    _ name: String, _ type: String = "Note", zone: ZoneID = .default, _ fields: [String: FieldValue] = [:]
) -> Record {
    Record(recordType: type, recordID: RecordID(recordName: name, zoneID: zone), fields: fields)
}

func rec(_ name: String, zone: ZoneID = .default, _ fields: [String: FieldValue]) -> Record {
    Record(recordType: "Note", recordID: RecordID(recordName: name, zoneID: zone), fields: fields)
}

func rid(_ name: String, zone: ZoneID = .default) -> RecordID { RecordID(recordName: name, zoneID: zone) }

/// The code of the error `body` throws, nil if it does not throw.
func code<T>(_ body: () async throws -> T) async -> CirrusError.Code? {
    do {
        _ = try await body()
        return nil
    } catch let e as CirrusError {
        return e.code
    } catch {
        return .internalError
    }
}

/// The error `body` throws, nil if it does not throw.
func caught<T>(_ body: () async throws -> T) async -> CirrusError? {
    do {
        _ = try await body()
        return nil
    } catch let e as CirrusError {
        return e
    } catch {
        return CirrusError(.internalError, "\(error)")
    }
}

/// `body`'s value or its CirrusError (avoids a typed-throws do/catch in async code, which
/// crashes this compiler).
func attempt<T>(_ body: () async throws -> T) async -> Result<T, CirrusError> {
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
    var errorCode: CirrusError.Code? {
        if case .failure(let e) = self { return e.code }
        return nil
    }
}

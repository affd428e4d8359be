// What the façade suites written for both engines share (EngineErrorCodeTests,
// EngineIsolationTests): a fresh container per test on one `Engine` that is closed whether the
// test passes or throws, the engine's way of promoting the development schema to production,
// (the record constructors and error probes are CirrusTestSupport's FacadeProbes, shared with
// Tests/CirrusTests).

import Cirrus
import CirrusPostgres
import CirrusTestSupport
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

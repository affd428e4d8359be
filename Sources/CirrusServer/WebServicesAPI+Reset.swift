// Reset of the development environment over HTTP: what `cirrus reset` does, for the dashboard's
// Deployment pane (and any client holding a management token).
//
//   POST /database/1/{container}/development/{public|private}/cirrus/reset
//   header X-Cirrus-Management-Token: …   body {"confirm": "{container}"}
//     → {"container", "environment": "development", "reset": true}
//
// As promotion, it asks for the API token, a management token in a header and `confirm` naming
// the container; under /production/ it is refused (production is never reset). The server holds
// the development container open, and a reset needs it closed (Container.resetDevelopment): the
// server closes it, resets, and opens the fresh environment in its place, one reset at a time.
// Requests in flight on the old container at that moment fail with INTERNAL_ERROR (it is
// closed); notification feeds of development end, and a client reconnecting gets a `reset`
// event. Production is not closed, read or written.

import Cirrus
import Foundation
import RecordModel

/// The container of each environment; development is replaced by a reset.
final class EnvironmentContainers: @unchecked Sendable {
    private let lock = NSLock()
    // Guarded by lock:
    private var development: Container
    private var production: Container
    /// Held for the whole of a reset, so two resets never interleave.
    let resetLock = NSLock()

    init(development: Container, production: Container) {
        self.development = development
        self.production = production
    }

    subscript(_ environment: Environment) -> Container {
        lock.withLock { environment == .development ? development : production }
    }

    var all: [Container] { lock.withLock { [development, production] } }

    func replaceDevelopment(with c: Container) { lock.withLock { development = c } }

    // Guarded by lock: a reset of another engine's development is under way (it awaits, so it
    // cannot hold `resetLock`; a second one meanwhile is refused instead of waiting).
    private var resetting = false

    /// Marks a reset as under way; false when one is already.
    func beginReset() -> Bool {
        lock.withLock {
            if resetting { return false }
            resetting = true
            return true
        }
    }

    func endReset() { lock.withLock { resetting = false } }
}

/// How a server resets the development environment of containers it did not open from a
/// directory (`WebServicesAPI(credentialsIn:…)`): `reset` runs once development is closed,
/// `reopen` opens development again — the fresh one after a reset, the old one when the reset
/// was refused.
///
/// ```swift
/// let hooks = DevelopmentReset(
///     reset: { try await Container.resetDevelopment(postgres: url, containerID: id) },
///     reopen: { try await Container.open(postgres: url, containerID: id, environment: .development) })
/// ```
public struct DevelopmentReset: Sendable {
    /// Resets the (closed) development environment.
    public var reset: @Sendable () async throws -> Void
    /// Opens the development environment again.
    public var reopen: @Sendable () async throws -> Container

    /// The two steps of a reset.
    public init(
        reset: @escaping @Sendable () async throws -> Void, reopen: @escaping @Sendable () async throws -> Container
    ) {
        self.reset = reset
        self.reopen = reopen
    }
}

extension WebServicesAPI {
    /// The operation's name under a database's path.
    static let resetOperation = "cirrus/reset"

    func resetDevelopment(
        _ request: WebRequest, _ body: JSONBody, route: Route
    ) async throws(WebServicesError) -> JSONValue {
        try requireManagementToken(request, for: "resetting the development environment")
        guard route.environment == .development else {
            throw WebServicesError(
                .badRequest, "production is never reset; only development can be: call this under /development/")
        }
        let confirm = try body["confirm"].string()
        guard confirm == containerIdentifier else {
            throw body["confirm"].fail("must name this container, \"\(containerIdentifier)\", to confirm the reset")
        }
        try await resetDevelopmentEnvironment()
        return .object([
            ("container", .string(containerIdentifier)), ("environment", .string("development")),
            ("reset", .bool(true)),
        ])
    }

    /// Closes the development container, resets the environment and opens the fresh one in its
    /// place. When the reset is refused the old environment is opened again (nothing changed).
    func resetDevelopmentEnvironment() async throws(WebServicesError) {
        if containers[.development].engineName != "embedded" {
            try await resetOtherDevelopment()
        } else {
            try resetDirectoryDevelopment()
        }
    }

    /// The reset of a container directory's development, one at a time (`resetLock`).
    private func resetDirectoryDevelopment() throws(WebServicesError) {
        containers.resetLock.lock()
        defer { containers.resetLock.unlock() }
        let old = containers[.development]
        notifications.drop(environment: .development)
        do {
            try old.close()
        } catch {
            throw WebServicesError(.internalError, "cannot close the development environment to reset it: \(error)")
        }
        var failure: CirrusError?
        do {
            try Container.resetDevelopment(at: directory, options: options)
        } catch {
            failure = error
        }
        do {
            containers.replaceDevelopment(with: try Container.open(at: directory, options: options))
        } catch {
            throw WebServicesError(
                .internalError, "development could not be opened again after the reset: \(error.message)")
        }
        if let failure { throw WebServicesError(.internalError, "the reset failed: \(failure.message)") }
    }

    /// The reset of another engine's development (`developmentReset`): close, reset, reopen.
    private func resetOtherDevelopment() async throws(WebServicesError) {
        let old = containers[.development]
        guard let hooks = developmentReset else {
            throw WebServicesError(
                .badRequest,
                "this server was not given a way to reset development on \(old.engineName) (\(old.directory))")
        }
        guard containers.beginReset() else {
            throw WebServicesError(.conflict, "a reset of development is under way")
        }
        defer { containers.endReset() }
        notifications.drop(environment: .development)
        do {
            try old.close()
        } catch {
            throw WebServicesError(.internalError, "cannot close the development environment to reset it: \(error)")
        }
        var failure: (any Error)?
        do {
            try await hooks.reset()
        } catch {
            failure = error
        }
        do {
            containers.replaceDevelopment(with: try await hooks.reopen())
        } catch {
            throw WebServicesError(.internalError, "development could not be opened again after the reset: \(error)")
        }
        if let failure {
            let message = (failure as? CirrusError)?.message ?? "\(failure)"
            throw WebServicesError(.internalError, "the reset failed: \(message)")
        }
    }
}

// A world for one scenario on one backend: containers of the same identifier for _alice, _bob
// and a caller without an account — embedded (a fresh containers directory), or remote (a
// `cirrus serve` of a fresh directory, in process on a loopback port the system picks,
// stopped when the scenario ends). Every scenario runs on both.

import Cirrus
import CirrusKit
import CirrusServer
import Crypto
import Foundation
import HummingbirdTesting
import Testing

enum Backend: String, CaseIterable, CustomStringConvertible, Sendable {
    case embedded, remote
    var description: String { rawValue }
}

struct World: Sendable {
    static let identifier = "iCloud.test.cirruskit"
    let backend: Backend
    let alice: CKContainer
    let bob: CKContainer
    let nobody: CKContainer
    /// Remote only: requests signed with a server-to-server key (acting as `_server`, public
    /// database only).
    let signed: CKContainer?
    /// The directory the records live in (the container directory of the server, or the
    /// containers directory embedded).
    let directory: String
}

/// A new empty directory under the temporary directory.
func temporaryDirectory(_ label: String) throws -> String {
    let path = NSTemporaryDirectory() + "cirruskit-\(label)-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// Runs `body` in a fresh world on `backend`.
func withWorld(_ backend: Backend, _ body: @Sendable (World) async throws -> Void) async throws {
    let options = ContainerOptions(durability: .none)
    switch backend {
    case .embedded:
        let root = try temporaryDirectory("embedded")
        defer { try? FileManager.default.removeItem(atPath: root) }
        func container(_ user: String?) -> CKContainer {
            CKContainer(
                identifier: World.identifier,
                configuration: CirrusConfiguration(
                    backend: .embedded(containersDirectory: root, options: options), user: user))
        }
        try await body(
            World(
                backend: backend, alice: container("_alice"), bob: container("_bob"), nobody: container(nil),
                signed: nil, directory: root))
    case .remote:
        let dir = try temporaryDirectory("remote")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let token = try CredentialCommands.createToken(directory: dir, user: nil)
        let aliceToken = try CredentialCommands.createToken(directory: dir, user: "_alice")
        let bobToken = try CredentialCommands.createToken(directory: dir, user: "_bob")
        let key = P256.Signing.PrivateKey()
        let keyID = try CredentialCommands.addKey(
            directory: dir, pem: key.publicKey.pemRepresentation, user: "_server")
        let keyPEM = key.pemRepresentation
        let api = try WebServicesAPI(directory: dir, containerIdentifier: World.identifier, options: options)
        defer { try? api.close() }
        let app = HTTPServer.application(api, host: "127.0.0.1", port: 0)
        try await app.test(.live) { client in
            let port = try #require(client.port)
            let server = try #require(URL(string: "http://127.0.0.1:\(port)"))
            func container(_ web: String?) -> CKContainer {
                CKContainer(
                    identifier: World.identifier,
                    configuration: CirrusConfiguration(
                        backend: .remote(server: server, credentials: .apiToken(token, webAuthToken: web))))
            }
            let signed = CKContainer(
                identifier: World.identifier,
                configuration: CirrusConfiguration(
                    backend: .remote(server: server, credentials: .serverToServer(keyID: keyID, privateKeyPEM: keyPEM)))
            )
            try await body(
                World(
                    backend: backend, alice: container(aliceToken), bob: container(bobToken), nobody: container(nil),
                    signed: signed, directory: dir))
        }
    }
}

/// The CKError a call threw (nil when it threw none or another error).
func ckError(_ body: () async throws -> Void) async -> CKError? {
    do {
        try await body()
        return nil
    } catch let e as CKError {
        return e
    } catch {
        return nil
    }
}

/// Runs an operation on `database` and waits until it has finished (every block called).
func run(_ operation: CKDatabaseOperation, on database: CKDatabase) async {
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        operation.completionBlock = { done.resume() }
        database.add(operation)
    }
}

/// A lock-protected box for what operation blocks collect.
final class Collected<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [T] = []
    func append(_ item: T) {
        lock.lock()
        items.append(item)
        lock.unlock()
    }
    var all: [T] {
        lock.lock()
        defer { lock.unlock() }
        return items
    }
}

// A WebServicesAPI over an in-memory container with an API token, web auth tokens for two users,
// a server-to-server key and a management token, and a way to call it with JSON text.

import Cirrus
import CirrusIO
import CirrusServer
import Crypto
import Foundation
import RecordLog
import RecordModel

// @unchecked: every stored property is a `let`; P256.Signing.PrivateKey is an immutable value that
// swift-crypto does not mark Sendable on Linux.
final class ServerFixture: @unchecked Sendable {
    static let container = "iCloud.test.cirrus"
    let fs = InMemoryFileSystem()
    let api: WebServicesAPI
    let apiToken: String
    let alice: String
    let bob: String
    let management: String
    let key = P256.Signing.PrivateKey()
    let keyID: String
    let clock: Date

    init(limits: ServerLimits = ServerLimits(), durability: Durability = .none) throws {
        try fs.createDirectory("/c")
        apiToken = try CredentialCommands.createToken(directory: "/c", user: nil, fileSystem: fs)
        alice = try CredentialCommands.createToken(directory: "/c", user: "_alice", fileSystem: fs)
        bob = try CredentialCommands.createToken(directory: "/c", user: "_bob", fileSystem: fs)
        management = try CredentialCommands.createToken(directory: "/c", user: nil, management: true, fileSystem: fs)
        keyID = try CredentialCommands.addKey(
            directory: "/c", pem: key.publicKey.pemRepresentation, user: "_server", fileSystem: fs)
        let now = Date(timeIntervalSince1970: 1_795_000_000)
        clock = now
        api = try WebServicesAPI(
            directory: "/c", containerIdentifier: Self.container, limits: limits,
            options: ContainerOptions(fileSystem: fs, durability: durability), now: { now })
    }

    static func path(_ op: String, db: String = "public", env: String = "development") -> String {
        "/database/1/\(container)/\(env)/\(db)/\(op)"
    }

    /// Calls `op` with the API token and, when given, the web auth token of `user` ("alice", "bob").
    func call(
        _ op: String, _ body: String = "", db: String = "public", env: String = "development", as user: String? = nil,
        token: String? = nil
    ) async -> (status: Int, json: JSONValue) {
        var query = ["ckAPIToken": token ?? apiToken]
        switch user {
        case "alice": query["ckWebAuthToken"] = alice
        case "bob": query["ckWebAuthToken"] = bob
        case let other?: query["ckWebAuthToken"] = other
        case nil: break
        }
        let r = await api.handle(
            WebRequest(method: "POST", path: Self.path(op, db: db, env: env), query: query, body: Array(body.utf8)))
        return (r.status, r.body)
    }

    /// Calls cirrus/schema/promote under `env` with the API token (or `apiToken`) and, when given, a
    /// management token in its header.
    func promote(
        _ body: String, env: String = "development", management: String?, apiToken: String? = nil
    ) async -> (status: Int, json: JSONValue) {
        var headers: [String: String] = [:]
        if let management { headers["X-Cirrus-Management-Token"] = management }
        let r = await api.handle(
            WebRequest(
                method: "POST", path: Self.path("cirrus/schema/promote", env: env),
                query: ["ckAPIToken": apiToken ?? self.apiToken], headers: headers, body: Array(body.utf8)))
        return (r.status, r.body)
    }

    /// The query parameters of a call as `user` ("alice", "bob", a token, or nil: API token only).
    func credentials(as user: String?) -> [String: String] {
        var query = ["ckAPIToken": apiToken]
        switch user {
        case "alice": query["ckWebAuthToken"] = alice
        case "bob": query["ckWebAuthToken"] = bob
        case let other?: query["ckWebAuthToken"] = other
        case nil: break
        }
        return query
    }

    /// A request with any method, path (under the database's base, with its query string) and
    /// body bytes, as `user`.
    func raw(
        _ method: String, _ pathAndQuery: String, body: [UInt8] = [], db: String = "public", as user: String? = nil
    ) async -> WebResponse {
        let full = pathAndQuery.hasPrefix("/") ? pathAndQuery : Self.path(pathAndQuery, db: db)
        let parts = full.split(separator: "?", maxSplits: 1).map(String.init)
        var query = credentials(as: user)
        if parts.count == 2 {
            for pair in parts[1].split(separator: "&") {
                let kv = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
                if kv.count == 2 { query[kv[0]] = kv[1] }
            }
        }
        return await api.handle(WebRequest(method: method, path: parts[0], query: query, body: body))
    }

    /// Calls `op` signed with the fixture's key (or `key`), at `date` (default: the server's clock).
    func signed(
        _ op: String, _ body: String, db: String = "public", date: Date? = nil, key: P256.Signing.PrivateKey? = nil,
        keyID: String? = nil, alterBody: String? = nil, alterPath: String? = nil
    ) async throws -> (status: Int, json: JSONValue) {
        let path = Self.path(op, db: db)
        let headers = try RequestSigning.headers(
            keyID: keyID ?? self.keyID, key: key ?? self.key, date: date ?? clock, body: Array(body.utf8), subpath: path
        )
        let r = await api.handle(
            WebRequest(
                method: "POST", path: alterPath ?? path, headers: Dictionary(uniqueKeysWithValues: headers),
                body: Array((alterBody ?? body).utf8)))
        return (r.status, r.body)
    }

    func close() throws { try api.close() }
}

extension JSONValue {
    var array: [JSONValue] {
        if case .array(let a) = self { return a }
        return []
    }

    /// `records[*].recordName` of a response.
    var recordNames: [String] { (self["records"]?.array ?? []).compactMap { $0["recordName"]?.stringValue } }

    var errorCode: String? { self["serverErrorCode"]?.stringValue }
}

/// A record object in Web Services JSON.
func recordJSON(
    _ name: String, type: String = "Place", tag: String? = nil, zone: String? = nil, _ fields: String
)
    -> String
{
    var s = #"{"recordName": "\#(name)", "recordType": "\#(type)""#
    if let tag { s += #", "recordChangeTag": "\#(tag)""# }
    if let zone { s += #", "zoneID": {"zoneName": "\#(zone)"}"# }
    return s + #", "fields": {\#(fields)}}"#
}

func modifyBody(_ ops: [(String, String)], atomic: Bool? = nil) -> String {
    let list = ops.map { #"{"operationType": "\#($0.0)", "record": \#($0.1)}"# }.joined(separator: ", ")
    return #"{"operations": [\#(list)]"# + (atomic.map { #", "atomic": \#($0)"# } ?? "") + "}"
}

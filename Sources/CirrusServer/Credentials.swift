// Credentials: who may call the server, kept in `DIR/web-services.json` beside the container's
// environments (DIR/development, DIR/production).
//
//   {"version": 1,
//    "apiTokens":     [{"sha256": "…", "label": "…", "created": 1700000000000}],
//    "webAuthTokens": [{"sha256": "…", "user": "_alice", "created": …}],
//    "serverKeys":    [{"keyID": "…", "publicKey": "-----BEGIN PUBLIC KEY-----…", "user": "_server", "created": …}],
//    "managementTokens": [{"sha256": "…", "label": "…", "created": …}]}
//
// Tokens are stored as SHA-256 digests: the file never holds a usable token, and `cirrus token
// create` prints each token once. An API token (`ckAPIToken`) admits a request to the container;
// a web auth token (`ckWebAuthToken`) makes it act as a user; a server key signs server-to-server
// requests (RequestSigning.swift) that act as the key's user in the public database. A management
// token (CloudKit's name for cktool's schema token) is needed, besides the API token, for what
// changes the container as a whole: promoting the schema to production.
//
// The file is replaced atomically (write, fsync, rename, fsync directory) and read loudly: a file
// that exists but does not parse stops the server (and the command) naming it, never an empty set
// of credentials. A running server re-reads the file when a token or key it does not know
// arrives (at most once a second), so tokens created while it runs work at once.

import Cirrus
import CirrusIO
import Crypto
import Foundation
import RecordModel

/// An unreadable or unwritable credentials file.
public struct CredentialsError: Error, Sendable, CustomStringConvertible {
    /// What is wrong, naming the file.
    public var message: String
    /// The message.
    public var description: String { message }
}

/// The credentials of one container directory.
public struct Credentials: Sendable, Equatable {
    /// An API token, by digest.
    public struct APIToken: Sendable, Equatable {
        /// SHA-256 of the token, lowercase hex.
        public var sha256: String
        /// A note given at creation.
        public var label: String
        /// Creation time, milliseconds since 1970.
        public var created: Int64
    }
    /// A web auth token: acts as `user`.
    public struct WebAuthToken: Sendable, Equatable {
        /// SHA-256 of the token, lowercase hex.
        public var sha256: String
        /// The user record name requests act as.
        public var user: String
        /// Creation time, milliseconds since 1970.
        public var created: Int64
    }
    /// A server-to-server key: a P-256 public key in PEM; requests it signs act as `user`.
    public struct ServerKey: Sendable, Equatable {
        /// The id sent in `X-Apple-CloudKit-Request-KeyID`.
        public var keyID: String
        /// The P-256 public key, PEM.
        public var publicKey: String
        /// The user record name signed requests act as.
        public var user: String
        /// Creation time, milliseconds since 1970.
        public var created: Int64
    }

    /// API tokens (`ckAPIToken`).
    public var apiTokens: [APIToken] = []
    /// Web auth tokens (`ckWebAuthToken`).
    public var webAuthTokens: [WebAuthToken] = []
    /// Server-to-server keys.
    public var serverKeys: [ServerKey] = []
    /// Management tokens (by digest; `label` as an API token's): they allow schema promotion.
    public var managementTokens: [APIToken] = []

    /// No credentials.
    public init() {}

    /// The file's name inside the container directory.
    public static let fileName = "web-services.json"

    /// SHA-256 of a token, in lowercase hex: what the file stores.
    public static func digest(_ token: String) -> String {
        hex(SHA256.hash(data: Data(token.utf8)))
    }

    /// Lowercase hex of bytes (String(format:) per byte cost an eighth of a request's time).
    static func hex<S: Sequence>(_ bytes: S) -> String where S.Element == UInt8 {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for b in bytes { out += [digits[Int(b >> 4)], digits[Int(b & 15)]] }
        return String(decoding: out, as: UTF8.self)
    }

    /// A new random token: 32 bytes from the system's secure generator, in lowercase hex.
    public static func newToken() -> String {
        var g = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &g)) }.joined()
    }

    /// Reads `DIR/web-services.json`; a missing file is no credentials.
    public static func load(directory: String, fileSystem: any FileSystem) throws(CredentialsError) -> Credentials {
        let path = directory + "/" + fileName
        guard fileSystem.exists(path) else { return Credentials() }
        let json: JSONValue
        do {
            let bytes = try fileSystem.read(path)
            json = try JSONValue.parse(String(decoding: bytes, as: UTF8.self))
        } catch {
            throw CredentialsError(message: "\(path) is unreadable: \(error); fix or remove it")
        }
        do throws(WebServicesJSONError) {
            return try Credentials(json: json)
        } catch {
            throw CredentialsError(message: "\(path) is not a credentials file: \(error.message)")
        }
    }

    /// Writes `DIR/web-services.json` atomically.
    public func save(directory: String, fileSystem: any FileSystem) throws(CredentialsError) {
        let path = directory + "/" + Self.fileName
        do {
            try fileSystem.writeAtomically(path, Array(json.jsonText.utf8))
        } catch {
            throw CredentialsError(message: "cannot write \(path): \(error)")
        }
    }

    var json: JSONValue {
        .object([
            ("version", .integer(1)),
            (
                "apiTokens",
                .array(
                    apiTokens.map {
                        .object([
                            ("sha256", .string($0.sha256)), ("label", .string($0.label)),
                            ("created", .integer($0.created)),
                        ])
                    })
            ),
            (
                "webAuthTokens",
                .array(
                    webAuthTokens.map {
                        .object([
                            ("sha256", .string($0.sha256)), ("user", .string($0.user)),
                            ("created", .integer($0.created)),
                        ])
                    })
            ),
            (
                "serverKeys",
                .array(
                    serverKeys.map {
                        .object([
                            ("keyID", .string($0.keyID)), ("publicKey", .string($0.publicKey)),
                            ("user", .string($0.user)), ("created", .integer($0.created)),
                        ])
                    })
            ),
            (
                "managementTokens",
                .array(
                    managementTokens.map {
                        .object([
                            ("sha256", .string($0.sha256)), ("label", .string($0.label)),
                            ("created", .integer($0.created)),
                        ])
                    })
            ),
        ])
    }

    init(json: JSONValue) throws(WebServicesJSONError) {
        guard json["version"]?.int64Value == 1 else { throw WebServicesJSONError("\"version\" must be 1") }
        func list(_ key: String) throws(WebServicesJSONError) -> [JSONValue] {
            guard let v = json[key] else { return [] }
            guard case .array(let items) = v else { throw WebServicesJSONError("\"\(key)\" must be an array") }
            return items
        }
        func string(_ o: JSONValue, _ key: String, _ list: String, _ i: Int) throws(WebServicesJSONError) -> String {
            guard let s = o[key]?.stringValue else {
                throw WebServicesJSONError("\(list)[\(i)] needs a string \"\(key)\"")
            }
            return s
        }
        for (i, o) in try list("apiTokens").enumerated() {
            apiTokens.append(
                APIToken(
                    sha256: try string(o, "sha256", "apiTokens", i), label: o["label"]?.stringValue ?? "",
                    created: o["created"]?.int64Value ?? 0))
        }
        for (i, o) in try list("managementTokens").enumerated() {
            managementTokens.append(
                APIToken(
                    sha256: try string(o, "sha256", "managementTokens", i), label: o["label"]?.stringValue ?? "",
                    created: o["created"]?.int64Value ?? 0))
        }
        for (i, o) in try list("webAuthTokens").enumerated() {
            webAuthTokens.append(
                WebAuthToken(
                    sha256: try string(o, "sha256", "webAuthTokens", i),
                    user: try string(o, "user", "webAuthTokens", i),
                    created: o["created"]?.int64Value ?? 0))
        }
        for (i, o) in try list("serverKeys").enumerated() {
            let pem = try string(o, "publicKey", "serverKeys", i)
            guard (try? P256.Signing.PublicKey(pemRepresentation: pem)) != nil else {
                throw WebServicesJSONError("serverKeys[\(i)]: \"publicKey\" is not a P-256 public key in PEM")
            }
            serverKeys.append(
                ServerKey(
                    keyID: try string(o, "keyID", "serverKeys", i), publicKey: pem,
                    user: try string(o, "user", "serverKeys", i), created: o["created"]?.int64Value ?? 0))
        }
    }
}

/// The credentials a running server consults, re-read from the file on a miss.
final class CredentialStore: @unchecked Sendable {
    private let directory: String
    private let fileSystem: any FileSystem
    private let lock = NSLock()
    // Guarded by lock:
    private var current: Credentials
    private var lastReload: Date
    private var keys: [String: (P256.Signing.PublicKey, String)] = [:]
    /// Tokens already found valid, by their text (hashing one costs a SHA-256 per request): only
    /// hits are kept, so the caches hold at most the file's tokens; emptied when the file is re-read.
    private var knownAPITokens: Set<String> = []
    private var knownWebAuthTokens: [String: String] = [:]

    init(directory: String, fileSystem: any FileSystem) throws(CredentialsError) {
        self.directory = directory
        self.fileSystem = fileSystem
        current = try Credentials.load(directory: directory, fileSystem: fileSystem)
        lastReload = Date()
        keys = Self.parsedKeys(current)
    }

    private static func parsedKeys(_ c: Credentials) -> [String: (P256.Signing.PublicKey, String)] {
        var out: [String: (P256.Signing.PublicKey, String)] = [:]
        for k in c.serverKeys {
            // `Credentials(json:)` has already refused keys that do not parse.
            if let key = try? P256.Signing.PublicKey(pemRepresentation: k.publicKey) { out[k.keyID] = (key, k.user) }
        }
        return out
    }

    /// Looks something up; on a miss re-reads the file (at most once a second) and looks again.
    /// A file that became unreadable keeps the credentials last read (and is reported by the
    /// next `cirrus token` command), so a half-edited file never locks everyone out.
    private func find<T>(_ lookup: (Credentials, [String: (P256.Signing.PublicKey, String)]) -> T?) -> T? {
        lock.withLock {
            if let hit = lookup(current, keys) { return hit }
            guard Date().timeIntervalSince(lastReload) >= 1 else { return nil }
            lastReload = Date()
            // Ignoring a read error is right here: see the comment above.
            guard let fresh = try? Credentials.load(directory: directory, fileSystem: fileSystem) else { return nil }
            current = fresh
            keys = Self.parsedKeys(fresh)
            knownAPITokens = []
            knownWebAuthTokens = [:]
            return lookup(current, keys)
        }
    }

    func isAPIToken(_ token: String) -> Bool {
        if lock.withLock({ knownAPITokens.contains(token) }) { return true }
        let d = Credentials.digest(token)
        let valid = find { c, _ in c.apiTokens.contains { $0.sha256 == d } ? true : nil } ?? false
        if valid { lock.withLock { _ = knownAPITokens.insert(token) } }
        return valid
    }

    func isManagementToken(_ token: String) -> Bool {
        let d = Credentials.digest(token)
        return find { c, _ in c.managementTokens.contains { $0.sha256 == d } ? true : nil } ?? false
    }

    func user(forWebAuthToken token: String) -> String? {
        if let user = lock.withLock({ knownWebAuthTokens[token] }) { return user }
        let d = Credentials.digest(token)
        let user = find { c, _ in c.webAuthTokens.first { $0.sha256 == d }?.user }
        if let user { lock.withLock { knownWebAuthTokens[token] = user } }
        return user
    }

    func serverKey(_ keyID: String) -> (P256.Signing.PublicKey, String)? {
        find { _, keys in keys[keyID] }
    }
}

extension Credentials {
    /// `cirrus repair` of `DIR/web-services.json`: when it does not read, every token and key
    /// that still does is kept (the damaged file is kept under `DIR/damaged/`); nil when the
    /// file is missing or sound.
    public static func repair(directory: String, options: ContainerOptions) throws(CirrusError) -> SideFileRepair? {
        try Container.repairJSONFile(
            at: directory + "/" + fileName, options: options,
            consequence: "the lost tokens and keys no longer authenticate: create them again (`cirrus token|key`)"
        ) { json in
            guard json["version"]?.int64Value == 1, case .object(let members) = json else { return nil }
            var out: [(String, JSONValue)] = [("version", .integer(1))]
            var dropped = 0
            var kept = 0
            for (key, value) in members where key != "version" {
                guard case .array(let items) = value else {
                    dropped += 1
                    continue
                }
                let sound = items.filter { item in
                    (try? Credentials(json: .object([("version", .integer(1)), (key, .array([item]))]))) != nil
                }
                dropped += items.count - sound.count
                kept += sound.count
                out.append((key, .array(sound)))
            }
            return (.object(out), kept, dropped)
        }
    }
}

// The logic of `cirrus token create [--user U | --management]|list|revoke` and `cirrus key add|list|remove`: editing
// DIR/web-services.json (Credentials.swift). Each returns the text to print or throws with a
// message naming what is wrong.

import CirrusIO
import Crypto
import Foundation

/// Creating and removing API tokens, web auth tokens and server-to-server keys.
public enum CredentialCommands {
    /// Creates an API token (no user), a web auth token acting as `user`, or (with `management`)
    /// a management token, which allows schema promotion; returns the token, which is shown only
    /// now (the file keeps its digest).
    ///
    /// ```swift
    /// let token = try CredentialCommands.createToken(directory: "places", user: nil)
    /// ```
    public static func createToken(
        directory: String, user: String?, label: String = "", management: Bool = false,
        fileSystem: any FileSystem = POSIXFileSystem(), now: Date = Date()
    ) throws(CredentialsError) -> String {
        try requireDirectory(directory, fileSystem)
        let token = Credentials.newToken()
        let created = Int64(now.timeIntervalSince1970 * 1000)
        try edit(directory, fileSystem) { c throws(CredentialsError) in
            if management {
                guard user == nil else {
                    throw CredentialsError(message: "a management token acts as no user: give --user or --management")
                }
                c.managementTokens.append(.init(sha256: Credentials.digest(token), label: label, created: created))
            } else if let user {
                guard !user.isEmpty, user.utf8.count <= 255 else {
                    throw CredentialsError(message: "--user must be a user record name of 1 to 255 bytes")
                }
                c.webAuthTokens.append(.init(sha256: Credentials.digest(token), user: user, created: created))
            } else {
                c.apiTokens.append(.init(sha256: Credentials.digest(token), label: label, created: created))
            }
        }
        return token
    }

    /// Removes the token (API, web auth or management) whose value is `token`.
    public static func revokeToken(
        directory: String, token: String, fileSystem: any FileSystem = POSIXFileSystem()
    )
        throws(CredentialsError)
    {
        let d = Credentials.digest(token)
        try edit(directory, fileSystem) { c throws(CredentialsError) in
            let before = c.apiTokens.count + c.webAuthTokens.count + c.managementTokens.count
            c.apiTokens.removeAll { $0.sha256 == d }
            c.webAuthTokens.removeAll { $0.sha256 == d }
            c.managementTokens.removeAll { $0.sha256 == d }
            guard c.apiTokens.count + c.webAuthTokens.count + c.managementTokens.count < before else {
                throw CredentialsError(message: "no such token in \(directory)/\(Credentials.fileName)")
            }
        }
    }

    /// Registers a server-to-server key: `pem` is a P-256 public key (`openssl ec -pubout`);
    /// requests it signs act as `user` in the public database. Returns the key id (the
    /// SHA-256 of the key's DER form, in hex, unless `keyID` is given).
    public static func addKey(
        directory: String, pem: String, user: String, keyID: String? = nil,
        fileSystem: any FileSystem = POSIXFileSystem(), now: Date = Date()
    ) throws(CredentialsError) -> String {
        try requireDirectory(directory, fileSystem)
        let key: P256.Signing.PublicKey
        do {
            key = try P256.Signing.PublicKey(pemRepresentation: pem)
        } catch {
            throw CredentialsError(message: "not a P-256 public key in PEM (openssl ec -in key.pem -pubout): \(error)")
        }
        let id = keyID ?? SHA256.hash(data: key.derRepresentation).map { String(format: "%02x", $0) }.joined()
        try edit(directory, fileSystem) { c throws(CredentialsError) in
            guard !c.serverKeys.contains(where: { $0.keyID == id }) else {
                throw CredentialsError(message: "a key with id \(id) is already registered")
            }
            c.serverKeys.append(
                .init(
                    keyID: id, publicKey: key.pemRepresentation, user: user,
                    created: Int64(now.timeIntervalSince1970 * 1000)))
        }
        return id
    }

    /// Removes a server-to-server key by id.
    public static func removeKey(
        directory: String, keyID: String, fileSystem: any FileSystem = POSIXFileSystem()
    )
        throws(CredentialsError)
    {
        try edit(directory, fileSystem) { c throws(CredentialsError) in
            guard c.serverKeys.contains(where: { $0.keyID == keyID }) else {
                throw CredentialsError(message: "no key with id \(keyID)")
            }
            c.serverKeys.removeAll { $0.keyID == keyID }
        }
    }

    /// One line per credential (never the token itself, which the file does not hold).
    public static func list(
        directory: String, fileSystem: any FileSystem = POSIXFileSystem()
    ) throws(CredentialsError)
        -> String
    {
        let c = try Credentials.load(directory: directory, fileSystem: fileSystem)
        var out = ""
        for t in c.apiTokens { out += "api token  sha256 \(t.sha256.prefix(12))…  \(t.label)\n" }
        for t in c.webAuthTokens { out += "web auth   sha256 \(t.sha256.prefix(12))…  user \(t.user)\n" }
        for k in c.serverKeys { out += "server key \(k.keyID)  user \(k.user)\n" }
        for t in c.managementTokens { out += "management sha256 \(t.sha256.prefix(12))…  \(t.label)\n" }
        return out.isEmpty ? "no credentials; create an API token with `cirrus token create --db DIR`\n" : out
    }

    /// Loads DIR/web-services.json, lets `change` edit it and saves it: each command's one
    /// read-modify-write. Nothing is saved when `change` throws.
    static func edit(
        _ directory: String, _ fs: any FileSystem, _ change: (inout Credentials) throws(CredentialsError) -> Void
    ) throws(CredentialsError) {
        var c = try Credentials.load(directory: directory, fileSystem: fs)
        try change(&c)
        try c.save(directory: directory, fileSystem: fs)
    }

    static func requireDirectory(_ directory: String, _ fs: any FileSystem) throws(CredentialsError) {
        guard fs.exists(directory) else {
            throw CredentialsError(
                message: "\(directory) does not exist; create the container first (cirrus import, cirrus repl)")
        }
    }
}

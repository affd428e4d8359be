// UserDirectory: the container's user identities — record name, optional email address and
// phone number, name components, and the discoverability each user chose — in `DIR/users.json`,
// beside the environments, so both environments (and `cirrus serve`) share them, and a reset of
// development keeps them (CloudKit's identities belong to the container, not to an environment).
//
//   {"version": 1, "users": [{"userRecordName": "_alice", "emailAddress": "alice@example.com",
//     "phoneNumber": "+33612345678", "givenName": "Alice", "familyName": "Martin",
//     "discoverability": "granted"}]}
//
// Email addresses are kept lowercased and phone numbers as "+" and digits, so that lookups match
// however they are written. The file is replaced atomically (write, fsync, rename, fsync
// directory) under `users.json.lock`, read loudly (a file that does not parse is an error naming
// it, never an empty directory), and re-read at most once a second by readers, so a user added
// by `cirrus users add` while a server runs is found within a second.
//
// Privacy (Database+Users.swift): discovery returns only users whose discoverability is
// `granted`; anyone else is absent from the answer, exactly as an unknown address is.

import CirrusFacade
import CirrusIO
import Foundation
import RecordLog
import RecordModel

/// The users file of one container directory, cached; thread-safe.
final class UserDirectory: @unchecked Sendable {
    static let fileName = "users.json"
    /// The most lookups one `discoverUserIdentities` call may ask for.
    static let maximumLookups = UserAccount.maximumLookups

    let directory: String
    let fs: any FileSystem
    let clock: any LogClock
    private let lock = NSLock()
    // Guarded by lock:
    private var accounts: [String: UserAccount] = [:]
    private var loadedAt: UInt64?

    init(directory: String, fileSystem: any FileSystem, clock: any LogClock) {
        self.directory = directory
        fs = fileSystem
        self.clock = clock
    }

    var path: String { joinPath(directory, Self.fileName) }

    /// Every account, re-read when the cached copy is a second old.
    func all() throws(CirrusError) -> [String: UserAccount] {
        lock.lock()
        defer { lock.unlock() }
        let now = clock.monotonicNanoseconds()
        if let at = loadedAt, now >= at, now - at < 1_000_000_000 { return accounts }
        accounts = try read()
        loadedAt = now
        return accounts
    }

    /// Applies `change` to the current accounts (read afresh under the file lock) and writes the
    /// result; `change` throwing writes nothing.
    func update(_ change: (inout [String: UserAccount]) throws(CirrusError) -> Void) throws(CirrusError) {
        lock.lock()
        defer { lock.unlock() }
        let fileLock = try lockFile()
        defer { fileLock.unlock() }
        var current = try read()
        let before = current
        try change(&current)
        if current != before {
            do {
                try fs.createDirectory(directory)
                try fs.writeAtomically(path, Self.encode(current))
            } catch {
                throw CirrusError(.internalError, "cannot write \(path): \(error)")
            }
        }
        accounts = current
        loadedAt = clock.monotonicNanoseconds()
    }

    private func lockFile() throws(CirrusError) -> any FileLock {
        let lockPath = path + ".lock"
        var last: (any Error)?
        for _ in 0..<200 {
            do {
                try fs.createDirectory(directory)
                return try fs.lockFile(lockPath)
            } catch {
                last = error
                usleep(10_000)
            }
        }
        throw CirrusError(
            .internalError, "\(lockPath) is held by another process for over 2 s: \(last.map { "\($0)" } ?? "")")
    }

    private func read() throws(CirrusError) -> [String: UserAccount] {
        guard fs.exists(path) else { return [:] }
        let bytes: [UInt8]
        do { bytes = try fs.read(path) } catch { throw CirrusError(.internalError, "cannot read \(path): \(error)") }
        do {
            let file = try JSONDecoder().decode(File.self, from: Data(bytes))
            guard file.version == 1 else {
                throw CirrusError(.internalError, "\(path) has version \(file.version); this Cirrus reads version 1")
            }
            var out: [String: UserAccount] = [:]
            for u in file.users {
                out[u.userRecordName] = UserAccount(
                    userRecordName: u.userRecordName, emailAddress: u.emailAddress, phoneNumber: u.phoneNumber,
                    name: UserNameComponents(givenName: u.givenName, familyName: u.familyName),
                    discoverability: u.discoverability ?? .initialState)
            }
            return out
        } catch let e as CirrusError {
            throw e
        } catch {
            throw CirrusError(.internalError, "\(path) is not a users file (\(error)); fix or remove it")
        }
    }

    static func encode(_ accounts: [String: UserAccount]) -> [UInt8] {
        let users = accounts.values.sorted { compareUTF8($0.userRecordName, $1.userRecordName) < 0 }.map {
            File.User(
                userRecordName: $0.userRecordName, emailAddress: $0.emailAddress, phoneNumber: $0.phoneNumber,
                givenName: $0.name.givenName, familyName: $0.name.familyName, discoverability: $0.discoverability)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        return Array((try? encoder.encode(File(version: 1, users: users))) ?? Data())
    }

    /// The file's shape.
    struct File: Codable {
        struct User: Codable {
            var userRecordName: String
            var emailAddress: String?
            var phoneNumber: String?
            var givenName: String?
            var familyName: String?
            var discoverability: DiscoverabilityStatus?
        }
        var version: Int
        var users: [User]
    }

    /// The accounts by normalized email address and phone number, for a batch of lookups.
    struct Index {
        let accounts: [String: UserAccount]
        var byEmail: [String: String] = [:]
        var byPhone: [String: String] = [:]

        init(_ accounts: [String: UserAccount]) {
            self.accounts = accounts
            for a in accounts.values {
                if let e = a.emailAddress { byEmail[e] = a.userRecordName }
                if let p = a.phoneNumber { byPhone[p] = a.userRecordName }
            }
        }

        /// The discoverable account a lookup finds, nil for anyone else (unknown and not
        /// discoverable alike). `info` must be normalized.
        func find(_ info: UserLookupInfo) -> UserAccount? {
            let name: String?
            switch info {
            case .userRecordName(let n): name = n
            case .emailAddress(let e): name = byEmail[e]
            case .phoneNumber(let p): name = byPhone[p]
            }
            guard let name, let match = accounts[name], match.discoverability == .granted else { return nil }
            return match
        }
    }
}

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

import CirrusIO
import Foundation
import RecordLog
import RecordModel

/// Whether a user lets other users of the app find them by email address, phone number or user
/// record name (CloudKit's `userDiscoverability` application permission).
public enum DiscoverabilityStatus: String, Sendable, Hashable, Codable, CaseIterable {
    /// The user was never asked: not discoverable.
    case initialState
    /// The user agreed to be discoverable.
    case granted
    /// The user refused: not discoverable.
    case denied
}

/// What Cirrus can know of a caller's account (CloudKit's `CKAccountStatus`).
public enum AccountStatus: String, Sendable, Hashable, CaseIterable {
    /// A signed-in user: they may write to the public database and use their private database.
    case available
    /// No user is signed in (an anonymous caller): the public database is readable, not writable.
    case noAccount
    /// The account may not be used (never reported by Cirrus, which has no parental controls).
    case restricted
    /// The container's user directory cannot be read (`users.json` is damaged).
    case couldNotDetermine
    /// The container is closed.
    case temporarilyUnavailable
}

/// A user's name, as far as it is known.
public struct UserNameComponents: Sendable, Hashable, Codable {
    /// The given (first) name.
    public var givenName: String?
    /// The family (last) name.
    public var familyName: String?

    /// A name from its parts.
    public init(givenName: String? = nil, familyName: String? = nil) {
        self.givenName = givenName
        self.familyName = familyName
    }
}

/// One user of the container as the administrator sees it: everything that is kept.
///
/// ```swift
/// try container.saveUserAccount(UserAccount(userRecordName: "_alice", emailAddress: "alice@example.com",
///                                           name: UserNameComponents(givenName: "Alice")))
/// ```
public struct UserAccount: Sendable, Hashable {
    /// The user record name (the user's id in every database).
    public var userRecordName: String
    /// The email address, lowercased; nil when none is known.
    public var emailAddress: String?
    /// The phone number as "+" (when given) and digits; nil when none is known.
    public var phoneNumber: String?
    /// The user's name.
    public var name: UserNameComponents
    /// Whether the user lets others discover them.
    public var discoverability: DiscoverabilityStatus

    /// An account; addresses are checked and normalized when it is saved.
    public init(
        userRecordName: String, emailAddress: String? = nil, phoneNumber: String? = nil,
        name: UserNameComponents = UserNameComponents(), discoverability: DiscoverabilityStatus = .initialState
    ) {
        self.userRecordName = userRecordName
        self.emailAddress = emailAddress
        self.phoneNumber = phoneNumber
        self.name = name
        self.discoverability = discoverability
    }
}

/// How a user is looked up (CloudKit's `CKUserIdentity.LookupInfo`).
public enum UserLookupInfo: Sendable, Hashable {
    /// By email address (compared case-insensitively).
    case emailAddress(String)
    /// By phone number (compared by its digits and leading "+").
    case phoneNumber(String)
    /// By user record name.
    case userRecordName(String)
}

/// A discovered user (CloudKit's `CKUserIdentity`): who they are and how they were found —
/// never more than they chose to share.
public struct UserIdentity: Sendable, Hashable {
    /// The user record name.
    public var userRecordName: String
    /// The user's name.
    public var name: UserNameComponents
    /// The lookup that found them, as it was asked.
    public var lookupInfo: UserLookupInfo
}

/// The users file of one container directory, cached; thread-safe.
final class UserDirectory: @unchecked Sendable {
    static let fileName = "users.json"
    /// The most lookups one `discoverUserIdentities` call may ask for.
    static let maximumLookups = 1_000

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

    // MARK: - Addresses

    /// `text` as a stored email address (lowercased), or invalidArguments naming it: one `@`, a
    /// local part of 1–64 printable ASCII characters without spaces or `<>()[],;:"@\`, a domain
    /// of at least two dot-separated labels of letters, digits and inner hyphens; ≤ 254 bytes.
    static func normalizedEmail(_ text: String) throws(CirrusError) -> String {
        func refuse(_ why: String) -> CirrusError {
            CirrusError(.invalidArguments, "\"\(text.prefix(300))\" is not an email address: \(why)")
        }
        let bytes = Array(text.utf8)
        guard bytes.count <= 254 else { throw refuse("longer than 254 characters") }
        let parts = bytes.split(separator: UInt8(ascii: "@"), omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw refuse("it needs exactly one @") }
        let local = parts[0]
        let domain = parts[1]
        guard (1...64).contains(local.count) else { throw refuse("the part before @ has 1 to 64 characters") }
        let forbidden = Set("<>()[],;:\"@\\ ".utf8)
        guard local.allSatisfy({ $0 > 0x20 && $0 < 0x7F && !forbidden.contains($0) }) else {
            throw refuse("the part before @ has a space, a control, non-ASCII or special character")
        }
        let labels = domain.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard labels.count >= 2 else { throw refuse("the domain needs a dot (example.com)") }
        for l in labels {
            let ok =
                (1...63).contains(l.count) && l.first != UInt8(ascii: "-") && l.last != UInt8(ascii: "-")
                && l.allSatisfy { b in
                    (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
                        || b == UInt8(ascii: "-")
                }
            guard ok else { throw refuse("the domain's parts are letters, digits and inner hyphens") }
        }
        return text.lowercased()
    }

    /// `text` as a stored phone number ("+" when it starts with one, then its digits), or
    /// invalidArguments naming it: digits with spaces, dots, hyphens and parentheses between
    /// them, 4 to 15 digits (E.164's most).
    static func normalizedPhone(_ text: String) throws(CirrusError) -> String {
        var out = ""
        var digits = 0
        for (i, c) in text.unicodeScalars.enumerated() {
            switch c {
            case "0"..."9":
                out.unicodeScalars.append(c)
                digits += 1
            case "+" where i == 0: out = "+"
            case " ", ".", "-", "(", ")": continue
            default:
                throw CirrusError(
                    .invalidArguments,
                    "\"\(text.prefix(100))\" is not a phone number: only digits, a leading +, spaces, dots, "
                        + "hyphens and parentheses")
            }
        }
        guard (4...15).contains(digits) else {
            throw CirrusError(
                .invalidArguments, "\"\(text.prefix(100))\" is not a phone number: it has \(digits) digits (4 to 15)")
        }
        return out
    }

    /// Throws unless `name` can be a user record name (not `__defaultOwner__`).
    static func checkUserRecordName(_ name: String) throws(CirrusError) {
        if name == ZoneID.defaultOwnerName || (try? Validation.validateRecordName(name)) == nil {
            throw CirrusError(
                .invalidArguments,
                "\"\(name.prefix(300))\" is not a user record name (1 to 255 printable ASCII characters, not "
                    + "\(ZoneID.defaultOwnerName))")
        }
    }

    /// `account` checked and normalized (addresses, name lengths).
    static func normalized(_ account: UserAccount) throws(CirrusError) -> UserAccount {
        var a = account
        try checkUserRecordName(a.userRecordName)
        a.emailAddress = try a.emailAddress.map { (e) throws(CirrusError) in try normalizedEmail(e) }
        a.phoneNumber = try a.phoneNumber.map { (p) throws(CirrusError) in try normalizedPhone(p) }
        for (what, value) in [("given name", a.name.givenName), ("family name", a.name.familyName)] {
            guard let value else { continue }
            if value.isEmpty || value.utf8.count > 255 || value.unicodeScalars.contains(where: { $0.value < 0x20 }) {
                throw CirrusError(
                    .invalidArguments,
                    "the \(what) of \(a.userRecordName) has 1 to 255 bytes and no control characters")
            }
        }
        return a
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

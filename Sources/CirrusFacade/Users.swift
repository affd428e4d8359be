// The user identities of a container and how they are discovered (CloudKit's CKUserIdentity,
// account status, discoverability), the same on every engine; the rules that normalize addresses.

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

    /// A discovered user (the engines make them).
    package init(userRecordName: String, name: UserNameComponents, lookupInfo: UserLookupInfo) {
        self.userRecordName = userRecordName
        self.name = name
        self.lookupInfo = lookupInfo
    }
}

/// How user accounts and lookups are checked and normalized, on every engine.
package enum UserRules {
    /// `text` as a stored email address (lowercased), or invalidArguments naming it: one `@`, a
    /// local part of 1–64 printable ASCII characters without spaces or `<>()[],;:"@\`, a domain
    /// of at least two dot-separated labels of letters, digits and inner hyphens; ≤ 254 bytes.
    package static func normalizedEmail(_ text: String) throws(CirrusError) -> String {
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
    package static func normalizedPhone(_ text: String) throws(CirrusError) -> String {
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
    package static func checkUserRecordName(_ name: String) throws(CirrusError) {
        if name == ZoneID.defaultOwnerName || (try? Validation.validateRecordName(name)) == nil {
            throw CirrusError(
                .invalidArguments,
                "\"\(name.prefix(300))\" is not a user record name (1 to 255 printable ASCII characters, not "
                    + "\(ZoneID.defaultOwnerName))")
        }
    }

    /// `account` checked and normalized (addresses, name lengths).
    package static func normalized(_ account: UserAccount) throws(CirrusError) -> UserAccount {
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
}

extension UserLookupInfo {
    /// The lookup as it is compared: an email address lowercased, a phone number as "+" and
    /// digits, a user record name checked. Malformed → invalidArguments naming it.
    ///
    /// ```swift
    /// try UserLookupInfo.phoneNumber("+33 6 12-34-56-78").normalized()   // .phoneNumber("+33612345678")
    /// ```
    public func normalized() throws(CirrusError) -> UserLookupInfo {
        switch self {
        case .emailAddress(let e): return .emailAddress(try UserRules.normalizedEmail(e))
        case .phoneNumber(let p): return .phoneNumber(try UserRules.normalizedPhone(p))
        case .userRecordName(let n):
            try UserRules.checkUserRecordName(n)
            return self
        }
    }
}

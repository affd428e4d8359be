// Container+Users: account status, discoverability and user discovery (CloudKit's
// `accountStatus()`, `requestApplicationPermission(.userDiscoverability)`,
// `discoverUserIdentity(withEmailAddress:|withPhoneNumber:|withUserRecordID:)` and
// `CKDiscoverUserIdentitiesOperation`) on a Database handle, for its identity; and the
// administrator's side on the Container: the accounts themselves. Storage: UserDirectory.swift.
//
// Privacy: a lookup answers only users whose discoverability is `granted`. Anyone else — never
// asked, refused, or unknown — is simply absent: the answer for a user who did not opt in is the
// answer for an address nobody has, so lookups cannot tell who uses the app.

import CirrusFacade
import RecordModel

extension EmbeddedDatabase {
    /// The caller's account status: `available` for a signed-in user, `noAccount` for an
    /// anonymous caller; `couldNotDetermine` when the user directory cannot be read,
    /// `temporarilyUnavailable` when the container is closed. Never throws.
    ///
    /// ```swift
    /// if container.publicDatabase.accountStatus() == .noAccount { /* read-only: ask to sign in */ }
    /// ```
    public func accountStatus() -> AccountStatus {
        if core.store.isClosed { return .temporarilyUnavailable }
        guard identity.userRecordName != nil else { return .noAccount }
        if (try? core.users.all()) == nil { return .couldNotDetermine }
        return .available
    }

    /// Whether the signed-in caller is discoverable. Anonymous → notAuthenticated.
    public func discoverabilityStatus() throws(CirrusError) -> DiscoverabilityStatus {
        let user = try signedInUser("the discoverability status")
        return try core.users.all()[user]?.discoverability ?? .initialState
    }

    /// Records the signed-in caller's answer to the request for discoverability (CloudKit asks
    /// the user in a system prompt; here the caller is the user answering): `granted` makes them
    /// discoverable by their email address, phone number and user record name, `denied` hides
    /// them again. Returns the new status. Anonymous → notAuthenticated.
    ///
    /// ```swift
    /// let mine = container.publicDatabase(as: .user("_alice"))
    /// try mine.requestDiscoverability()               // .granted
    /// try mine.requestDiscoverability(granted: false)  // .denied
    /// ```
    @discardableResult
    public func requestDiscoverability(granted: Bool = true) throws(CirrusError) -> DiscoverabilityStatus {
        let user = try signedInUser("a request for discoverability")
        let status: DiscoverabilityStatus = granted ? .granted : .denied
        try core.users.update { (accounts) throws(CirrusError) in
            var a = accounts[user] ?? UserAccount(userRecordName: user)
            a.discoverability = status
            accounts[user] = a
        }
        return status
    }

    /// Looks up many users at once (an address book): the discoverable users found, in the
    /// order of `lookups` (each once, with the first lookup that found them). At most 1 000
    /// lookups (limitExceeded); any malformed one → invalidArguments naming it and its index, and
    /// nothing is looked up. Anonymous → notAuthenticated.
    ///
    /// ```swift
    /// let found = try db.discoverUserIdentities([.emailAddress("bob@example.com"), .phoneNumber("+33 6 12 34 56 78")])
    /// ```
    public func discoverUserIdentities(_ lookups: [UserLookupInfo]) throws(CirrusError) -> [UserIdentity] {
        if Task.isCancelled { throw CirrusError(.operationCancelled, "the lookup was cancelled") }
        _ = try signedInUser("discovering users")
        return try Self.discover(lookups, in: core.users)
    }

    /// The lookups' discoverable users from `users` (the caller is checked by the caller).
    static func discover(_ lookups: [UserLookupInfo], in users: UserDirectory) throws(CirrusError) -> [UserIdentity] {
        guard lookups.count <= UserDirectory.maximumLookups else {
            throw CirrusError(
                .limitExceeded,
                "\(lookups.count) lookups in one request; the limit is \(UserDirectory.maximumLookups)")
        }
        let normalized = try normalized(lookups)
        let index = UserDirectory.Index(try users.all())
        var seen = Set<String>()
        var out: [UserIdentity] = []
        for (asked, info) in zip(lookups, normalized) {
            guard let a = index.find(info), seen.insert(a.userRecordName).inserted else { continue }
            out.append(UserIdentity(userRecordName: a.userRecordName, name: a.name, lookupInfo: asked))
        }
        return out
    }

    /// The caller's own account, whether or not they are discoverable (what `users/caller`
    /// shows); nil when nothing is kept about them. Anonymous → notAuthenticated.
    public func callerAccount() throws(CirrusError) -> UserAccount? {
        let user = try signedInUser("the caller's account")
        return try core.users.all()[user]
    }

    /// `lookups` with addresses normalized, or invalidArguments naming the first bad one.
    static func normalized(_ lookups: [UserLookupInfo]) throws(CirrusError) -> [UserLookupInfo] {
        var out: [UserLookupInfo] = []
        out.reserveCapacity(lookups.count)
        for (i, l) in lookups.enumerated() {
            do {
                out.append(try l.normalized())
            } catch {
                throw CirrusError(.invalidArguments, "lookup \(i): \(error.message)")
            }
        }
        return out
    }

    private func signedInUser(_ what: String) throws(CirrusError) -> String {
        guard let user = identity.userRecordName else {
            throw CirrusError(.notAuthenticated, "\(what) needs a signed-in user")
        }
        return user
    }
}

extension Container {
    /// Every user account the container keeps (both environments share them), sorted by user
    /// record name — what the administrator sees, discoverable or not.
    public func userAccounts() throws(CirrusError) -> [UserAccount] {
        try Self.userAccounts(in: embeddedCore("user accounts").users)
    }

    /// Adds or replaces a user account (the administrator's `cirrus users add`). The email
    /// address is lowercased and the phone number kept as "+" and digits; a malformed address,
    /// a name that is not a user record name, or an address another user already has →
    /// invalidArguments naming it, and nothing changes. Returns the account as kept.
    @discardableResult
    public func saveUserAccount(_ account: UserAccount) throws(CirrusError) -> UserAccount {
        try Self.saveUserAccount(account, in: embeddedCore("user accounts").users)
    }

    /// Sets a user's discoverability on their behalf (`cirrus users set-discoverable`). An
    /// unknown user → unknownItem; nothing changes.
    public func setDiscoverability(_ status: DiscoverabilityStatus, ofUser user: String) throws(CirrusError) {
        try Self.setDiscoverability(status, ofUser: user, in: embeddedCore("user accounts").users)
    }

    /// ``userAccounts()`` of the container in `directory`, without opening it (the user
    /// directory is a file of its own: this works beside a running `cirrus serve`).
    public static func userAccounts(
        at directory: String, options: ContainerOptions = ContainerOptions()
    ) throws(CirrusError) -> [UserAccount] {
        try userAccounts(in: UserDirectory(directory: directory, fileSystem: options.fileSystem, clock: options.clock))
    }

    /// ``saveUserAccount(_:)`` on the container in `directory`, without opening it.
    @discardableResult
    public static func saveUserAccount(
        _ account: UserAccount, at directory: String, options: ContainerOptions = ContainerOptions()
    ) throws(CirrusError) -> UserAccount {
        try saveUserAccount(
            account, in: UserDirectory(directory: directory, fileSystem: options.fileSystem, clock: options.clock))
    }

    /// ``setDiscoverability(_:ofUser:)`` on the container in `directory`, without opening it.
    public static func setDiscoverability(
        _ status: DiscoverabilityStatus, ofUser user: String, at directory: String,
        options: ContainerOptions = ContainerOptions()
    ) throws(CirrusError) {
        try setDiscoverability(
            status, ofUser: user,
            in: UserDirectory(directory: directory, fileSystem: options.fileSystem, clock: options.clock))
    }

    /// What a signed-in caller's `Database.discoverUserIdentities(_:)` answers, for the
    /// container in `directory`, without opening it (`cirrus users lookup`).
    public static func discoverUserIdentities(
        _ lookups: [UserLookupInfo], at directory: String, options: ContainerOptions = ContainerOptions()
    ) throws(CirrusError) -> [UserIdentity] {
        try EmbeddedDatabase.discover(
            lookups, in: UserDirectory(directory: directory, fileSystem: options.fileSystem, clock: options.clock))
    }

    static func userAccounts(in users: UserDirectory) throws(CirrusError) -> [UserAccount] {
        try users.all().values.sorted { compareUTF8($0.userRecordName, $1.userRecordName) < 0 }
    }

    static func saveUserAccount(_ account: UserAccount, in users: UserDirectory) throws(CirrusError) -> UserAccount {
        let a = try UserRules.normalized(account)
        try users.update { (accounts) throws(CirrusError) in
            for other in accounts.values where other.userRecordName != a.userRecordName {
                if let e = a.emailAddress, other.emailAddress == e {
                    throw CirrusError(.invalidArguments, "the email address \(e) is already \(other.userRecordName)'s")
                }
                if let p = a.phoneNumber, other.phoneNumber == p {
                    throw CirrusError(.invalidArguments, "the phone number \(p) is already \(other.userRecordName)'s")
                }
            }
            accounts[a.userRecordName] = a
        }
        return a
    }

    static func setDiscoverability(
        _ status: DiscoverabilityStatus, ofUser user: String, in users: UserDirectory
    ) throws(CirrusError) {
        try UserRules.checkUserRecordName(user)
        try users.update { (accounts) throws(CirrusError) in
            guard var a = accounts[user] else {
                throw CirrusError(.unknownItem, "no user account \(user) (add it with `cirrus users add`)")
            }
            a.discoverability = status
            accounts[user] = a
        }
    }
}

// Database+AsyncUsers: the user calls (account status, discoverability, discovery, the caller's
// account, and the administrator's accounts) as async calls that work on every engine. The
// synchronous forms (CirrusEmbedded's Container+Users.swift, Database.swift) read the embedded engine's
// `users.json` in-process; on PostgreSQL the user directory is a table of the server
// (CirrusPostgres, docs/scale-out.md), which only an async call can read. Same rules, same
// errors on both engines.

import RecordModel

extension Database {
    /// ``accountStatus()`` on any engine: `available` for a signed-in user, `noAccount` for an
    /// anonymous caller; `couldNotDetermine` when the user directory cannot be read,
    /// `temporarilyUnavailable` when the container is closed (or its server cannot be reached).
    ///
    /// ```swift
    /// if await db.fetchAccountStatus() == .noAccount { /* read-only: ask to sign in */ }
    /// ```
    public func fetchAccountStatus() async -> AccountStatus { await backend.fetchAccountStatus() }

    /// ``discoverabilityStatus()`` on any engine. Anonymous → notAuthenticated.
    public func fetchDiscoverabilityStatus() async throws(CirrusError) -> DiscoverabilityStatus {
        try await backend.fetchDiscoverabilityStatus()
    }

    /// ``requestDiscoverability(granted:)`` on any engine: records the signed-in caller's answer
    /// and returns the new status. Anonymous → notAuthenticated.
    ///
    /// ```swift
    /// try await container.publicDatabase(as: .user("_alice")).setDiscoverability(granted: true)
    /// ```
    @discardableResult
    public func setDiscoverability(granted: Bool = true) async throws(CirrusError) -> DiscoverabilityStatus {
        try await backend.setDiscoverability(granted: granted)
    }

    /// ``discoverUserIdentities(_:)`` on any engine: the discoverable users the lookups find, in
    /// the lookups' order, each once. At most 1 000 lookups; a malformed one → invalidArguments.
    ///
    /// ```swift
    /// let found = try await db.lookUpUserIdentities([.emailAddress("bob@example.com")])
    /// ```
    public func lookUpUserIdentities(_ lookups: [UserLookupInfo]) async throws(CirrusError) -> [UserIdentity] {
        try await backend.lookUpUserIdentities(lookups)
    }

    /// ``callerAccount()`` on any engine: what is kept about the signed-in caller (nil: nothing).
    public func fetchCallerAccount() async throws(CirrusError) -> UserAccount? {
        try await backend.fetchCallerAccount()
    }
}

extension Container {
    /// `userAccounts()` (a container directory's, CirrusEmbedded) on any engine: every user account, sorted by user record name.
    public func fetchUserAccounts() async throws(CirrusError) -> [UserAccount] {
        try await backend.userAccounts()
    }

    /// `saveUserAccount(_:)` (CirrusEmbedded) on any engine: adds or replaces a user account (addresses
    /// normalized; a malformed one, or one another user has → invalidArguments) and returns it.
    ///
    /// ```swift
    /// try await container.storeUserAccount(UserAccount(userRecordName: "_bob", emailAddress: "bob@example.com"))
    /// ```
    @discardableResult
    public func storeUserAccount(_ account: UserAccount) async throws(CirrusError) -> UserAccount {
        try await backend.saveUserAccount(account)
    }

    /// `setDiscoverability(_:ofUser:)` (CirrusEmbedded) on any engine (an unknown user → unknownItem).
    public func changeDiscoverability(_ status: DiscoverabilityStatus, ofUser user: String) async throws(CirrusError) {
        try await backend.setDiscoverability(status, ofUser: user)
    }
}

extension UserAccount {
    /// The account as a user directory keeps it: the user record name checked, the email
    /// address lowercased, the phone number as "+" and digits; malformed → invalidArguments.
    public func normalized() throws(CirrusError) -> UserAccount { try UserRules.normalized(self) }

    /// The most lookups one discovery call may ask for.
    public static let maximumLookups = 1_000
}

extension UserIdentity {
    /// A discovered user (for engines that look users up themselves).
    public init(discovered userRecordName: String, name: UserNameComponents, lookupInfo: UserLookupInfo) {
        self.init(userRecordName: userRecordName, name: name, lookupInfo: lookupInfo)
    }
}

// PostgresContainer+Users: the container's user identities on PostgreSQL — account status,
// discoverability, discovery, the caller's account, and the administrator's accounts — with the
// embedded engine's rules (Cirrus's Container+Users.swift: addresses normalized, an address
// belongs to one user, lookups answer only users who opted in, at most 1 000 lookups).
//
// Identities belong to the container, not to an environment (as the embedded engine's
// `users.json` beside both environments): one table, `cirrus_users`, in a namespace of its own
// per container (`cirrus_<container>_users`), which a reset of development (which drops the
// development namespace) keeps. Under Citus it is a reference table: lookups by email address or
// phone number are not a tenant's (docs/scale-out.md).
//
//   cirrus_users (user_record_name PRIMARY KEY, email UNIQUE, phone UNIQUE, given_name,
//                 family_name, discoverability)

import CirrusFacade
import Logging
import PostgresNIO
import RecordModel

extension PostgresTenant {
    /// The namespace of the container's user identities (shared by both environments).
    var usersNamespace: String { SQLName.make("cirrus_", "\(containerID)_users") }
}

extension PostgresStore {
    /// `"cirrus_<container>_users"."cirrus_users"`.
    nonisolated var usersTable: String { SQLName.qualified(tenant.usersNamespace, "cirrus_users") }

    /// Creates the users table when missing (under an advisory lock: two processes opening the
    /// container at once would otherwise race on `CREATE … IF NOT EXISTS`).
    func prepareUsers() async throws(CirrusError) {
        guard layout == .singleNode else { return }
        let namespace = tenant.usersNamespace
        let table = usersTable
        let logger = self.logger
        let citus = self.citus
        try await run("creating the user directory of \(tenant.containerID)") { client in
            try await client.withTransaction(logger: logger) { conn in
                var lock = PostgresBindings()
                lock.append(namespace)
                try await conn.query(
                    PostgresQuery(unsafeSQL: "SELECT pg_advisory_xact_lock(hashtext($1))", binds: lock), logger: logger)
                var exists = PostgresBindings()
                exists.append(table)
                var found = false
                for try await e in try await conn.query(
                    PostgresQuery(unsafeSQL: "SELECT to_regclass($1) IS NOT NULL", binds: exists), logger: logger
                ).decode(Bool.self) { found = e }
                if found { return }
                try await conn.query(
                    PostgresQuery(unsafeSQL: "CREATE SCHEMA IF NOT EXISTS \(SQLName.quote(namespace))"), logger: logger)
                try await conn.query(
                    PostgresQuery(
                        unsafeSQL: """
                            CREATE TABLE \(table) (
                                user_record_name text COLLATE "C" PRIMARY KEY, email text COLLATE "C" UNIQUE,
                                phone text COLLATE "C" UNIQUE, given_name text, family_name text,
                                discoverability text NOT NULL DEFAULT 'initialState')
                            """), logger: logger)
                if citus {
                    var t = PostgresBindings()
                    t.append(table)
                    try await conn.query(
                        PostgresQuery(unsafeSQL: "SELECT create_reference_table($1)", binds: t), logger: logger)
                }
            }
        }
    }

    /// Accounts whose user record name, email address or phone number is among the given ones.
    func userAccounts(
        names: [String]? = nil, emails: [String] = [], phones: [String] = []
    ) async throws(CirrusError) -> [UserAccount] {
        var b = PostgresBindings()
        var sql =
            "SELECT user_record_name, email, phone, given_name, family_name, discoverability FROM \(usersTable)"
        if let names {
            b.append(names)
            b.append(emails)
            b.append(phones)
            sql += " WHERE user_record_name = ANY($1::text[]) OR email = ANY($2::text[]) OR phone = ANY($3::text[])"
        }
        sql += " ORDER BY user_record_name"
        let binds = b
        let statement = sql
        let registry = statements
        let logger = self.logger
        return try await run("reading the user directory of \(tenant.containerID)", retryRead: true) { client in
            try await client.run(statement, binds, registry: registry, logger: logger).map { row in
                let (name, email, phone, given, family, status) = try row.decode(
                    (String, String?, String?, String?, String?, String).self)
                return UserAccount(
                    userRecordName: name, emailAddress: email, phoneNumber: phone,
                    name: UserNameComponents(givenName: given, familyName: family),
                    discoverability: DiscoverabilityStatus(rawValue: status) ?? .initialState)
            }
        }
    }

    /// The account of `user`, nil when none is kept.
    func userAccount(_ user: String) async throws(CirrusError) -> UserAccount? {
        try await userAccounts(names: [user]).first { $0.userRecordName == user }
    }

    /// Adds or replaces `account` (normalized by the caller); an address another user has →
    /// invalidArguments naming it, and nothing changes.
    func saveUserAccount(_ a: UserAccount) async throws(CirrusError) {
        let table = usersTable
        let logger = self.logger
        try await run("saving user \(a.userRecordName) of \(tenant.containerID)") { client in
            try await client.withTransaction(logger: logger) { conn in
                // The rows holding these addresses, locked: the check and the write see one state.
                var c = PostgresBindings()
                c.append(a.userRecordName)
                c.append(a.emailAddress ?? "")
                c.append(a.phoneNumber ?? "")
                for try await (other, email, phone) in try await conn.query(
                    PostgresQuery(
                        unsafeSQL: "SELECT user_record_name, email, phone FROM \(table) WHERE user_record_name <> $1 "
                            + "AND (email = $2 OR phone = $3) ORDER BY user_record_name FOR UPDATE", binds: c),
                    logger: logger
                ).decode((String, String?, String?).self) {
                    if let e = a.emailAddress, email == e {
                        throw CirrusError(.invalidArguments, "the email address \(e) is already \(other)'s")
                    }
                    if let p = a.phoneNumber, phone == p {
                        throw CirrusError(.invalidArguments, "the phone number \(p) is already \(other)'s")
                    }
                }
                var b = PostgresBindings()
                b.append(a.userRecordName)
                b.append(a.emailAddress)
                b.append(a.phoneNumber)
                b.append(a.name.givenName)
                b.append(a.name.familyName)
                b.append(a.discoverability.rawValue)
                try await conn.query(
                    PostgresQuery(
                        unsafeSQL: "INSERT INTO \(table) (user_record_name, email, phone, given_name, family_name, "
                            + "discoverability) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (user_record_name) DO UPDATE "
                            + "SET email = EXCLUDED.email, phone = EXCLUDED.phone, given_name = EXCLUDED.given_name, "
                            + "family_name = EXCLUDED.family_name, discoverability = EXCLUDED.discoverability",
                        binds: b), logger: logger)
            }
        }
    }

    /// Sets `user`'s discoverability; `create`: a user without an account gets one (the caller
    /// answering for themselves), otherwise unknownItem.
    func setDiscoverability(
        _ status: DiscoverabilityStatus, ofUser user: String, create: Bool
    ) async throws(CirrusError) {
        let table = usersTable
        var b = PostgresBindings()
        b.append(user)
        b.append(status.rawValue)
        let sql =
            create
            ? "INSERT INTO \(table) (user_record_name, discoverability) VALUES ($1, $2) ON CONFLICT (user_record_name) "
                + "DO UPDATE SET discoverability = EXCLUDED.discoverability RETURNING 1"
            : "UPDATE \(table) SET discoverability = $2 WHERE user_record_name = $1 RETURNING 1"
        let binds = b
        let registry = statements
        let logger = self.logger
        let changed = try await run("setting the discoverability of \(user)") { client in
            try await client.run(sql, binds, registry: registry, logger: logger).count
        }
        if changed == 0 {
            throw CirrusError(.unknownItem, "no user account \(user) (add it with `cirrus users add`)")
        }
    }
}

extension PostgresContainer {
    /// Every user account of the container (both environments share them), sorted by user record
    /// name — what the administrator sees, discoverable or not.
    public func userAccounts() async throws(CirrusError) -> [UserAccount] {
        do {
            return try await root.userAccounts().sorted { compareUTF8($0.userRecordName, $1.userRecordName) < 0 }
        } catch {
            throw error
        }
    }

    /// Adds or replaces a user account (the embedded engine's rules: addresses normalized, an
    /// address belongs to one user); returns it as kept.
    public func saveUserAccount(_ account: UserAccount) async throws(CirrusError) -> UserAccount {
        let a = try account.normalized()
        do {
            try await root.saveUserAccount(a)
        } catch {
            throw error
        }
        return a
    }

    /// Sets a user's discoverability on their behalf; an unknown user → unknownItem.
    public func setDiscoverability(_ status: DiscoverabilityStatus, ofUser user: String) async throws(CirrusError) {
        _ = try UserLookupInfo.userRecordName(user).normalized()
        do {
            try await root.setDiscoverability(status, ofUser: user, create: false)
        } catch {
            throw error
        }
    }
}

extension PostgresDatabase {
    /// The signed-in caller, or notAuthenticated naming what needed one.
    func signedInUser(_ what: String) throws(CirrusError) -> String {
        guard let user = identity.userRecordName else {
            throw CirrusError(.notAuthenticated, "\(what) needs a signed-in user")
        }
        return user
    }

    /// `available` for a signed-in user whose directory can be read, `noAccount` for an anonymous
    /// caller, `temporarilyUnavailable` when the server cannot be reached (or the container is
    /// closed), `couldNotDetermine` when the directory cannot be read.
    public func fetchAccountStatus() async -> AccountStatus {
        guard let user = identity.userRecordName else { return .noAccount }
        do {
            _ = try await container.root.userAccount(user)
            return .available
        } catch {
            return error.code == .networkFailure || error.code == .networkUnavailable
                ? .temporarilyUnavailable : .couldNotDetermine
        }
    }

    /// Whether the signed-in caller is discoverable. Anonymous → notAuthenticated.
    public func fetchDiscoverabilityStatus() async throws(CirrusError) -> DiscoverabilityStatus {
        let user = try signedInUser("the discoverability status")
        do {
            return try await container.root.userAccount(user)?.discoverability ?? .initialState
        } catch {
            throw error
        }
    }

    /// Records the signed-in caller's answer to the request for discoverability.
    public func setDiscoverability(granted: Bool) async throws(CirrusError) -> DiscoverabilityStatus {
        let user = try signedInUser("a request for discoverability")
        let status: DiscoverabilityStatus = granted ? .granted : .denied
        do {
            try await container.root.setDiscoverability(status, ofUser: user, create: true)
        } catch {
            throw error
        }
        return status
    }

    /// The discoverable users the lookups find, in the lookups' order, each once (with the first
    /// lookup that found them). Anonymous → notAuthenticated; more than 1 000 lookups →
    /// limitExceeded; a malformed one → invalidArguments naming it.
    public func lookUpUserIdentities(_ lookups: [UserLookupInfo]) async throws(CirrusError) -> [UserIdentity] {
        if Task.isCancelled { throw CirrusError(.operationCancelled, "the lookup was cancelled") }
        _ = try signedInUser("discovering users")
        guard lookups.count <= UserAccount.maximumLookups else {
            throw CirrusError(
                .limitExceeded, "\(lookups.count) lookups in one request; the limit is \(UserAccount.maximumLookups)")
        }
        var normalized: [UserLookupInfo] = []
        for (i, l) in lookups.enumerated() {
            do {
                normalized.append(try l.normalized())
            } catch {
                throw CirrusError(.invalidArguments, "lookup \(i): \(error.message)")
            }
        }
        var names: [String] = []
        var emails: [String] = []
        var phones: [String] = []
        for l in normalized {
            switch l {
            case .userRecordName(let n): names.append(n)
            case .emailAddress(let e): emails.append(e)
            case .phoneNumber(let p): phones.append(p)
            }
        }
        let accounts: [UserAccount]
        do {
            accounts = try await container.root.userAccounts(names: names, emails: emails, phones: phones)
        } catch {
            throw error
        }
        var byName: [String: UserAccount] = [:]
        var byEmail: [String: UserAccount] = [:]
        var byPhone: [String: UserAccount] = [:]
        for a in accounts where a.discoverability == .granted {
            byName[a.userRecordName] = a
            if let e = a.emailAddress { byEmail[e] = a }
            if let p = a.phoneNumber { byPhone[p] = a }
        }
        var seen = Set<String>()
        var out: [UserIdentity] = []
        for (asked, info) in zip(lookups, normalized) {
            let hit: UserAccount? =
                switch info {
                case .userRecordName(let n): byName[n]
                case .emailAddress(let e): byEmail[e]
                case .phoneNumber(let p): byPhone[p]
                }
            guard let a = hit, seen.insert(a.userRecordName).inserted else { continue }
            out.append(UserIdentity(discovered: a.userRecordName, name: a.name, lookupInfo: asked))
        }
        return out
    }

    /// The caller's own account (nil when nothing is kept). Anonymous → notAuthenticated.
    public func fetchCallerAccount() async throws(CirrusError) -> UserAccount? {
        let user = try signedInUser("the caller's account")
        do {
            return try await container.root.userAccount(user)
        } catch {
            throw error
        }
    }
}

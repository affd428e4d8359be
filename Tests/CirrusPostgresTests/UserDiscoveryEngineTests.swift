// User identities on both engines through the async façade calls (Database+AsyncUsers.swift):
// account status, the caller's discoverability and account, discovery against a seeded model
// (only users who opted in are found, a user who did not is indistinguishable from an unknown
// address), the batch lookup's order and duplicates, the administrator's accounts, bad input
// refused without changing anything, and accounts shared by both environments and kept by a
// reset of development. The embedded engine answers from users.json, PostgreSQL from the
// container's `cirrus_users` table; the expectations come from the model, never from an engine.

import Cirrus
import CirrusPostgres
import CirrusTestSupport
import Foundation
import RecordModel
import Testing

@Suite struct UserDiscoveryEngineTests {
    @Test(arguments: Engine.available)
    func accountStatusAndTheCallersOwnAccount(_ engine: Engine) async throws {
        try await withFixture(engine) { (f: EngineFixture) async throws in
            let c = f.container
            #expect(await c.publicDatabase.fetchAccountStatus() == .noAccount)
            let alice = c.publicDatabase(as: .user("_alice"))
            #expect(await alice.fetchAccountStatus() == .available)
            #expect(await c.privateDatabase(for: "_alice").fetchAccountStatus() == .available)
            // Nothing kept yet: no account, never asked.
            #expect(try await alice.fetchCallerAccount() == nil)
            #expect(try await alice.fetchDiscoverabilityStatus() == .initialState)
            // Answering the request makes an account holding the answer.
            #expect(try await alice.setDiscoverability(granted: true) == .granted)
            #expect(try await alice.fetchDiscoverabilityStatus() == .granted)
            #expect(try await alice.fetchCallerAccount()?.discoverability == .granted)
            #expect(try await alice.setDiscoverability(granted: false) == .denied)
            #expect(try await alice.fetchDiscoverabilityStatus() == .denied)
            // Anonymous callers are refused, with nothing changed.
            #expect(await code { try await c.publicDatabase.fetchDiscoverabilityStatus() } == .notAuthenticated)
            #expect(await code { try await c.publicDatabase.setDiscoverability(granted: true) } == .notAuthenticated)
            #expect(await code { try await c.publicDatabase.fetchCallerAccount() } == .notAuthenticated)
            #expect(
                await code { try await c.publicDatabase.lookUpUserIdentities([.userRecordName("_alice")]) }
                    == .notAuthenticated)
        }
    }

    @Test(arguments: Engine.available)
    func discoveryAgainstAModel(_ engine: Engine) async throws {
        let seed = TestSeed.next()
        var rng = SeededRandom(seed: seed)
        try await withFixture(engine) { (f: EngineFixture) async throws in
            let c = f.container
            // 30 users: every third never asked, refused or granted; some without email or phone.
            var model: [String: UserAccount] = [:]
            for i in 0..<30 {
                let a = UserAccount(
                    userRecordName: "_u\(i)", emailAddress: i % 5 == 4 ? nil : "User\(i)@Example.com",
                    phoneNumber: i % 7 == 6 ? nil : "+33 6 00 00 \(String(format: "%02d", i)) 00",
                    name: UserNameComponents(givenName: "Given\(i)", familyName: i % 2 == 0 ? "Family\(i)" : nil),
                    discoverability: [DiscoverabilityStatus.initialState, .denied, .granted][i % 3])
                let kept = try await c.storeUserAccount(a)
                #expect(kept.emailAddress == a.emailAddress?.lowercased(), "seed \(seed)")
                model[a.userRecordName] = kept
            }
            #expect(try await c.fetchUserAccounts().map(\.userRecordName) == model.keys.sorted(), "seed \(seed)")
            let caller = c.publicDatabase(as: .user("_caller"))
            func expected(_ info: UserLookupInfo) -> String? {
                let hit: UserAccount? =
                    switch info {
                    case .userRecordName(let n): model[n]
                    case .emailAddress(let e): model.values.first { $0.emailAddress == e.lowercased() }
                    case .phoneNumber(let p):
                        model.values.first { $0.phoneNumber == p.filter { $0 == "+" || $0.isNumber } }
                    }
                return hit?.discoverability == .granted ? hit?.userRecordName : nil
            }
            for round in 0..<40 {
                let i = rng.below(34)  // 30…33: nobody
                let info: UserLookupInfo =
                    switch rng.below(3) {
                    case 0: .userRecordName("_u\(i)")
                    case 1: .emailAddress(rng.below(2) == 0 ? "user\(i)@example.com" : "USER\(i)@EXAMPLE.COM")
                    default: .phoneNumber("+33 (6) 00-00-\(String(format: "%02d", i))-00")
                    }
                let found = try await caller.lookUpUserIdentities([info])
                #expect(
                    found.map(\.userRecordName) == [expected(info)].compactMap { $0 },
                    "seed \(seed) round \(round) \(info)")
                if let u = found.first {
                    #expect(u.lookupInfo == info && u.name == model[u.userRecordName]?.name, "seed \(seed)")
                }
            }
            // A batch: in the lookups' order, each user once (with the first lookup that found them).
            let batch: [UserLookupInfo] = [
                .emailAddress("user2@example.com"), .userRecordName("_u0"), .userRecordName("_u2"),
                .phoneNumber("+33 6 00 00 05 00"), .userRecordName("_nobody"), .emailAddress("user8@example.com"),
            ]
            let found = try await caller.lookUpUserIdentities(batch)
            #expect(found.map(\.userRecordName) == ["_u2", "_u5", "_u8"], "seed \(seed)")
            #expect(found.map(\.lookupInfo) == [batch[0], batch[3], batch[5]])
        }
    }

    @Test(arguments: Engine.available)
    func badInputIsRefusedAndChangesNothing(_ engine: Engine) async throws {
        try await withFixture(engine) { (f: EngineFixture) async throws in
            let c = f.container
            _ = try await c.storeUserAccount(
                UserAccount(userRecordName: "_bob", emailAddress: "bob@example.com", discoverability: .granted))
            let caller = c.publicDatabase(as: .user("_caller"))
            // A malformed lookup fails the whole call, naming it.
            let e = await code {
                try await caller.lookUpUserIdentities([.userRecordName("_bob"), .emailAddress("not an address")])
            }
            #expect(e == .invalidArguments)
            let many = (0...UserAccount.maximumLookups).map { UserLookupInfo.userRecordName("_u\($0)") }
            #expect(await code { try await caller.lookUpUserIdentities(many) } == .limitExceeded)
            // An address another user has; a malformed one; an unknown user's discoverability.
            #expect(
                await code {
                    try await c.storeUserAccount(UserAccount(userRecordName: "_eve", emailAddress: "BOB@example.com"))
                } == .invalidArguments)
            #expect(
                await code { try await c.storeUserAccount(UserAccount(userRecordName: "_eve", phoneNumber: "call me")) }
                    == .invalidArguments)
            #expect(await code { try await c.changeDiscoverability(.granted, ofUser: "_nobody") } == .unknownItem)
            #expect(try await c.fetchUserAccounts().map(\.userRecordName) == ["_bob"])
            // The administrator hides a user: discovery no longer finds them.
            try await c.changeDiscoverability(.denied, ofUser: "_bob")
            #expect(try await caller.lookUpUserIdentities([.emailAddress("bob@example.com")]).isEmpty)
        }
    }

    @Test(arguments: Engine.available)
    func accountsAreTheContainersAndOutliveAResetOfDevelopment(_ engine: Engine) async throws {
        // Not withFixture: the test closes and resets the development container itself.
        let f = try await EngineFixture(engine)
        defer { if let d = f.directory { try? FileManager.default.removeItem(atPath: d) } }
        do {
            _ = try await f.container.storeUserAccount(
                UserAccount(userRecordName: "_carol", emailAddress: "carol@example.com", discoverability: .granted))
            let production: Container
            switch engine {
            case .embedded:
                production = try Container.open(at: try #require(f.directory), environment: .production)
            case .postgres:
                let pg = try #require(f.container.postgres)
                production = try await Container.open(
                    postgres: try #require(PG.url), containerID: pg.containerID, environment: .production)
            }
            let found = try await production.publicDatabase(as: .user("_dave")).lookUpUserIdentities([
                .emailAddress("carol@example.com")
            ])
            #expect(found.map(\.userRecordName) == ["_carol"])
            try production.close()
            // A reset of development keeps the container's identities.
            try f.container.close()
            let reopened: Container
            switch engine {
            case .embedded:
                let dir = try #require(f.directory)
                try Container.resetDevelopment(at: dir)
                reopened = try Container.open(at: dir)
            case .postgres:
                let id = try #require(f.container.postgres).containerID
                try await Container.resetDevelopment(postgres: try #require(PG.url), containerID: id)
                reopened = try await Container.open(postgres: try #require(PG.url), containerID: id)
            }
            #expect(try await reopened.fetchUserAccounts().map(\.userRecordName) == ["_carol"])
            try reopened.close()
        }
    }
}

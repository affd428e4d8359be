// Identity and discovery: account status; discoverability asked and answered; lookups by email,
// phone and record name against a model (only users who opted in are ever returned, and a user
// who did not is indistinguishable from an unknown address); the batch lookup; accounts shared by
// both environments and kept by a reset of development; bad input refused, changing nothing.

import CirrusTestSupport
import Foundation
import RecordLog
import RecordModel
import Testing

@testable import CirrusEmbedded
@testable import CirrusFacade

@Suite struct UserDiscoveryTests {
    @Test func accountStatusAsCirrusCanKnowIt() async throws {
        let env = TestEnv()
        let c = try env.open()
        #expect(c.publicDatabase.accountStatus() == .noAccount)
        #expect(c.publicDatabase(as: .user("_alice")).accountStatus() == .available)
        #expect(c.privateDatabase(for: "_alice").accountStatus() == .available)
        // A damaged users file: the status cannot be determined (and lookups fail loudly).
        try env.fs.writeAtomically("/c/users.json", Array("{not json".utf8))
        let fresh = try env.open(.production)
        #expect(fresh.publicDatabase(as: .user("_alice")).accountStatus() == .couldNotDetermine)
        #expect(
            await code { try fresh.publicDatabase(as: .user("_alice")).discoverUserIdentity(email: "a@b.co") }
                == .internalError)
        try fresh.close()
        try c.close()
        #expect(c.publicDatabase(as: .user("_alice")).accountStatus() == .temporarilyUnavailable)
    }

    @Test func discoveryAgainstAModel() async throws {
        let seed = TestSeed.next()
        var rng = SeededRandom(seed: seed)
        let c = try TestEnv().open()
        // 30 users: every third never asked, refused or granted; some without an email or phone.
        var model: [String: UserAccount] = [:]
        for i in 0..<30 {
            let status = [DiscoverabilityStatus.initialState, .denied, .granted][i % 3]
            let a = UserAccount(
                userRecordName: "_u\(i)", emailAddress: i % 5 == 4 ? nil : "User\(i)@Example.com",
                phoneNumber: i % 7 == 6 ? nil : "+33 6 00 00 \(String(format: "%02d", i)) 00",
                name: UserNameComponents(givenName: "Given\(i)", familyName: i % 2 == 0 ? "Family\(i)" : nil),
                discoverability: status)
            let kept = try c.saveUserAccount(a)
            #expect(kept.emailAddress == a.emailAddress?.lowercased(), "seed \(seed)")
            model[a.userRecordName] = kept
        }
        let caller = c.publicDatabase(as: .user("_caller"))
        func expected(_ info: UserLookupInfo) -> String? {
            let hit: UserAccount?
            switch info {
            case .userRecordName(let n): hit = model[n]
            case .emailAddress(let e): hit = model.values.first { $0.emailAddress == e.lowercased() }
            case .phoneNumber(let p):
                hit = model.values.first { $0.phoneNumber == p.filter { $0 == "+" || $0.isNumber } }
            }
            return hit?.discoverability == .granted ? hit?.userRecordName : nil
        }
        var lookups: [UserLookupInfo] = []
        for _ in 0..<300 {
            let i = Int(rng.next() % 40)  // 30...39: nobody
            let l: UserLookupInfo =
                switch rng.next() % 3 {
                case 0: .emailAddress(rng.next() % 2 == 0 ? "user\(i)@example.com" : "USER\(i)@EXAMPLE.COM")
                case 1: .phoneNumber("+33600 00-\(String(format: "%02d", i))-00")
                default: .userRecordName("_u\(i)")
                }
            lookups.append(l)
            // One at a time: found exactly when the model says so, with what they share.
            let one: UserIdentity? =
                switch l {
                case .emailAddress(let e): try caller.discoverUserIdentity(email: e)
                case .phoneNumber(let p): try caller.discoverUserIdentity(phoneNumber: p)
                case .userRecordName(let n): try caller.discoverUserIdentity(userRecordID: RecordID(recordName: n))
                }
            #expect(one?.userRecordName == expected(l), "seed \(seed): \(l)")
            if let one, let a = model[one.userRecordName] {
                #expect(one.name == a.name && one.lookupInfo == l, "seed \(seed)")
            }
        }
        // The batch: the found users in order, each once.
        var seen = Set<String>()
        let want = lookups.compactMap(expected).filter { seen.insert($0).inserted }
        #expect(try caller.discoverUserIdentities(lookups).map(\.userRecordName) == want, "seed \(seed)")
        // Privacy: a batch of users who did not opt in answers exactly as one of unknown addresses.
        let hidden = model.values.filter { $0.discoverability != .granted }.compactMap(\.emailAddress)
        #expect(!hidden.isEmpty)
        #expect(try caller.discoverUserIdentities(hidden.map { .emailAddress($0) }) == [])
        #expect(try caller.discoverUserIdentities(hidden.map { .emailAddress("nobody-" + $0) }) == [])
    }

    @Test func aUserAnswersTheRequestForDiscoverability() throws {
        let c = try TestEnv().open()
        try c.saveUserAccount(UserAccount(userRecordName: "_bob", emailAddress: "bob@example.com"))
        let bob = c.publicDatabase(as: .user("_bob"))
        let alice = c.publicDatabase(as: .user("_alice"))
        #expect(try bob.discoverabilityStatus() == .initialState)
        #expect(try alice.discoverUserIdentity(email: "bob@example.com") == nil)
        #expect(try bob.requestDiscoverability() == .granted)
        #expect(try alice.discoverUserIdentity(email: "Bob@Example.com")?.userRecordName == "_bob")
        #expect(try bob.requestDiscoverability(granted: false) == .denied)
        #expect(try alice.discoverUserIdentity(email: "bob@example.com") == nil)
        #expect(try bob.callerAccount()?.emailAddress == "bob@example.com")
        // A user nobody added can still answer; anonymous callers can do none of it.
        #expect(try alice.requestDiscoverability() == .granted)
        #expect(try bob.discoverUserIdentity(userRecordID: RecordID(recordName: "_alice"))?.userRecordName == "_alice")
        let anonymous = c.publicDatabase
        #expect(throws: CirrusError.self) { try anonymous.requestDiscoverability() }
        #expect(throws: CirrusError.self) { try anonymous.discoverUserIdentity(email: "bob@example.com") }
        #expect(throws: CirrusError.self) { try anonymous.discoverabilityStatus() }
    }

    @Test func accountsAreTheContainersSharedByEnvironmentsAndKeptByAReset() async throws {
        let env = TestEnv()
        do {
            let dev = try env.open()
            try dev.saveUserAccount(
                UserAccount(userRecordName: "_bob", phoneNumber: "(555) 010-9999", discoverability: .granted))
            try dev.close()
        }
        let prod = try env.open(.production)
        #expect(
            try prod.publicDatabase(as: .user("_a")).discoverUserIdentity(phoneNumber: "555.010.9999")?
                .userRecordName == "_bob")
        try prod.close()
        try Container.resetDevelopment(at: env.dir, options: env.options())
        let dev = try env.open()
        #expect(try dev.userAccounts().map(\.userRecordName) == ["_bob"])
        #expect(try dev.userAccounts()[0].phoneNumber == "5550109999")
    }

    @Test func badInputIsRefusedAndChangesNothing() throws {
        let env = TestEnv()
        let c = try env.open()
        try c.saveUserAccount(
            UserAccount(userRecordName: "_bob", emailAddress: "bob@example.com", discoverability: .granted))
        let file = env.fs.contents("/c/users.json")
        func refused(_ body: () throws(CirrusError) -> Void, _ code: CirrusError.Code, _ says: String) {
            do {
                try body()
                Issue.record("accepted: \(says)")
            } catch {
                #expect(error.code == code, "\(error)")
                #expect(error.message.contains(says), "\(error.message)")
            }
        }
        for bad in [
            "bob", "bob@", "@example.com", "bob@example", "a b@example.com", "bob@@example.com", "bob@exa_mple.com",
            "bob@-example.com", String(repeating: "x", count: 65) + "@example.com", "bøb@example.com",
        ] {
            refused(
                { () throws(CirrusError) in try c.saveUserAccount(UserAccount(userRecordName: "_x", emailAddress: bad))
                },
                .invalidArguments, "is not an email address")
        }
        for bad in ["12", "+1 (555) 0100-99999999999", "555-CALL-NOW", "1+555"] {
            refused(
                { () throws(CirrusError) in try c.saveUserAccount(UserAccount(userRecordName: "_x", phoneNumber: bad))
                },
                .invalidArguments, "is not a phone number")
        }
        refused(
            { () throws(CirrusError) in try c.saveUserAccount(UserAccount(userRecordName: "__defaultOwner__")) },
            .invalidArguments, "not a user record name")
        refused(
            { () throws(CirrusError) in
                try c.saveUserAccount(UserAccount(userRecordName: "_eve", emailAddress: "BOB@example.com"))
            }, .invalidArguments, "already _bob's")
        refused(
            { () throws(CirrusError) in try c.setDiscoverability(.granted, ofUser: "_nobody") }, .unknownItem, "_nobody"
        )
        let db = c.publicDatabase(as: .user("_alice"))
        refused(
            { () throws(CirrusError) in
                _ = try db.discoverUserIdentities([.emailAddress("bob@example.com"), .emailAddress("not-an-address")])
            }, .invalidArguments, "lookup 1: \"not-an-address\" is not an email address")
        refused(
            { () throws(CirrusError) in
                _ = try db.discoverUserIdentities(Array(repeating: .userRecordName("_bob"), count: 1_001))
            }, .limitExceeded, "1001 lookups")
        #expect(env.fs.contents("/c/users.json") == file)
        #expect(try db.discoverUserIdentities(Array(repeating: .userRecordName("_bob"), count: 1_000)).count == 1)
    }
}

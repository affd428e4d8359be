// Users over Web Services: who is calling, and discovery of other users.
//
//   users/caller          → {"userRecordName", "nameComponents"?, "lookupInfo"?}  (the caller's own)
//   users/discover        {"lookupInfos": [{"emailAddress"} | {"phoneNumber"} | {"userRecordName"}]}
//   users/lookup/email    {"users": [{"emailAddress": "…"}]}
//   users/lookup/id       {"users": [{"userRecordName": "…"}]}
//                         → {"users": [{"userRecordName", "nameComponents": {"givenName"?, "familyName"?},
//                                       "lookupInfo": {…as asked…}}]}
//
// Every lookup needs a signed-in caller (AUTHENTICATION_REQUIRED otherwise), answers only users
// who opted in to discovery — the others are absent, as unknown addresses are — and is
// rate-limited per caller (`ServerLimits.userLookupsPerMinute` lookups, counted per lookup, not
// per request, so that addresses cannot be harvested in bulk): a request that would exceed the
// caller's allowance is refused as a whole with THROTTLED (429) and costs nothing.

import Cirrus
import Foundation
import RecordModel

/// Per-caller allowances of user lookups: a token bucket per user that refills at `perMinute`
/// lookups a minute up to `perMinute`. Bounded: full buckets are forgotten when it holds more
/// than 10 000 callers.
final class LookupLimiter: @unchecked Sendable {
    let perMinute: Int
    private let lock = NSLock()
    // Guarded by lock: user → (tokens, when they were counted).
    private var buckets: [String: (tokens: Double, at: Date)] = [:]

    init(perMinute: Int) { self.perMinute = perMinute }

    /// Takes `count` lookups from `user`'s allowance at `now`, or returns the seconds to wait
    /// until that many are available (nothing is taken then).
    func take(_ count: Int, for user: String, at now: Date) -> Int? {
        lock.lock()
        defer { lock.unlock() }
        let rate = Double(perMinute) / 60
        let capacity = Double(perMinute)
        var b = buckets[user] ?? (capacity, now)
        let elapsed = max(0, now.timeIntervalSince(b.at))
        b.tokens = min(capacity, b.tokens + elapsed * rate)
        b.at = now
        guard Double(count) <= b.tokens else {
            buckets[user] = b
            guard Double(count) <= capacity, rate > 0 else { return Int.max }
            return Int(((Double(count) - b.tokens) / rate).rounded(.up))
        }
        b.tokens -= Double(count)
        buckets[user] = b
        if buckets.count > 10_000 {
            buckets = buckets.filter { $0.value.tokens + max(0, now.timeIntervalSince($0.value.at)) * rate < capacity }
        }
        return nil
    }
}

extension WebServicesAPI {
    /// `users/caller`: the signed-in caller, with what is kept about them (their own name and
    /// addresses, discoverable or not).
    func caller(db: Database) async throws(WebServicesError) -> JSONValue {
        guard let user = db.identity.userRecordName else {
            throw WebServicesError(.authenticationRequired, "no user is signed in: pass ckWebAuthToken")
        }
        var m: [(String, JSONValue)] = [("userRecordName", .string(user))]
        let account: UserAccount?
        // The async form: on PostgreSQL the identities are the server's (both engines answer it).
        do throws(CirrusError) { account = try await db.fetchCallerAccount() } catch { throw WebServicesError(error) }
        if let account {
            if let n = Self.nameJSON(account.name) { m.append(("nameComponents", n)) }
            var info: [(String, JSONValue)] = []
            if let e = account.emailAddress { info.append(("emailAddress", .string(e))) }
            if let p = account.phoneNumber { info.append(("phoneNumber", .string(p))) }
            if !info.isEmpty { m.append(("lookupInfo", .object(info))) }
        }
        return .object(m)
    }

    /// `users/discover`, `users/lookup/email`, `users/lookup/id`.
    func discoverUsers(
        _ operation: String, _ body: JSONBody, db: Database
    ) async throws(WebServicesError) -> JSONValue {
        guard let user = db.identity.userRecordName else {
            throw WebServicesError(
                .authenticationRequired, "discovering users needs a signed-in user: pass ckWebAuthToken")
        }
        var lookups: [UserLookupInfo] = []
        switch operation {
        case "users/discover":
            for item in try body["lookupInfos"].array(limit: limits.maximumOperations) {
                lookups.append(try Self.lookupInfo(item))
            }
        case "users/lookup/email":
            for item in try body["users"].array(limit: limits.maximumOperations) {
                lookups.append(.emailAddress(try item["emailAddress"].string()))
            }
        default:
            for item in try body["users"].array(limit: limits.maximumOperations) {
                lookups.append(.userRecordName(try item["userRecordName"].string()))
            }
        }
        // Check every lookup before spending the allowance: a malformed one costs nothing.
        for (i, l) in lookups.enumerated() {
            do throws(CirrusError) {
                _ = try l.normalized()
            } catch {
                let list = operation == "users/discover" ? "lookupInfos" : "users"
                throw WebServicesError(.badRequest, "\(list)[\(i)]: \(error.message)")
            }
        }
        if let wait = lookupLimiter.take(lookups.count, for: user, at: now()) {
            throw WebServicesError(
                .throttled,
                "\(user) looked up too many users: at most \(limits.userLookupsPerMinute) lookups a minute; "
                    + (wait == Int.max ? "a request may ask for at most that many" : "retry in \(wait) s"))
        }
        let found: [UserIdentity]
        do throws(CirrusError) { found = try await db.lookUpUserIdentities(lookups) } catch {
            throw WebServicesError(error)
        }
        return .object([("users", .array(found.map(Self.identityJSON)))])
    }

    /// One `lookupInfos` element: exactly one of emailAddress, phoneNumber, userRecordName.
    static func lookupInfo(_ item: BodyNode) throws(WebServicesError) -> UserLookupInfo {
        let present = ["emailAddress", "phoneNumber", "userRecordName"].filter { item[$0].isPresent }
        guard present.count == 1 else {
            throw item.fail("expected exactly one of emailAddress, phoneNumber, userRecordName")
        }
        switch present[0] {
        case "emailAddress": return .emailAddress(try item["emailAddress"].string())
        case "phoneNumber": return .phoneNumber(try item["phoneNumber"].string())
        default: return .userRecordName(try item["userRecordName"].string())
        }
    }

    static func identityJSON(_ u: UserIdentity) -> JSONValue {
        let info: (String, JSONValue) =
            switch u.lookupInfo {
            case .emailAddress(let e): ("emailAddress", .string(e))
            case .phoneNumber(let p): ("phoneNumber", .string(p))
            case .userRecordName(let n): ("userRecordName", .string(n))
            }
        return .object([
            ("userRecordName", .string(u.userRecordName)),
            ("nameComponents", nameJSON(u.name) ?? .object([])),
            ("lookupInfo", .object([info])),
        ])
    }

    static func nameJSON(_ n: UserNameComponents) -> JSONValue? {
        var m: [(String, JSONValue)] = []
        if let g = n.givenName { m.append(("givenName", .string(g))) }
        if let f = n.familyName { m.append(("familyName", .string(f))) }
        return m.isEmpty ? nil : .object(m)
    }
}

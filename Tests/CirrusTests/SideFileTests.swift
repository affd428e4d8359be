// The files kept beside the log — subscriptions.json and cursor-secrets.json — fail loudly: a
// write that fails undoes the request and throws; a subscriptions file that cannot be read fails
// the open with its path (`cirrus repair` salvages it); a damaged cursor-secrets file, which only
// signs cursors, is replaced with a warning naming it (the cursors issued so far fail as stale).
// Nothing is dropped or replaced in silence.

import CirrusTestSupport
import RecordLog
import RecordModel
import Testing

@testable import CirrusEmbedded
@testable import CirrusFacade

private let alice = "_alice"
private let subscriptionsFile = "/c/development/subscriptions.json"
private let secretsFile = "/c/development/cursor-secrets.json"

@Suite struct SideFileTests {
    private func subscription(_ id: String) -> Subscription {
        Subscription(id: id, recordType: "Note", predicate: "title == %@", arguments: ["a"], firesOn: [.creation])
    }

    /// A container with one Note (so the schema knows `title`) and one subscription "s".
    private func seeded() async throws -> TestEnv {
        let env = TestEnv()
        let c = try env.open()
        let db = c.privateDatabase(for: alice)
        try await db.save(rec("n", "Note", ["title": "a"]))
        _ = try await db.save(subscription("s"))
        try c.close()
        return env
    }

    private func openError(_ env: TestEnv) -> String? {
        do {
            let c = try env.open()
            try c.close()
            return nil
        } catch {
            return "\(error)"
        }
    }

    private func overwrite(_ env: TestEnv, _ path: String, _ text: String) throws {
        try env.fs.writeAtomically(path, Array(text.utf8))
    }

    @Test func aCorruptSubscriptionsFileFailsTheOpenNamingIt() async throws {
        let env = try await seeded()
        try overwrite(env, subscriptionsFile, "[{\"owner\": ")
        let message = try #require(openError(env))
        #expect(message.contains(subscriptionsFile))
        #expect(message.contains("unreadable"))
        // Deleting the file is the documented way out: every subscription is dropped.
        try env.fs.remove(subscriptionsFile)
        let c = try env.open()
        #expect(try await c.privateDatabase(for: alice).allSubscriptions().isEmpty)
        try c.close()
    }

    @Test func anArgumentThatDoesNotDecodeFailsTheOpenInsteadOfShiftingTheOthers() async throws {
        let env = try await seeded()
        let text = String(decoding: try env.fs.read(subscriptionsFile), as: UTF8.self)
        #expect(text.contains("\"STRING\""))
        try overwrite(env, subscriptionsFile, text.replacingOccurrences(of: "\"STRING\"", with: "\"NO_SUCH_TYPE\""))
        let message = try #require(openError(env))
        #expect(message.contains(subscriptionsFile))
        #expect(message.contains("subscription \"s\": argument 0"))
    }

    @Test func aSubscriptionWhosePredicateNoLongerChecksFailsTheOpen() async throws {
        let env = try await seeded()
        let text = String(decoding: try env.fs.read(subscriptionsFile), as: UTF8.self)
        try overwrite(env, subscriptionsFile, text.replacingOccurrences(of: "title == %@", with: "title ==="))
        let message = try #require(openError(env))
        #expect(message.contains("subscription \"s\" no longer checks"))
    }

    @Test func aFailedSubscriptionWriteIsUndoneAndThrown() async throws {
        let env = try await seeded()
        let c = try env.open()
        let db = c.privateDatabase(for: alice)
        env.fs.setFailSyncs(true)
        let saveError = await caught { try await db.save(subscription("t")) }
        let deleteError = await caught { try await db.deleteSubscription(withID: "s") }
        env.fs.setFailSyncs(false)
        #expect(saveError?.message.contains(subscriptionsFile) == true)
        #expect(deleteError?.message.contains(subscriptionsFile) == true)
        #expect(try await db.allSubscriptions().map(\.id) == ["s"])  // neither change happened
        try c.close()
        #expect(try await env.open().privateDatabase(for: alice).allSubscriptions().map(\.id) == ["s"])
    }

    /// Cursor secrets only sign cursors: a damaged file costs the cursors issued so far (they
    /// fail as stale), never the open. A read-only open warns and leaves the file; a writable one
    /// warns, keeps the file under damaged/ and writes new secrets with the next commit.
    @Test func aCorruptCursorSecretsFileIsReplacedWithAWarningNamingIt() async throws {
        let env = try await seeded()
        let c0 = try env.open()
        let db0 = c0.privateDatabase(for: alice)
        try await db0.save(rec("n2", "Note", ["title": "c"]))
        let (_, cursor) = try await db0.records(
            matching: RecordQuery(recordType: "Note", predicate: "TRUEPREDICATE"), resultsLimit: 1)
        let token = db0.token(for: try #require(cursor))
        try c0.close()
        try overwrite(env, secretsFile, "{\"_alice\": \"not bytes\"}")

        let ro = try Container.open(at: env.dir, options: env.options(readOnly: true))
        #expect(ro.openReport.warnings.contains { $0.path == secretsFile && $0.consequence.contains("stale") })
        #expect(String(decoding: env.fs.contents(secretsFile) ?? [], as: UTF8.self).contains("not bytes"))

        var reseeded = env  // the same files; new secrets from another seed (the test's generator repeats)
        reseeded.seed = 2
        let c = try reseeded.open()
        #expect(c.openReport.warnings.contains { $0.path == secretsFile && $0.consequence.contains("damaged/") })
        let db = c.privateDatabase(for: alice)
        #expect(await code { try db.cursor(fromToken: token) } != nil)
        try await db.save(rec("m", "Note", ["title": "b"]))
        let kept = try env.fs.list("/c/development/damaged")
        #expect(kept.count == 1)
        #expect(env.fs.exists("/c/development/damaged/\(kept[0])/cursor-secrets.json"))
        let secret = db.cursorSecret
        try c.close()
        let again = try reseeded.open()
        #expect(again.openReport.isClean)
        #expect(again.privateDatabase(for: alice).cursorSecret == secret)
    }

    @Test func aFailedSecretWriteFailsTheFirstCommitOfADatabase() async throws {
        let env = TestEnv()
        let c = try env.open()
        let db = c.privateDatabase(for: alice)
        env.fs.setFailSyncs(true)
        let error = await caught { try await db.save(rec("n", "Note", ["title": "a"])) }
        env.fs.setFailSyncs(false)
        #expect(error?.message.contains(secretsFile) == true)
        #expect(await code { try await db.record(for: rid("n")) } == .unknownItem)
        // The next commit writes the secret and the record; cursors signed now check after reopening.
        try await db.save(rec("n", "Note", ["title": "a"]))
        let secret = db.cursorSecret
        try c.close()
        #expect(try env.open().privateDatabase(for: alice).cursorSecret == secret)
    }
}

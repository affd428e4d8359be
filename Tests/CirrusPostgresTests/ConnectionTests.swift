// Sessions PostgreSQL ends: the call that was running fails as a lost connection, with the
// server's address and what was being done; reads after that run on new sessions; writes either
// succeed or fail with that same clear error, never anything else.

import CirrusFacade
import PostgresNIO
import RecordModel
import Testing

@testable import CirrusPostgres

@Suite(.enabled(if: PG.available, PG.disabledReason))
struct PostgresConnectionTests {
    func pinStore(_ name: String) async throws -> PostgresStore {
        let store = try await PG.store(PG.freshContainer(name))
        try await store.apply(
            schema: Schema(
                environment: .development,
                recordTypes: [RecordTypeSchema(name: "Pin", fields: [FieldSchema(name: "a", type: .int64)])]))
        _ = try await store.save(Record(recordType: "Pin", recordID: RecordID(recordName: "p"), fields: ["a": 1]))
        return store
    }

    @Test func sessionEndedDuringACallIsAClearError() async throws {
        let store = try await pinStore("lost")
        await #expect {
            try await store.run("terminating the session") { client in
                for try await _ in try await client.query("SELECT pg_terminate_backend(pg_backend_pid())") {}
            }
        } throws: { e in
            let e = e as! CirrusError
            return e.code == .networkFailure && e.location == store.address
                && e.message.contains("terminating the session")
        }
        try await Task.sleep(for: .milliseconds(200))
        #expect(try await store.record(for: RecordID(recordName: "p"))["a"] == 1)
        await store.close()
        // A closed store fails clearly too.
        await #expect { try await store.record(for: RecordID(recordName: "p")) } throws: { e in
            let code = (e as! CirrusError).code
            return code == .networkFailure || code == .networkUnavailable
        }
    }

    @Test func sessionsEndedByAnAdministratorAreReplaced() async throws {
        let store = try await PG.store(PG.freshContainer("terminated"), timeout: .seconds(3))
        try await store.apply(
            schema: Schema(
                environment: .development,
                recordTypes: [RecordTypeSchema(name: "Pin", fields: [FieldSchema(name: "a", type: .int64)])]))
        _ = try await store.save(Record(recordType: "Pin", recordID: RecordID(recordName: "p"), fields: ["a": 1]))
        let admin = try await PG.store(PG.freshContainer("admin"))
        var succeeded = 0
        for round in 0..<3 {
            // Every session of the store, ended from another session (pg_terminate_backend).
            let name = "cirrus " + store.tenant.key
            try await admin.run("terminating the store's sessions") { client in
                for try await _ in try await client.query(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = left(\(name), 63)")
                {}
            }
            // Each call succeeds (reads are retried on a new session) or fails as a lost
            // connection naming the server — never another error, never a hang past the deadline.
            func check(_ what: String, _ call: () async throws(CirrusError) -> Void) async {
                do {
                    try await call()
                    succeeded += 1
                } catch {
                    #expect(
                        error.code == .networkFailure && error.location == store.address,
                        "round \(round), \(what): \(error)")
                }
            }
            await check("fetch") { () throws(CirrusError) in
                #expect(try await store.record(for: RecordID(recordName: "p")).recordType == "Pin")
            }
            await check("query") { () throws(CirrusError) in
                let q = try await store.query("Pin", "a == 1")
                #expect(try await store.records(matching: q).records.map(\.recordID.recordName) == ["p"])
            }
            await check("save") { () throws(CirrusError) in
                _ = try await store.save(
                    Record(recordType: "Pin", recordID: RecordID(recordName: "w\(round)")), policy: .allKeys)
            }
        }
        #expect(succeeded >= 6, "only \(succeeded) of 9 calls succeeded after their sessions were ended")
        await admin.close()
        await store.close()
    }
}

@Suite(.enabled(if: PG.available, PG.disabledReason))
struct PostgresLoginTests {
    @Test func refusedLoginAndMissingDatabaseAreClearErrors() async throws {
        let tenant = PostgresTenant(containerID: "c", environment: .development, database: .public)
        let url = PG.url!
        let host = url.split(separator: "@").last.map(String.init) ?? ""
        for (bad, words) in [
            ("postgres://nobody@" + host, "nobody"),
            (String(url[..<(url.lastIndex(of: "/") ?? url.endIndex)]) + "/no_such_database", "no_such_database"),
        ] {
            await #expect {
                try await PostgresStore.connect(url: bad, tenant: tenant, timeout: .seconds(5))
            } throws: { e in
                let e = e as! CirrusError
                return e.code == .internalError && e.message.contains(words) && e.message.contains("SQLSTATE")
                    && e.location != nil
            }
        }
    }
}

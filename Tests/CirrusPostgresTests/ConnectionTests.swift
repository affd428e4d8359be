// A session PostgreSQL terminates is reported as a lost connection, with the server's address,
// and the store's next call runs on a new session.

import PostgresNIO
import RecordModel
import Testing

@testable import CirrusPostgres

@Suite(.enabled(if: PG.available, PG.disabledReason))
struct PostgresConnectionTests {
    @Test func lostSessionIsAClearErrorAndTheNextCallReconnects() async throws {
        let store = try await PG.store(PG.freshContainer("lost"))
        try await store.apply(
            schema: Schema(
                environment: .development,
                recordTypes: [RecordTypeSchema(name: "Pin", fields: [FieldSchema(name: "a", type: .int64)])]))
        _ = try await store.save(Record(recordType: "Pin", recordID: RecordID(recordName: "p"), fields: ["a": 1]))
        // The session ends itself, as an administrator's pg_terminate_backend or a restart would.
        await #expect {
            try await store.run("terminating the session") { client in
                for try await _ in try await client.query("SELECT pg_terminate_backend(pg_backend_pid())") {}
            }
        } throws: { e in
            let e = e as! PostgresStoreError
            return e.code == .networkFailure && e.location == store.address
                && e.message.contains("terminating the session")
        }
        #expect(try await store.record(for: RecordID(recordName: "p"))["a"] == 1)
        await store.close()
        // A closed store fails clearly too.
        await #expect { try await store.record(for: RecordID(recordName: "p")) } throws: { e in
            let code = (e as! PostgresStoreError).code
            return code == .networkFailure || code == .networkUnavailable
        }
    }
}

// The Users type on both engines: every container has it (its schema exports it), it cannot be
// queried, and a user saves their own Users record in the public database only — with fields
// of their choosing in development — never another user's.

import Cirrus
import CirrusPostgres
import CirrusTestSupport
import RecordModel
import Testing

@Suite(.serialized) struct UsersRecordEngineTests {
    @Test(arguments: Engine.available)
    func aUserSavesOnlyTheirOwnUsersRecord(_ engine: Engine) async throws {
        try await withFixture(engine) { f in
            let c = f.container
            #expect(c.exportSchema().contains("RECORD TYPE Users"))
            #expect(await code { try c.publicDatabase.checkCanRead(recordType: "Users") } == .invalidArguments)
            let pub = c.publicDatabase(as: .user("_alice"))
            let saved = try await pub.save(rec("_alice", "Users", ["nickname": "al"]))
            #expect(saved.recordChangeTag != nil)
            #expect(try await pub.record(for: rid("_alice"))["nickname"] == "al")
            #expect(c.schema.recordTypes["Users"]?.fields["nickname"] != nil)
            #expect(await code { try await pub.save(rec("_bob", "Users")) } == .permissionFailure)
            #expect(
                await code { try await c.privateDatabase(for: "_alice").save(rec("_alice", "Users")) }
                    == .permissionFailure)
        }
    }
}

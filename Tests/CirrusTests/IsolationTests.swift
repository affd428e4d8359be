// Isolation on the embedded engine only: what needs a container directory.
//
// Every other isolation test (each call on another user's private database, ids naming another
// owner's zones, notifications, invalid owners, public records written only by their creator)
// describes façade behaviour and runs on both engines with the same assertions:
// Tests/CirrusPostgresTests/EngineIsolationTests.swift. This one stays here because it reopens
// the directory read-only, an option PostgreSQL containers do not have; there the secret is kept
// in the server from the container's first open (EngineTests' twoProcessesServeOneContainer
// checks that two opens sign and accept the same cursors).

import CirrusTestSupport
import RecordLog
import RecordModel
import Testing

@testable import CirrusEmbedded
@testable import CirrusFacade

private let alice = "_alice"

@Suite struct IsolationTests {
    @Test func cursorSecretsArePersistedWithTheFirstCommit() async throws {
        let env = TestEnv()
        let c = try env.open()
        try await c.privateDatabase(for: alice).save(rec("a"))
        try c.close()
        let ro1 = try Container.open(at: env.dir, options: env.options(readOnly: true))
        let s1 = ro1.privateDatabase(for: alice).cursorSecret
        let ro2 = try Container.open(at: env.dir, options: env.options(readOnly: true))
        #expect(ro2.privateDatabase(for: alice).cursorSecret == s1)
        #expect(s1.count == 32)
        let rw = try env.open()
        #expect(rw.privateDatabase(for: alice).cursorSecret == s1)
    }
}

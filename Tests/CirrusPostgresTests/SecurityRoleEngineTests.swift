// Security roles on both engines through `Container.changeSecurityRoles`: a custom role granted
// WRITE on a type lets its members change other creators' records in the public database, and
// stops doing so when the user is unassigned; roles and grants change in development only (and
// reach production by promotion), assignments in either environment; refused changes name what
// is wrong and change nothing.

import Cirrus
import CirrusPostgres
import CirrusTestSupport
import Foundation
import RecordModel
import Testing

private let postSchema = """
    DEFINE SCHEMA
        RECORD TYPE Post (
            "___recordID" REFERENCE QUERYABLE,
            body STRING QUERYABLE,
            GRANT WRITE TO "_creator",
            GRANT CREATE TO "_icloud",
            GRANT READ TO "_world"
        );
    """

@Suite(.serialized) struct SecurityRoleEngineTests {
    @Test(arguments: Engine.available)
    func aRolesMembersMayWriteWhatItGrants(_ engine: Engine) async throws {
        let f = try await EngineFixture(engine)
        let c = f.container
        _ = try await c.applySchema(postSchema)
        let id = RecordID(recordName: "post1")
        _ = try await c.publicDatabase(as: .user("_alice")).save(
            Record(recordType: "Post", recordID: id, fields: ["body": "hello"]))
        func edit(as user: String, _ text: String) async -> CirrusError.Code? {
            await code {
                let db = c.publicDatabase(as: .user(user))
                var r = try await db.record(for: id)
                r["body"] = .string(text)
                return try await db.save(r)
            }
        }
        #expect(await edit(as: "_mod", "by mod") == .permissionFailure)
        try await c.changeSecurityRoles(.createRole("Moderator"))
        try await c.changeSecurityRoles(.grant([.write], on: "Post", to: "Moderator"))
        try await c.changeSecurityRoles(.assign(user: "_mod", to: "Moderator"))
        #expect(c.securityRoles().map(\.name) == ["Moderator"])
        #expect(c.securityRoles().first?.members == ["_mod"])
        #expect(c.securityRoles().first?.grants["Post"] == [.write])
        #expect(await edit(as: "_mod", "by mod") == nil)
        #expect(await edit(as: "_bob", "by bob") == .permissionFailure)
        try await c.changeSecurityRoles(.unassign(user: "_mod", from: "Moderator"))
        #expect(await edit(as: "_mod", "again") == .permissionFailure)
        #expect(try await c.publicDatabase.record(for: id)["body"] == "by mod")
        // Refused changes: nothing changes.
        let before = c.schema
        #expect(await code { try await c.changeSecurityRoles(.createRole("Moderator")) } == .invalidArguments)
        #expect(await code { try await c.changeSecurityRoles(.createRole("_sneaky")) } == .invalidArguments)
        #expect(
            await code { try await c.changeSecurityRoles(.grant([.read], on: "Nope", to: "Moderator")) }
                == .invalidArguments)
        #expect(await code { try await c.changeSecurityRoles(.assign(user: "_x", to: "Ghost")) } == .invalidArguments)
        #expect(
            await code { try await c.changeSecurityRoles(.unassign(user: "_mod", from: "Moderator")) }
                == .invalidArguments)
        #expect(c.schema == before)
        // Production: roles arrive by promotion; assignments are production's own.
        _ = try await c.promoteSchemaToProduction()
        let prod: Container
        if let directory = f.directory {
            prod = try Container.open(at: directory, environment: .production)
        } else {
            let containerID = try #require(c.postgres?.containerID)
            prod = try await Container.open(postgres: PG.url!, containerID: containerID, environment: .production)
        }
        #expect(prod.securityRoles().map(\.name) == ["Moderator"])
        #expect(prod.securityRoles().first?.members == [])
        #expect(await code { try await prod.changeSecurityRoles(.createRole("Other")) } == .invalidArguments)
        try await prod.changeSecurityRoles(.assign(user: "_mod", to: "Moderator"))
        #expect(prod.securityRoles().first?.members == ["_mod"])
        #expect(c.securityRoles().first?.members == [], "development keeps its own assignments")
        try prod.close()
        try await f.close()
    }
}

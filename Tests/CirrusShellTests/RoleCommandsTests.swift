// `cirrus role`: each subcommand against a container, the listing it leaves (text and JSON), an
// environment's own assignments, and refusals that change nothing.

import Cirrus
import CirrusIO
import CirrusShell
import RecordLog
import RecordModel
import Testing

@Suite struct RoleCommandsTests {
    private func container() async throws -> InMemoryFileSystem {
        let fs = InMemoryFileSystem()
        let c = try Container.open(at: "/c", options: ContainerOptions(fileSystem: fs, durability: .none))
        try await c.publicDatabase(as: .user("_alice")).save(
            Record(recordType: "Post", recordID: RecordID(recordName: "p"), fields: ["n": 1]))
        try c.close()
        return fs
    }

    @Test func createGrantAssignListRevokeUnassignDelete() async throws {
        let fs = try await container()
        func run(_ a: RoleCommands.Action, _ env: Environment = .development, json: Bool = false) -> CommandOutput {
            RoleCommands.run(db: "/c", action: a, environment: env, json: json, fileSystem: fs)
        }
        #expect(run(.list).stdout == "no custom roles\n")
        #expect(run(.create(role: "Moderator")).stdout == "created role Moderator (development)\n")
        #expect(
            run(.grant(role: "Moderator", permissions: "Read, write", recordType: "Post")).stdout
                == "granted READ, WRITE on Post to Moderator (development)\n")
        #expect(run(.assign(role: "Moderator", user: "_bob")).exitCode == 0)
        #expect(run(.assign(role: "Moderator", user: "_alice")).exitCode == 0)
        let text = run(.list).stdout
        #expect(text.contains("Moderator"), "\(text)")
        #expect(text.contains("READ, WRITE") && text.contains("_alice, _bob"), "\(text)")
        #expect(
            run(.list, json: true).stdout
                == #"[{"name":"Moderator","grants":{"Post":["READ","WRITE"]},"members":["_alice","_bob"]}]"# + "\n")
        // The container applies what the commands did.
        let c = try Container.open(
            at: "/c", options: ContainerOptions(fileSystem: fs, durability: .none, readOnly: true))
        #expect(c.schema.recordTypes["Post"]?.grants.contains(Grant([.read, .write], to: "Moderator")) == true)
        #expect(c.schema.roles(of: "_bob") == ["Moderator"])
        #expect(run(.revoke(role: "Moderator", permissions: "write", recordType: "Post")).exitCode == 0)
        #expect(run(.unassign(role: "Moderator", user: "_bob")).stdout == "removed _bob from Moderator (development)\n")
        #expect(run(.list, json: true).stdout.contains(#""grants":{"Post":["READ"]},"members":["_alice"]"#))
        #expect(run(.delete(role: "Moderator")).exitCode == 0)
        #expect(run(.list).stdout == "no custom roles\n")
    }

    @Test func productionAssignsItsOwnUsersAfterPromotion() async throws {
        let fs = try await container()
        func run(_ a: RoleCommands.Action, _ env: Environment = .development) -> CommandOutput {
            RoleCommands.run(db: "/c", action: a, environment: env, fileSystem: fs)
        }
        #expect(run(.list, .production).exitCode == 1)  // no production store yet
        _ = run(.create(role: "Editor"))
        _ = run(.grant(role: "Editor", permissions: "create", recordType: "Post"))
        _ = run(.assign(role: "Editor", user: "_dev"))
        #expect(SchemaCommands.run(db: "/c", action: .promote, fileSystem: fs).exitCode == 0)
        #expect(run(.assign(role: "Editor", user: "_prod"), .production).exitCode == 0)
        let refused = run(.create(role: "Other"), .production)
        #expect(refused.exitCode == 1 && refused.stderr.contains("change them in development and promote"))
        let prod = RoleCommands.run(db: "/c", action: .list, environment: .production, json: true, fileSystem: fs)
        #expect(prod.stdout == #"[{"name":"Editor","grants":{"Post":["CREATE"]},"members":["_prod"]}]"# + "\n")
        #expect(run(.list).stdout.contains("_dev") && !run(.list).stdout.contains("_prod"))
    }

    @Test func refusalsNameWhatIsWrongAndChangeNothing() async throws {
        let fs = try await container()
        func run(_ a: RoleCommands.Action) -> CommandOutput { RoleCommands.run(db: "/c", action: a, fileSystem: fs) }
        _ = run(.create(role: "R"))
        let before = run(.list).stdout
        let cases: [(RoleCommands.Action, Int32, String)] = [
            (.grant(role: "R", permissions: "read,delete", recordType: "Post"), 2, "permission \"delete\""),
            (.grant(role: "R", permissions: "", recordType: "Post"), 2, "expected create, read or write"),
            (.grant(role: "Ghost", permissions: "read", recordType: "Post"), 1, "role \"Ghost\" does not exist"),
            (.grant(role: "R", permissions: "read", recordType: "Nope"), 1, "record type Nope does not exist"),
            (.assign(role: "Ghost", user: "_bob"), 1, "role \"Ghost\" does not exist"),
            (.assign(role: "R", user: "not a name"), 1, "not a user record name"),
            (.unassign(role: "R", user: "_bob"), 1, "does not hold role"),
            (.create(role: "9lives"), 1, "role name \"9lives\""),
            (.create(role: "R"), 1, "already exists"),
            (.delete(role: "Ghost"), 1, "role \"Ghost\" does not exist"),
        ]
        for (action, exit, says) in cases {
            let out = run(action)
            #expect(out.exitCode == exit, "\(action): \(out)")
            #expect(out.stderr.hasPrefix("cirrus role: ") && out.stderr.contains(says), "\(action): \(out.stderr)")
        }
        #expect(run(.list).stdout == before)
    }
}

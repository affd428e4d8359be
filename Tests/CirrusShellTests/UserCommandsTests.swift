// `cirrus users`: add, list (text and JSON), set-discoverable, lookup with the discovery rule
// (only users who opted in; "not found" otherwise, as for an unknown address), refusals that
// change nothing, and a container held open (as by `cirrus serve`) that does not stop them.

import Cirrus
import CirrusIO
import CirrusShell
import RecordLog
import RecordModel
import Testing

@Suite struct UserCommandsTests {
    @Test func addListSetDiscoverableLookup() throws {
        let fs = InMemoryFileSystem()
        // A development container open the whole time, as a running server holds it.
        let serving = try Container.open(at: "/c", options: ContainerOptions(fileSystem: fs, durability: .none))
        defer { try? serving.close() }
        func run(_ a: UserCommands.Action, json: Bool = false) -> CommandOutput {
            UserCommands.run(db: "/c", action: a, json: json, fileSystem: fs)
        }
        #expect(run(.list).stdout == "no users\n")
        let added = run(
            .add(
                UserAccount(
                    userRecordName: "_alice", emailAddress: "Alice@Example.com", phoneNumber: "+33 6 12 34 56 78",
                    name: UserNameComponents(givenName: "Alice", familyName: "Martin"))))
        #expect(added.stdout == "saved user _alice (initialState)\n", "\(added)")
        #expect(run(.add(UserAccount(userRecordName: "_bob", emailAddress: "bob@example.com"))).exitCode == 0)
        #expect(
            run(.list, json: true).stdout
                == #"[{"userRecordName":"_alice","emailAddress":"alice@example.com","phoneNumber":"+33612345678","#
                + #""givenName":"Alice","familyName":"Martin","discoverability":"initialState"},"#
                + #"{"userRecordName":"_bob","emailAddress":"bob@example.com","discoverability":"initialState"}]"#
                + "\n")
        #expect(run(.list).stdout.contains("Alice Martin"))
        // Not discoverable yet: found by nobody, as an unknown address.
        let hidden = run(.lookup([.emailAddress("alice@example.com"), .emailAddress("zed@example.com")]))
        #expect(hidden.exitCode == 1)
        #expect(hidden.stdout == "email alice@example.com: not found\nemail zed@example.com: not found\n")
        #expect(run(.setDiscoverable(user: "_alice", "yes")).stdout == "_alice is discoverable (granted)\n")
        let found = run(.lookup([.phoneNumber("+33612345678"), .emailAddress("bob@example.com")]))
        #expect(found.exitCode == 0)
        #expect(found.stdout == "phone +33612345678: _alice (Alice Martin)\nemail bob@example.com: not found\n")
        #expect(
            run(.lookup([.userRecordName("_alice")]), json: true).stdout
                == #"[{"userRecordName":"_alice","givenName":"Alice","familyName":"Martin"}]"# + "\n")
        // The open container reads the same file.
        #expect(try serving.userAccounts().count == 2)
        #expect(run(.setDiscoverable(user: "_alice", "no")).stdout == "_alice is not discoverable (denied)\n")
    }

    @Test func refusalsChangeNothing() throws {
        let fs = InMemoryFileSystem()
        func run(_ a: UserCommands.Action) -> CommandOutput { UserCommands.run(db: "/c", action: a, fileSystem: fs) }
        #expect(run(.list).exitCode == 1)  // no container directory yet
        _ = run(.add(UserAccount(userRecordName: "_bob", emailAddress: "bob@example.com")))
        let before = fs.contents("/c/users.json")
        let cases: [(UserCommands.Action, Int32, String)] = [
            (.add(UserAccount(userRecordName: "_x", emailAddress: "x@localhost")), 1, "is not an email address"),
            (.add(UserAccount(userRecordName: "_x", phoneNumber: "12")), 1, "is not a phone number"),
            (.add(UserAccount(userRecordName: "_x", emailAddress: "BOB@example.com")), 1, "already _bob's"),
            (.add(UserAccount(userRecordName: "has space")), 1, "not a user record name"),
            (.setDiscoverable(user: "_bob", "maybe"), 2, "expected granted, denied or initialState"),
            (.setDiscoverable(user: "_nobody", "yes"), 1, "no user account _nobody"),
            (.lookup([.emailAddress("bob")]), 1, "lookup 0: \"bob\" is not an email address"),
        ]
        for (action, exit, says) in cases {
            let out = run(action)
            #expect(out.exitCode == exit, "\(action): \(out)")
            #expect(out.stderr.hasPrefix("cirrus users: ") && out.stderr.contains(says), "\(out.stderr)")
        }
        #expect(fs.contents("/c/users.json") == before)
    }
}

// `cirrus users`: the container's user identities — add, list, set-discoverable, lookup.

import ArgumentParser
import Cirrus
import CirrusShell
import Foundation

struct UsersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users",
        abstract: "User identities: email, phone, name and whether others may discover them.",
        discussion: """
            Identities belong to the container (DIR/users.json), shared by both environments and kept \
            by a reset of development; these commands work beside a running `cirrus serve`, which \
            sees changes within a second. Discovery (lookup, and the Web Services users/discover, \
            users/lookup/email, users/lookup/id) finds only users who opted in. Exit status: 0 ok, \
            1 refused or not found, 2 usage.

            Examples:
              cirrus users add --db DIR _alice --email alice@example.com --given-name Alice --discoverable
              cirrus users set-discoverable --db DIR _alice no
              cirrus users lookup --db DIR --email alice@example.com --phone "+33 6 12 34 56 78"
              cirrus users list --db DIR --json
              cirrus users add --db DIR --postgres postgres://cirrus@127.0.0.1:5432/cirrus _alice --email alice@example.com

            With --postgres URL (--container ID) the identities are the PostgreSQL container's \
            (one table shared by both environments, kept by a reset of development).
            """,
        subcommands: [UsersAdd.self, UsersList.self, UsersSetDiscoverable.self, UsersLookup.self])
}

/// Runs a users action (on the PostgreSQL container with `--postgres`) and maps exit 2 to a
/// usage error.
private func runUsers(
    _ store: StoreOptions, _ action: UserCommands.Action, json: Bool = false
) async throws {
    let out =
        store.postgres != nil
        ? await store.withContainer(.development, command: "users") { c in
            await ContainerCommands.users(c, action: action, json: json)
        }
        : UserCommands.run(db: store.db, action: action, json: json)
    if out.exitCode == 2 {
        throw ValidationError(
            out.stderr.trimmingCharacters(in: .newlines).replacingOccurrences(of: "cirrus users: ", with: ""))
    }
    try finish(out)
}

struct UsersAdd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "add", abstract: "Add or replace a user.")
    @OptionGroup var store: StoreOptions
    @Argument(help: "The user record name.") var user: String
    @Option(help: "The email address.") var email: String?
    @Option(help: "The phone number (digits, an optional leading +).") var phone: String?
    @Option(help: "The given (first) name.") var givenName: String?
    @Option(help: "The family (last) name.") var familyName: String?
    @Flag(help: "The user has agreed to be discoverable.") var discoverable = false

    func run() async throws {
        let account = UserAccount(
            userRecordName: user, emailAddress: email, phoneNumber: phone,
            name: UserNameComponents(givenName: givenName, familyName: familyName),
            discoverability: discoverable ? .granted : .initialState)
        try await runUsers(store, .add(account))
    }
}

struct UsersList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List every user, discoverable or not.")
    @OptionGroup var store: StoreOptions
    @Flag(help: "Print JSON.") var json = false
    func run() async throws { try await runUsers(store, .list, json: json) }
}

struct UsersSetDiscoverable: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set-discoverable", abstract: "Record a user's answer: discoverable or not.")
    @OptionGroup var store: StoreOptions
    @Argument(help: "The user record name.") var user: String
    @Argument(help: "yes (granted), no (denied) or initialState.") var answer: String
    func run() async throws { try await runUsers(store, .setDiscoverable(user: user, answer)) }
}

struct UsersLookup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lookup", abstract: "Find users as discovery does (only those who opted in).")
    @OptionGroup var store: StoreOptions
    @Option(help: "An email address (repeatable).") var email: [String] = []
    @Option(help: "A phone number (repeatable).") var phone: [String] = []
    @Option(help: "A user record name (repeatable).") var user: [String] = []
    @Flag(help: "Print JSON.") var json = false

    func validate() throws {
        if email.isEmpty && phone.isEmpty && user.isEmpty {
            throw ValidationError("give at least one --email, --phone or --user")
        }
    }

    func run() async throws {
        let lookups =
            email.map(UserLookupInfo.emailAddress) + phone.map(UserLookupInfo.phoneNumber)
            + user.map(UserLookupInfo.userRecordName)
        try await runUsers(store, .lookup(lookups), json: json)
    }
}

// `cirrus role`: custom security roles — create, delete, grant, revoke, assign, unassign, list.

import ArgumentParser
import CirrusShell
import Foundation
import RecordModel

struct RoleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "role",
        abstract: "Custom security roles: their grants on record types and the users who hold them.",
        discussion: """
            Roles and their grants are part of the schema: create, delete, grant and revoke them in \
            development; promotion (cirrus schema --promote) carries them to production. Assignments \
            belong to one environment (--environment). Grants apply in the public database; a \
            private database stays its owner's alone. Exit status: 0 ok, 1 refused, 2 usage.

            Examples:
              cirrus role create --db DIR Moderator
              cirrus role grant --db DIR Moderator read,write --type Post
              cirrus role assign --db DIR Moderator _alice
              cirrus role assign --db DIR --environment production Moderator _alice
              cirrus role list --db DIR
              cirrus role create --db DIR --postgres postgres://cirrus@127.0.0.1:5432/cirrus Moderator
            """,
        subcommands: [
            RoleCreate.self, RoleDelete.self, RoleGrant.self, RoleRevoke.self, RoleAssign.self, RoleUnassign.self,
            RoleList.self,
        ])
}

/// Where the container is and `--environment ENV`, shared by every role subcommand.
struct RoleTarget: ParsableArguments {
    @OptionGroup var store: StoreOptions

    @Option(help: ArgumentHelp("development (default) or production.", valueName: "ENV"))
    var environment: String = "development"

    func validate() throws {
        if Environment(rawValue: environment) == nil {
            throw ValidationError("--environment is development or production")
        }
    }

    func run(_ action: RoleCommands.Action, json: Bool = false) async throws {
        let env = Environment(rawValue: environment) ?? .development
        let out =
            store.postgres != nil
            ? await store.withContainer(env, command: "role") { c in
                await ContainerCommands.role(c, action: action, json: json)
            }
            : RoleCommands.run(db: store.db, action: action, environment: env, json: json)
        if out.exitCode == 2 {
            throw ValidationError(
                out.stderr.trimmingCharacters(in: .newlines).replacingOccurrences(of: "cirrus role: ", with: ""))
        }
        try finish(out)
    }
}

struct RoleCreate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "create", abstract: "Create a custom role.")
    @OptionGroup var target: RoleTarget
    @Argument(help: "The role's name: a letter, then letters, digits or '_'.") var role: String
    func run() async throws { try await target.run(.create(role: role)) }
}

struct RoleDelete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete a custom role with its grants and assignments.")
    @OptionGroup var target: RoleTarget
    @Argument(help: "The role.") var role: String
    func run() async throws { try await target.run(.delete(role: role)) }
}

/// What a grant or a revocation names: where, role, permissions, record type.
struct RolePermissions: ParsableArguments {
    @OptionGroup var target: RoleTarget
    @Argument(help: "The role: a custom role, _world, _icloud or _creator.") var role: String
    @Argument(help: "create, read, write, comma-separated.") var permissions: String
    @Option(name: .customLong("type"), help: ArgumentHelp("The record type.", valueName: "TYPE")) var recordType: String

    /// Runs the grant or revocation `action` makes of the role, permissions and type.
    func run(_ action: (_ role: String, _ permissions: String, _ type: String) -> RoleCommands.Action) async throws {
        try await target.run(action(role, permissions, recordType))
    }
}

struct RoleGrant: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "grant", abstract: "Grant permissions on a record type to a role.")
    @OptionGroup var change: RolePermissions
    func run() async throws { try await change.run(RoleCommands.Action.grant) }
}

struct RoleRevoke: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke", abstract: "Take permissions on a record type away from a role.")
    @OptionGroup var change: RolePermissions
    func run() async throws { try await change.run(RoleCommands.Action.revoke) }
}

/// What an assignment or its removal names: where, role, user.
struct RoleMembership: ParsableArguments {
    @OptionGroup var target: RoleTarget
    @Argument(help: "The role.") var role: String
    @Argument(help: "The user record name.") var user: String

    /// Runs the assignment or removal `action` makes of the role and user.
    func run(_ action: (_ role: String, _ user: String) -> RoleCommands.Action) async throws {
        try await target.run(action(role, user))
    }
}

struct RoleAssign: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "assign", abstract: "Assign a user to a custom role in an environment.")
    @OptionGroup var member: RoleMembership
    func run() async throws { try await member.run(RoleCommands.Action.assign) }
}

struct RoleUnassign: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unassign", abstract: "Remove a user from a custom role in an environment.")
    @OptionGroup var member: RoleMembership
    func run() async throws { try await member.run(RoleCommands.Action.unassign) }
}

struct RoleList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List the roles, their grants and their members.")
    @OptionGroup var target: RoleTarget
    @Flag(help: "Print JSON.") var json = false
    func run() async throws { try await target.run(.list, json: json) }
}

// ContainerCommands: `cirrus schema`, `cirrus role` and `cirrus users` on a container the caller
// opened — a directory's or PostgreSQL's (`--postgres URL`: `Container.open(postgres:…)`, which
// this module does not link; the command line opens it). Every call here is one the façade
// answers on both engines: the schema through `applySchema` / `promoteSchemaToProduction`,
// roles through `changeSecurityRoles`, users through the async user calls
// (Database+AsyncUsers.swift). The directory forms (SchemaCommands, RoleCommands, UserCommands)
// stay as they are: they work beside a running `cirrus serve` without opening an environment.

import Cirrus
import Foundation
import RecordModel

/// `cirrus schema`, `cirrus role`, `cirrus users` on an opened container (any engine).
///
/// ```swift
/// let c = try await Container.open(postgres: url, containerID: "iCloud.com.example")  // CirrusPostgres
/// print(await ContainerCommands.schema(c, action: .export).stdout)
/// _ = await ContainerCommands.role(c, action: .create(role: "Moderator"))
/// ```
public enum ContainerCommands {
    /// One schema action (see ``SchemaCommands/Action``); `.promote` needs the development
    /// container. `read` reads the schema file of `.importFile`.
    public static func schema(
        _ c: Container, action: SchemaCommands.Action, read: (String) throws -> [UInt8] = ContainerCommands.readFile
    ) async -> CommandOutput {
        do {
            switch action {
            case .export:
                return CommandOutput(stdout: c.exportSchema())
            case .importFile(let path):
                let bytes: [UInt8]
                do {
                    bytes = try read(path)
                } catch {
                    return CommandOutput(
                        stderr: "cirrus schema: \(path): cannot read the schema file (\(error))\n", exitCode: 1)
                }
                let s = try await c.applySchema(String(decoding: bytes, as: UTF8.self))
                let fields = s.recordTypes.values.reduce(0) { $0 + $1.fields.count }
                return CommandOutput(
                    stdout:
                        "imported the \(c.environment.rawValue) schema: \(s.recordTypes.count) record types, \(fields) fields\n"
                )
            case .promote:
                let s = try await c.promoteSchemaToProduction()
                return CommandOutput(
                    stdout: "promoted the development schema to production: \(s.recordTypes.count) record types\n")
            }
        } catch {
            return CommandOutput(stderr: "cirrus schema: \(error)\n", exitCode: 1)
        }
    }

    /// One role action (see ``RoleCommands/Action``) on the container's environment.
    public static func role(_ c: Container, action: RoleCommands.Action, json: Bool = false) async -> CommandOutput {
        let env = c.environment.rawValue
        var permissions: Set<Permission> = []
        switch action {
        case .list:
            let roles = c.securityRoles()
            return CommandOutput(stdout: json ? RoleCommands.listJSON(roles) : RoleCommands.listText(roles))
        case .grant(_, let text, _), .revoke(_, let text, _):
            switch RoleCommands.parsePermissions(text) {
            case .success(let p): permissions = p
            case .failure(let message): return CommandOutput(stderr: "cirrus role: \(message)\n", exitCode: 2)
            }
        default: break
        }
        let change: SecurityRoleChange
        let done: String
        switch action {
        case .create(let role): (change, done) = (.createRole(role), "created role \(role)")
        case .delete(let role): (change, done) = (.deleteRole(role), "deleted role \(role)")
        case .grant(let role, _, let type):
            (change, done) = (
                .grant(permissions, on: type, to: role),
                "granted \(RoleCommands.names(permissions)) on \(type) to \(role)"
            )
        case .revoke(let role, _, let type):
            (change, done) = (
                .revoke(permissions, on: type, from: role),
                "revoked \(RoleCommands.names(permissions)) on \(type) from \(role)"
            )
        case .assign(let role, let user):
            (change, done) = (.assign(user: user, to: role), "assigned \(user) to \(role)")
        case .unassign(let role, let user):
            (change, done) = (.unassign(user: user, from: role), "removed \(user) from \(role)")
        case .list: return CommandOutput()
        }
        do {
            try await c.changeSecurityRoles(change)
        } catch {
            return CommandOutput(stderr: "cirrus role: \(error)\n", exitCode: 1)
        }
        return CommandOutput(stdout: "\(done) (\(env))\n")
    }

    /// One user action (see ``UserCommands/Action``); a lookup answers as a signed-in caller's
    /// discovery does (only users who opted in are found).
    public static func users(_ c: Container, action: UserCommands.Action, json: Bool = false) async -> CommandOutput {
        do {
            switch action {
            case .add(let account):
                let kept = try await c.storeUserAccount(account)
                return CommandOutput(stdout: "saved user \(kept.userRecordName) (\(kept.discoverability.rawValue))\n")
            case .list:
                let all = try await c.fetchUserAccounts()
                return CommandOutput(stdout: json ? UserCommands.listJSON(all) : UserCommands.listText(all))
            case .setDiscoverable(let user, let text):
                guard let status = UserCommands.parseStatus(text) else {
                    return CommandOutput(
                        stderr: "cirrus users: \"\(text)\": expected granted, denied or initialState (yes/no)\n",
                        exitCode: 2)
                }
                try await c.changeDiscoverability(status, ofUser: user)
                return CommandOutput(
                    stdout: "\(user) is \(status == .granted ? "" : "not ")discoverable (\(status.rawValue))\n")
            case .lookup(let lookups):
                // Any signed-in caller's discovery: the administrator's tool sees no more.
                let found = try await c.publicDatabase(as: .user("_cirrus_cli")).lookUpUserIdentities(lookups)
                return UserCommands.lookupOutput(lookups, found, json: json)
            }
        } catch {
            return CommandOutput(stderr: "cirrus users: \(error)\n", exitCode: 1)
        }
    }

    /// Reads a file's bytes (the schema file of `cirrus schema --import`).
    public static func readFile(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ShellError("no such file, or not readable")
        }
        return Array(data)
    }
}

// RoleCommands: the logic of `cirrus role create|delete|grant|revoke|assign|unassign|list` on a
// container directory. Roles and grants are part of the schema, changed in development and
// carried to production by promotion; assignments belong to one environment. Every change is
// one commit of the container (nothing changes when it is refused). Exit codes: 0 ok,
// 1 rejected / unreadable, 2 usage.

import Cirrus
import CirrusIO
import RecordLog
import RecordModel

/// `cirrus role` as a library.
///
/// ```swift
/// _ = RoleCommands.run(db: "notes", action: .create(role: "Moderator"))
/// _ = RoleCommands.run(db: "notes", action: .grant(role: "Moderator", permissions: "read,write", recordType: "Post"))
/// _ = RoleCommands.run(db: "notes", action: .assign(role: "Moderator", user: "_alice"))
/// print(RoleCommands.run(db: "notes", action: .list).stdout)
/// ```
public enum RoleCommands {
    /// What to do.
    public enum Action: Sendable, Hashable {
        /// Create a custom role (development).
        case create(role: String)
        /// Delete a custom role with its grants and assignments (development).
        case delete(role: String)
        /// Grant permissions (`create,read,write`, any case, comma-separated) on a record type to
        /// a role — a custom one or `_world`, `_icloud`, `_creator` (development).
        case grant(role: String, permissions: String, recordType: String)
        /// Take permissions on a record type away from a role (development).
        case revoke(role: String, permissions: String, recordType: String)
        /// Assign a user (record name) to a custom role in the environment.
        case assign(role: String, user: String)
        /// Remove a user from a custom role in the environment.
        case unassign(role: String, user: String)
        /// List the roles, their grants by record type and their members (read-only).
        case list
    }

    /// Runs one role action on the container `db` in `environment`; `json` makes `list` print
    /// `[{"name", "grants": {type: [permission]}, "members"}]`. Exit 1, with the reason on stderr,
    /// when the environment has no store (list) or the container refuses the change; exit 2 when
    /// the permissions do not parse.
    public static func run(
        db: String, action: Action, environment: Environment = .development, json: Bool = false,
        fileSystem: any FileSystem = POSIXFileSystem()
    ) -> CommandOutput {
        do {
            if case .list = action {
                if !fileSystem.exists(joinPath(db, environment.rawValue)) {
                    return CommandOutput(
                        stderr: "cirrus role: \(db) has no \(environment.rawValue) store\n", exitCode: 1)
                }
                let c = try Container.open(
                    at: db, environment: environment, options: ContainerOptions(fileSystem: fileSystem, readOnly: true))
                return CommandOutput(stdout: json ? listJSON(c.securityRoles()) : listText(c.securityRoles()))
            }
            var permissions: Set<Permission> = []
            switch action {
            case .grant(_, let text, _), .revoke(_, let text, _):
                switch parsePermissions(text) {
                case .success(let p): permissions = p
                case .failure(let message): return CommandOutput(stderr: "cirrus role: \(message)\n", exitCode: 2)
                }
            default: break
            }
            let c = try Container.open(
                at: db, environment: environment, options: ContainerOptions(fileSystem: fileSystem))
            let done: String
            do {
                switch action {
                case .create(let role):
                    try c.createRole(role)
                    done = "created role \(role)"
                case .delete(let role):
                    try c.deleteRole(role)
                    done = "deleted role \(role)"
                case .grant(let role, _, let type):
                    try c.grant(permissions, on: type, to: role)
                    done = "granted \(names(permissions)) on \(type) to \(role)"
                case .revoke(let role, _, let type):
                    try c.revoke(permissions, on: type, from: role)
                    done = "revoked \(names(permissions)) on \(type) from \(role)"
                case .assign(let role, let user):
                    try c.assign(user: user, to: role)
                    done = "assigned \(user) to \(role)"
                case .unassign(let role, let user):
                    try c.unassign(user: user, from: role)
                    done = "removed \(user) from \(role)"
                case .list:
                    done = ""
                }
            } catch {
                try? c.close()
                throw error
            }
            try c.close()
            return CommandOutput(stdout: "\(done) (\(environment.rawValue))\n")
        } catch {
            return CommandOutput(stderr: "cirrus role: \(error)\n", exitCode: 1)
        }
    }

    /// `read,write` → [.read, .write]; any case, spaces around commas allowed.
    static func parsePermissions(_ text: String) -> Result<Set<Permission>, ParseFailure> {
        var out: Set<Permission> = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let word = part.trimmingSpaces.uppercased()
            guard let p = Permission(rawValue: word) else {
                return .failure(
                    ParseFailure(
                        "permission \"\(part.trimmingSpaces)\" in \"\(text)\": expected create, read or write, "
                            + "separated by commas"))
            }
            out.insert(p)
        }
        return .success(out)
    }

    /// A message for a permission list that does not parse.
    struct ParseFailure: Error, CustomStringConvertible {
        let description: String
        init(_ d: String) { description = d }
    }

    static func names(_ p: Set<Permission>) -> String { p.sorted().map(\.rawValue).joined(separator: ", ") }

    static func listText(_ roles: [SecurityRole]) -> String {
        if roles.isEmpty { return "no custom roles\n" }
        var rows: [[String]] = []
        for r in roles {
            let types = r.grants.keys.sorted { compareUTF8($0, $1) < 0 }
            let members = r.members.isEmpty ? "-" : r.members.joined(separator: ", ")
            if types.isEmpty { rows.append([r.name, "-", "-", members]) }
            for (i, t) in types.enumerated() {
                rows.append([i == 0 ? r.name : "", t, names(r.grants[t] ?? []), i == 0 ? members : ""])
            }
        }
        return TextTable(header: ["role", "record type", "permissions", "members"], rows: rows).render(width: 120)
    }

    static func listJSON(_ roles: [SecurityRole]) -> String {
        let array = JSONValue.array(
            roles.map { r in
                .object([
                    ("name", .string(r.name)),
                    (
                        "grants",
                        .object(
                            r.grants.keys.sorted { compareUTF8($0, $1) < 0 }.map { t in
                                (t, .array((r.grants[t] ?? []).sorted().map { .string($0.rawValue) }))
                            })
                    ),
                    ("members", .array(r.members.map { .string($0) })),
                ])
            })
        var s = ""
        array.write(to: &s)
        return s + "\n"
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var s = self
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return s
    }
}

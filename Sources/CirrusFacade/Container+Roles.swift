// Container+Roles: custom security roles — create, delete, grant, revoke, assign, unassign,
// list. Roles and their grants are part of the schema (they travel with it on promotion);
// assignments belong to one environment. Every change is one schema entry committed through
// the log under the write lock, like any schema change, so it is atomic and durable with the
// container's durability. The rules that apply grants are in Access.swift.
//
// Not here: the private database, which roles never open (it stays its owner's alone).

import RecordModel

/// A custom security role of a container: what it may do on each record type and who holds it
/// in this environment.
///
/// ```swift
/// for role in container.securityRoles() {
///     print(role.name, role.grants["Post"] ?? [], role.members)   // Moderator [WRITE] ["_alice"]
/// }
/// ```
public struct SecurityRole: Sendable, Hashable {
    /// The role's name (`CREATE ROLE name`).
    public var name: String
    /// The permissions the role holds, by record type (types without any are absent).
    public var grants: [String: Set<Permission>]
    /// The user record names assigned to the role in this environment, sorted.
    public var members: [String]

    /// A role with its grants and members.
    public init(name: String, grants: [String: Set<Permission>] = [:], members: [String] = []) {
        self.name = name
        self.grants = grants
        self.members = members
    }
}

extension Container {
    /// The custom roles of this environment, sorted by name, with their grants and members.
    public func securityRoles() -> [SecurityRole] {
        let s = schema
        return s.roles.sorted { compareUTF8($0, $1) < 0 }.map { name in
            var grants: [String: Set<Permission>] = [:]
            for t in s.recordTypes.values {
                let p = t.grants.filter { $0.role == name }.reduce(into: Set<Permission>()) {
                    $0.formUnion($1.permissions)
                }
                if !p.isEmpty { grants[t.name] = p }
            }
            let members = s.roleAssignments.filter { $0.value.contains(name) }.keys.sorted { compareUTF8($0, $1) < 0 }
            return SecurityRole(name: name, grants: grants, members: members)
        }
    }

    /// Makes one security-role change on any engine (the calls above are the container
    /// directory's): on PostgreSQL the schema is changed in one transaction, starting from the
    /// stored schema under the namespace's lock, so concurrent changes from several processes
    /// are not lost.
    ///
    /// ```swift
    /// try await container.changeSecurityRoles(.createRole("Moderator"))
    /// try await container.changeSecurityRoles(.assign(user: "_alice", to: "Moderator"))
    /// ```
    public func changeSecurityRoles(_ change: SecurityRoleChange) async throws(CirrusError) {
        if change.changesRoles && backend.environment == .production { throw Self.productionRoles }
        _ = try await backend.updateSchema { (old) throws(CirrusError) in
            var s = old
            try change.apply(to: &s)
            return s
        }
    }

    // MARK: - Helpers

    package static let productionRoles = CirrusError(
        .invalidArguments,
        "security roles and grants are part of the schema: change them in development and promote "
            + "(production's schema changes only by promotion or import)")

    package static func unknownRole(_ name: String, _ s: Schema) -> CirrusError {
        let known = s.roles.sorted { compareUTF8($0, $1) < 0 }
        return CirrusError(
            .invalidArguments,
            "role \"\(name)\" does not exist in the \(s.environment.rawValue) schema (roles: "
                + (known.isEmpty ? "none" : known.joined(separator: ", ")) + ")")
    }

    package static func checkUser(_ user: String) throws(CirrusError) {
        if user == ZoneID.defaultOwnerName || (try? Validation.validateRecordName(user)) == nil {
            throw CirrusError(
                .invalidArguments,
                "\"\(user)\" is not a user record name (1 to 255 printable ASCII characters, not "
                    + "\(ZoneID.defaultOwnerName))")
        }
    }
}

/// One change to a container's security roles (``Container/changeSecurityRoles(_:)``): the
/// rules of each case are those of the container call of the same name.
public enum SecurityRoleChange: Sendable, Hashable {
    /// `Container.createRole(_:)`.
    case createRole(String)
    /// `Container.deleteRole(_:)`.
    case deleteRole(String)
    /// `Container.grant(_:on:to:)`.
    case grant(Set<Permission>, on: String, to: String)
    /// `Container.revoke(_:on:from:)`.
    case revoke(Set<Permission>, on: String, from: String)
    /// `Container.assign(user:to:)`.
    case assign(user: String, to: String)
    /// `Container.unassign(user:from:)`.
    case unassign(user: String, from: String)

    /// Whether it changes roles or grants (part of the schema: development only), rather than
    /// an environment's assignments.
    public var changesRoles: Bool {
        switch self {
        case .assign, .unassign: false
        default: true
        }
    }

    /// Applies the change to `s`; throws invalidArguments (and leaves `s` as it was) when the
    /// change is refused.
    public func apply(to s: inout Schema) throws(CirrusError) {
        var n = s
        switch self {
        case .createRole(let name):
            guard Schema.isCustomRoleName(name) else {
                throw CirrusError(
                    .invalidArguments,
                    "role name \"\(name)\": a custom role's name is a letter, then letters, digits or '_' (at most 255; "
                        + "names starting with '_' are the built-in roles)")
            }
            guard n.roles.insert(name).inserted else {
                throw CirrusError(.invalidArguments, "role \"\(name)\" already exists")
            }
        case .deleteRole(let name):
            guard n.roles.remove(name) != nil else { throw Container.unknownRole(name, n) }
            for (t, var ts) in n.recordTypes where ts.grants.contains(where: { $0.role == name }) {
                ts.grants.removeAll { $0.role == name }
                n.recordTypes[t] = ts
            }
            for (u, var held) in n.roleAssignments where held.remove(name) != nil {
                n.roleAssignments[u] = held.isEmpty ? nil : held
            }
        case .grant(let permissions, let recordType, let role):
            try Self.changeGrants(permissions, on: recordType, role: role, &n) { grants in
                if let i = grants.firstIndex(where: { $0.role == role }) {
                    grants[i].permissions.formUnion(permissions)
                } else {
                    grants.append(Grant(permissions, to: role))
                }
            }
        case .revoke(let permissions, let recordType, let role):
            try Self.changeGrants(permissions, on: recordType, role: role, &n) { grants in
                for i in grants.indices where grants[i].role == role { grants[i].permissions.subtract(permissions) }
                grants.removeAll { $0.permissions.isEmpty }
            }
        case .assign(let user, let role):
            try Container.checkUser(user)
            guard n.roles.contains(role) else { throw Container.unknownRole(role, n) }
            n.roleAssignments[user, default: []].insert(role)
        case .unassign(let user, let role):
            try Container.checkUser(user)
            guard n.roles.contains(role) else { throw Container.unknownRole(role, n) }
            guard var held = n.roleAssignments[user], held.remove(role) != nil else {
                throw CirrusError(.invalidArguments, "user \"\(user)\" does not hold role \"\(role)\"")
            }
            n.roleAssignments[user] = held.isEmpty ? nil : held
        }
        s = n
    }

    private static func changeGrants(
        _ permissions: Set<Permission>, on recordType: String, role: String, _ s: inout Schema,
        _ body: (inout [Grant]) -> Void
    ) throws(CirrusError) {
        guard !permissions.isEmpty else {
            throw CirrusError(.invalidArguments, "no permission given; expected CREATE, READ or WRITE")
        }
        guard Schema.builtInRoles.contains(role) || s.roles.contains(role) else {
            throw Container.unknownRole(role, s)
        }
        if recordType == Schema.usersRecordType {
            throw CirrusError(.invalidArguments, "the grants of type Users cannot be changed")
        }
        guard var t = s.recordTypes[recordType] else {
            throw CirrusError(
                .invalidArguments, "record type \(recordType) does not exist in the \(s.environment.rawValue) schema")
        }
        body(&t.grants)
        s.recordTypes[recordType] = t
    }
}

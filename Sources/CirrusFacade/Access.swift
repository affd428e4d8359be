// Access: who may do what. A private database belongs to one user: every call on it must be
// made on that user's behalf. In the public database a record type's grants decide, per role —
// `_world` (everyone), `_icloud` (signed-in users), `_creator` (the record's creator) and the
// custom roles of the schema (`CREATE ROLE`), held by the users assigned to them in this
// environment — with CloudKit's defaults (read: world, create: signed-in, write: creator) unless
// the schema's GRANT lines say otherwise. Writing always needs a signed-in user. Roles do not
// open a private database: that stays its owner's alone.

import RecordModel

package enum Access {
    /// Whether `identity` holds `permission` on records of `type` created by `creator` in the
    /// public database (`creator` nil: for a type-level check, the creator role does not count).
    /// `creator` is read only when a creator grant is reached, and a grant's permissions are
    /// scanned, not hashed (at most three).
    package static func allows(
        _ permission: Permission, type: String, creator: @autoclosure () -> RecordID?, identity: Identity,
        schema: Schema
    ) -> Bool {
        let grants = Self.grants(of: type, in: schema)
        for g in grants where g.permissions.contains(where: { $0 == permission }) {
            switch g.role {
            case Grant.world: return true
            case Grant.authenticated: if identity.userRecordName != nil { return true }
            case Grant.creator:
                if let u = identity.userRecordName, let c = creator(), c.recordName == u { return true }
            default:
                if let u = identity.userRecordName, schema.roleAssignments[u]?.contains(g.role) == true { return true }
            }
        }
        return false
    }

    /// The grants of `type` (the defaults when the schema has no such type), read through the
    /// dictionary's index. Any accessor still copies the whole type schema out of the dictionary
    /// (its fields, options and grants, each retained and released): fetches by id avoid this
    /// call through `canRead(_:owner:identity:schema:worldReadable:)`.
    package static func grants(of type: String, in schema: Schema) -> [Grant] {
        guard let i = schema.recordTypes.index(forKey: type) else { return Grant.defaults }
        return schema.recordTypes.values[i].grants
    }

    /// For each record type of `schema`, whether everyone may read its records (a `_world` READ
    /// grant): what `ContainerCore.publishedWorldReadable` holds.
    package static func worldReadable(_ schema: Schema) -> [String: Bool] {
        schema.recordTypes.mapValues { worldReads($0.grants) }
    }

    /// Whether `grants` let everyone read.
    package static func worldReads(_ grants: [Grant]) -> Bool {
        grants.contains { $0.role == Grant.world && $0.permissions.contains(.read) }
    }

    /// Whether the default grants (a type the schema does not have) let everyone read.
    package static let defaultsWorldReadable = worldReads(Grant.defaults)

    /// Whether anyone in a role that `identity` could hold may read some records of `type`.
    package static func mayReadSome(type: String, identity: Identity, schema: Schema) -> Bool {
        let grants = Self.grants(of: type, in: schema)
        let held = identity.userRecordName.map { schema.roles(of: $0) } ?? []
        return grants.contains { g in
            g.permissions.contains(.read)
                && (g.role == Grant.world || held.contains(g.role)
                    || (identity.userRecordName != nil && (g.role == Grant.authenticated || g.role == Grant.creator)))
        }
    }

    /// Whether `identity` may read `record` of the database with storage owner `owner`.
    package static func canRead(_ record: Record, owner: String, identity: Identity, schema: Schema) -> Bool {
        if owner != ZoneID.defaultOwnerName { return identity.userRecordName == owner }
        return allows(
            .read, type: record.recordType, creator: record.creatorUserRecordID, identity: identity, schema: schema)
    }

    /// `canRead(_:owner:identity:schema:)` given which types of `schema` everyone may read
    /// (`worldReadable(schema)`): a record of such a type is readable without reading its type's
    /// grants, which copies its whole type schema out of the schema (the costly part of an
    /// access check).
    package static func canRead(
        _ record: Record, owner: String, identity: Identity, schema: Schema, worldReadable: [String: Bool]
    ) -> Bool {
        if owner != ZoneID.defaultOwnerName { return identity.userRecordName == owner }
        if worldReadable[record.recordType] ?? defaultsWorldReadable { return true }
        return allows(
            .read, type: record.recordType, creator: record.creatorUserRecordID, identity: identity, schema: schema)
    }
}

/// The access rules every engine applies, the same way: who may use a database, read a record
/// type, read a record, and create or overwrite one (the file header says how). A backend
/// calls these with its database's scope and identity and the container's schema.
///
/// ```swift
/// try AccessRules.checkDatabaseAccess(scope: .private(owner: "_alice"), identity: .user("_bob"))  // permissionFailure
/// ```
public enum AccessRules {
    /// Throws unless `identity` may use the database at all: a private database only by its
    /// owner (anonymous → notAuthenticated, anyone else → permissionFailure).
    public static func checkDatabaseAccess(scope: Database.Scope, identity: Identity) throws(CirrusError) {
        guard case .private(let owner) = scope else { return }
        // The validation's message is replaced by one that says what an owner must be.
        if owner == ZoneID.defaultOwnerName || (try? Validation.validateRecordName(owner)) == nil {
            throw CirrusError(
                .invalidArguments,
                "\"\(owner)\" is not a user record name (1 to 255 printable ASCII characters, not "
                    + "\(ZoneID.defaultOwnerName))"
            )
        }
        guard let u = identity.userRecordName else {
            throw CirrusError(.notAuthenticated, "the private database of \"\(owner)\" needs its owner signed in")
        }
        if u != owner {
            throw CirrusError(.permissionFailure, "user \"\(u)\" cannot use the private database of \"\(owner)\"")
        }
    }

    /// Throws unless `identity` may read records of `recordType` in the database (`Users` is
    /// never queried: invalidArguments). `worldReadable` true says the schema lets everyone read
    /// the type (`Access.worldReadable`): its grants are then not read (which copies the type's
    /// whole schema out of the schema).
    public static func checkCanRead(
        recordType: String, scope: Database.Scope, identity: Identity, schema: Schema, worldReadable: Bool = false
    ) throws(CirrusError) {
        try checkDatabaseAccess(scope: scope, identity: identity)
        if recordType == Schema.usersRecordType {
            throw CirrusError(.invalidArguments, "Type 'Users' cannot be queried")
        }
        if case .public = scope, !worldReadable,
            !Access.mayReadSome(type: recordType, identity: identity, schema: schema)
        {
            throw CirrusError(
                identity.userRecordName == nil ? .notAuthenticated : .permissionFailure,
                "\(identity) may not read records of type \(recordType)")
        }
    }

    /// Whether `identity` may read `record`, a record of the database with `scope`.
    public static func canRead(_ record: Record, scope: Database.Scope, identity: Identity, schema: Schema) -> Bool {
        Access.canRead(record, owner: scope.owner, identity: identity, schema: schema)
    }

    /// Whether every record of `recordType` this identity could read passes `canRead` without a
    /// per-record test (world or signed-in READ in the public database; any private database).
    public static func readsEveryRecord(
        of recordType: String, scope: Database.Scope, identity: Identity, schema: Schema
    ) -> Bool {
        guard case .public = scope else { return true }
        return Access.allows(.read, type: recordType, creator: nil, identity: identity, schema: schema)
    }

    /// Throws unless `identity` may create a record of `type` (`current` nil) or overwrite or
    /// delete `current` (record `id`) in the database with `scope`.
    public static func checkWrite(
        type: String, current: Record?, id: RecordID, scope: Database.Scope, identity: Identity, schema: Schema
    ) throws(CirrusError) {
        guard let u = identity.userRecordName else {
            throw .record(.notAuthenticated, id, "writing needs a signed-in user")
        }
        guard case .public = scope else { return }
        if let current {
            if !Access.allows(
                .write, type: current.recordType, creator: current.creatorUserRecordID, identity: identity,
                schema: schema)
            {
                throw .record(
                    .permissionFailure, id,
                    "user \"\(u)\" may not write this \(current.recordType) record (WRITE grant)")
            }
        } else if !Access.allows(.create, type: type, creator: nil, identity: identity, schema: schema) {
            throw .record(.permissionFailure, id, "user \"\(u)\" may not create \(type) records (CREATE grant)")
        }
    }
}

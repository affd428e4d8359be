// Schema: record types, their fields, types and index options, per environment.
//
// Development creates types and fields just in time; production is locked. The checker uses
// the schema to type-check predicates and (in production) to require index options.

/// Where a database runs: development (schema grows on save) or production (schema locked).
public enum Environment: String, Sendable, Hashable, Codable {
    /// The schema grows as records are saved; index options are not required.
    case development
    /// The schema is locked; queries need the index options they use.
    case production
}

/// Index options of a field, as in CloudKit's schema editor.
public struct IndexOptions: OptionSet, Sendable, Hashable, Codable {
    /// The option bits: 1 queryable, 2 sortable, 4 searchable.
    public let rawValue: UInt8
    /// Options from their bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Equality, IN, BEGINSWITH, list membership, NEAR.
    public static let queryable = IndexOptions(rawValue: 1)
    /// Ranges and sorting.
    public static let sortable = IndexOptions(rawValue: 2)
    /// Full-text search over the field's tokens (strings only).
    public static let searchable = IndexOptions(rawValue: 4)

    /// The options CloudKit gives a new field of `type` in development.
    public static func automatic(for type: FieldType) -> IndexOptions {
        if type.isList { return type.scalar == .asset ? [] : .queryable }
        switch type.scalar {
        case .string: return [.queryable, .sortable, .searchable]
        case .int64, .double, .date: return [.queryable, .sortable]
        case .bytes, .reference, .location: return .queryable
        case .asset: return []
        }
    }

    /// Names in CloudKit's schema language order: `QUERYABLE SORTABLE SEARCHABLE`.
    public var names: [String] {
        var n: [String] = []
        if contains(.queryable) { n.append("QUERYABLE") }
        if contains(.sortable) { n.append("SORTABLE") }
        if contains(.searchable) { n.append("SEARCHABLE") }
        return n
    }
}

/// One field of a record type.
public struct FieldSchema: Sendable, Hashable, Codable {
    /// The field's name.
    public var name: String
    /// The field's type.
    public var type: FieldType
    /// The field's index options.
    public var options: IndexOptions

    /// A field, with no index options unless given.
    public init(name: String, type: FieldType, options: IndexOptions = []) {
        self.name = name
        self.type = type
        self.options = options
    }
}

/// A permission a role can be granted on a record type.
public enum Permission: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    /// May create records of the type.
    case create = "CREATE"
    /// May read records of the type.
    case read = "READ"
    /// May change and delete records of the type.
    case write = "WRITE"

    /// Orders by raw value: `CREATE`, `READ`, `WRITE`.
    public static func < (a: Permission, b: Permission) -> Bool { a.rawValue < b.rawValue }
}

/// `GRANT READ, WRITE TO "_creator"`: permissions given to a role on a record type.
public struct Grant: Sendable, Hashable, Codable {
    /// Everyone, signed in or not.
    public static let world = "_world"
    /// Every signed-in user.
    public static let authenticated = "_icloud"
    /// The user who created the record.
    public static let creator = "_creator"

    /// What the role may do.
    public var permissions: Set<Permission>
    /// The role: ``Grant/world``, ``Grant/authenticated``, ``Grant/creator`` or a custom role's name.
    public var role: String

    /// Grants `permissions` to `role`.
    public init(_ permissions: Set<Permission>, to role: String) {
        self.permissions = permissions
        self.role = role
    }

    /// CloudKit's default grants of a public record type: read for the world, create for
    /// signed-in users, write for the creator.
    public static let defaults: [Grant] = [
        Grant([.write], to: creator), Grant([.create], to: authenticated), Grant([.read], to: world),
    ]
}

/// A record type: its fields, the indexes declared on system fields, and its grants.
public struct RecordTypeSchema: Sendable, Hashable, Codable {
    // The values live in one shared copy-on-write box (as `Record`'s do): a query reads its
    // type's schema several times (access, check, plan), and each copy retained its name, two
    // dictionaries and an array; now one reference. A write copies the box only when shared.
    @usableFromInline
    struct Contents: Hashable, Sendable, Codable {
        @usableFromInline var name: String
        @usableFromInline var fields: [String: FieldSchema]
        @usableFromInline var systemFieldOptions: [SystemField: IndexOptions]
        @usableFromInline var grants: [Grant]
    }

    @usableFromInline var box: CopyOnWriteBox<Contents>

    /// The box, copied first when another value shares it.
    @inlinable @inline(__always)
    mutating func unique() -> CopyOnWriteBox<Contents> { CopyOnWriteBox.unique(&box) }

    /// The record type's name.
    @inlinable public var name: String {
        get { box.contents.name }
        _modify { yield &unique().contents.name }
    }
    /// The user fields, by name.
    @inlinable public var fields: [String: FieldSchema] {
        get { box.contents.fields }
        _modify { yield &unique().contents.fields }
    }
    /// Index options on system fields; empty unless declared (never automatic).
    @inlinable public var systemFieldOptions: [SystemField: IndexOptions] {
        get { box.contents.systemFieldOptions }
        _modify { yield &unique().contents.systemFieldOptions }
    }
    /// Who may create, read and write records of this type in the public database.
    @inlinable public var grants: [Grant] {
        get { box.contents.grants }
        _modify { yield &unique().contents.grants }
    }

    /// A record type; with fields of the same name, the last one wins. Grants default to CloudKit's.
    public init(
        name: String, fields: [FieldSchema] = [], systemFieldOptions: [SystemField: IndexOptions] = [:],
        grants: [Grant] = Grant.defaults
    ) {
        box = CopyOnWriteBox(
            Contents(
                name: name, fields: Dictionary(fields.map { ($0.name, $0) }, uniquingKeysWith: { _, b in b }),
                systemFieldOptions: systemFieldOptions, grants: grants))
    }

    /// Fields sorted by name, for stable output.
    public var sortedFields: [FieldSchema] { fields.values.sorted { compareUTF8($0.name, $1.name) < 0 } }

    /// Decodes a record type: every member by name (the contents' synthesized coding, the keys
    /// a plain struct of the members had).
    public init(from decoder: any Decoder) throws { box = CopyOnWriteBox(try Contents(from: decoder)) }

    /// Encodes a record type: every member by name.
    public func encode(to encoder: any Encoder) throws { try box.contents.encode(to: encoder) }
}

/// A container's schema in one environment.
///
/// ```swift
/// let schema = Schema(environment: .production, recordTypes: [
///     RecordTypeSchema(name: "Place", fields: [
///         FieldSchema(name: "kind", type: .string, options: [.queryable]),
///         FieldSchema(name: "location", type: .location, options: [.queryable]),
///     ]),
/// ])
/// ```
public struct Schema: Sendable, Hashable, Codable {
    /// The record type every container has and no query may name.
    public static let usersRecordType = "Users"

    // The values live in one shared copy-on-write box: a query passes the schema from the
    // container to the access rules, the checker and the executor, and each copy retained its
    // three collections; now one reference. A write copies the box only when shared.
    @usableFromInline
    struct Contents: Hashable, Sendable {
        @usableFromInline var environment: Environment
        @usableFromInline var recordTypes: [String: RecordTypeSchema]
        @usableFromInline var roles: Set<String>
        @usableFromInline var roleAssignments: [String: Set<String>]
    }

    @usableFromInline var box: CopyOnWriteBox<Contents>

    /// The box, copied first when another value shares it.
    @inlinable @inline(__always)
    mutating func unique() -> CopyOnWriteBox<Contents> { CopyOnWriteBox.unique(&box) }

    /// Development (the schema grows on save) or production (locked).
    @inlinable public var environment: Environment {
        get { box.contents.environment }
        _modify { yield &unique().contents.environment }
    }
    /// The record types, by name.
    @inlinable public var recordTypes: [String: RecordTypeSchema] {
        get { box.contents.recordTypes }
        _modify { yield &unique().contents.recordTypes }
    }
    /// Custom security roles (`CREATE ROLE name;`), which grants may name beside the built-in
    /// `_world`, `_icloud` and `_creator`. They are part of the schema: promotion copies them.
    @inlinable public var roles: Set<String> {
        get { box.contents.roles }
        _modify { yield &unique().contents.roles }
    }
    /// Which users hold which custom roles in this environment: user record name → role names.
    /// Not part of the schema language and never promoted (each environment assigns its own);
    /// kept here so that assignments are committed through the log like the rest of the schema.
    @inlinable public var roleAssignments: [String: Set<String>] {
        get { box.contents.roleAssignments }
        _modify { yield &unique().contents.roleAssignments }
    }

    /// A schema; with record types of the same name, the last one wins.
    public init(
        environment: Environment = .development, recordTypes: [RecordTypeSchema] = [], roles: Set<String> = [],
        roleAssignments: [String: Set<String>] = [:]
    ) {
        box = CopyOnWriteBox(
            Contents(
                environment: environment,
                recordTypes: Dictionary(recordTypes.map { ($0.name, $0) }, uniquingKeysWith: { _, b in b }),
                roles: roles, roleAssignments: roleAssignments))
    }

    /// Whether `other` is this very value, not a copy changed since: both share one storage.
    /// Storage is changed in place only while one value holds it, so while a holder keeps a
    /// schema, another schema identical to it is equal to it (the reverse need not hold).
    public func isIdentical(to other: Schema) -> Bool { box === other.box }

    /// The custom roles `user` holds here (empty for an unknown user).
    public func roles(of user: String) -> Set<String> { roleAssignments[user] ?? [] }

    private enum CodingKeys: String, CodingKey {
        case environment, recordTypes, roles, roleAssignments
    }

    /// Decodes a schema; `roles` and `roleAssignments` are optional (logs written before roles
    /// existed have neither).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        box = CopyOnWriteBox(
            Contents(
                environment: try c.decode(Environment.self, forKey: .environment),
                recordTypes: try c.decode([String: RecordTypeSchema].self, forKey: .recordTypes),
                roles: Set(try c.decodeIfPresent([String].self, forKey: .roles) ?? []),
                roleAssignments: (try c.decodeIfPresent([String: [String]].self, forKey: .roleAssignments) ?? [:])
                    .mapValues { Set($0) }))
    }

    /// Encodes a schema; roles and assignments only when there are some (sorted), so a schema
    /// without roles encodes exactly as before they existed.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(environment, forKey: .environment)
        try c.encode(recordTypes, forKey: .recordTypes)
        if !roles.isEmpty { try c.encode(roles.sorted(by: { compareUTF8($0, $1) < 0 }), forKey: .roles) }
        if !roleAssignments.isEmpty {
            try c.encode(
                roleAssignments.mapValues { $0.sorted(by: { compareUTF8($0, $1) < 0 }) }, forKey: .roleAssignments)
        }
    }

    /// Record types sorted by name, for stable output.
    public var sortedRecordTypes: [RecordTypeSchema] {
        recordTypes.values.sorted { compareUTF8($0.name, $1.name) < 0 }
    }
}

extension Schema {
    /// The built-in roles: ``Grant/world``, ``Grant/authenticated``, ``Grant/creator``.
    public static let builtInRoles: Set<String> = [Grant.world, Grant.authenticated, Grant.creator]

    /// Whether `name` can name a custom role: a letter, then letters, digits or `_`, at most 255
    /// characters (so never a built-in role's name, which starts with `_`).
    ///
    /// ```swift
    /// Schema.isCustomRoleName("Moderator")   // true
    /// Schema.isCustomRoleName("_world")      // false
    /// ```
    public static func isCustomRoleName(_ name: String) -> Bool {
        let u = Array(name.utf8)
        func letter(_ c: UInt8) -> Bool { (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) }
        guard let f = u.first, letter(f), u.count <= 255 else { return false }
        return u.allSatisfy { letter($0) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F }
    }
}

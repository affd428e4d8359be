// Container+Schema: the schema lifecycle — export and import of CloudKit's schema language,
// promotion from development to production, and the add-only rule: once a type or field
// exists it is never removed or retyped (index options and grants may change). A schema change
// rebuilds the indexes of every type whose schema changed, in every database.

import RecordModel

extension Container {
    /// The current schema of this environment (always includes the reserved `Users` type).
    public var schema: Schema { backend.schema }

    /// The schema in CloudKit's schema language (`cktool export-schema` format).
    ///
    /// ```swift
    /// print(container.exportSchema())   // DEFINE SCHEMA\n    RECORD TYPE Place ( … );
    /// ```
    public func exportSchema() -> String { schema.schemaLanguage }

    /// `importSchema(_:)` (CirrusEmbedded's) on any engine: on a container directory the same call; on another
    /// engine (PostgreSQL) the same rules — add-only against the current schema, this
    /// environment's role assignments kept — applied by the engine (DDL in one transaction).
    ///
    /// ```swift
    /// let schema = try await container.applySchema(try String(contentsOfFile: "schema.ckdb", encoding: .utf8))
    /// ```
    @discardableResult
    public func applySchema(_ text: String) async throws(CirrusError) -> Schema {
        let new = try Self.schemaToImport(
            try Self.parseImport(text, environment: backend.environment), over: backend.schema)
        if new == backend.schema { return new }
        return try await backend.replaceSchema(new)
    }

    /// `promoteSchema()` on any engine: the development schema becomes production's, with its
    /// roles and grants; production keeps its own role assignments. Add-only against what
    /// production has.
    ///
    /// ```swift
    /// let production = try await development.promoteSchemaToProduction()
    /// ```
    @discardableResult
    public func promoteSchemaToProduction() async throws(CirrusError) -> Schema {
        guard backend.environment == .development else {
            throw CirrusError(.invalidArguments, "promote from the development container; this one is production")
        }
        return try await backend.promoteSchema()
    }

    /// The schema `text` describes in `environment`, its names checked.
    package static func parseImport(_ text: String, environment: Environment) throws(CirrusError) -> Schema {
        let new: Schema
        do {
            new = try Schema(schemaLanguage: text, environment: environment)
        } catch {
            throw CirrusError(.invalidArguments, "schema: \(error)")
        }
        try validateNames(new)
        return new
    }

    /// `new` as it replaces `current`: add-only (serverRejectedRequest), the `Users` type kept,
    /// and this environment's role assignments kept for the roles `new` still has (assignments
    /// are not part of the text). Every engine imports through this.
    public static func schemaToImport(_ new: Schema, over current: Schema) throws(CirrusError) -> Schema {
        var new = new
        if new.recordTypes[Schema.usersRecordType] == nil {
            new.recordTypes[Schema.usersRecordType] =
                current.recordTypes[Schema.usersRecordType] ?? RecordTypeSchema(name: Schema.usersRecordType)
        }
        try checkAddOnly(from: current, to: new)
        new.roleAssignments = assignments(current.roleAssignments, keeping: new.roles)
        return new
    }

    /// The development schema `development` as production's when production has `production`
    /// (nil: none yet): environment production, roles and grants from development, production's
    /// own assignments kept; add-only against production's. Every engine promotes through this.
    public static func schemaToPromote(_ development: Schema, over production: Schema?) throws(CirrusError) -> Schema {
        var schema = development
        schema.environment = .production
        schema.roleAssignments = [:]
        if let production {
            try checkAddOnly(from: production, to: schema)
            schema.roleAssignments = assignments(production.roleAssignments, keeping: schema.roles)
        }
        return schema
    }

    /// `assignments` without the roles not in `roles` (and without users left with none).
    package static func assignments(
        _ assignments: [String: Set<String>], keeping roles: Set<String>
    ) -> [String: Set<String>] {
        assignments.mapValues { $0.intersection(roles) }.filter { !$0.value.isEmpty }
    }

    package static func validateNames(_ s: Schema) throws(CirrusError) {
        for t in s.sortedRecordTypes {
            do {
                try Validation.validateRecordTypeName(t.name)
                for f in t.sortedFields { try Validation.validateFieldName(f.name) }
            } catch {
                throw CirrusError(.invalidArguments, "schema: \(error)")
            }
        }
    }

    /// Throws serverRejectedRequest naming the first type or field `new` removes or retypes.
    package static func checkAddOnly(from old: Schema, to new: Schema) throws(CirrusError) {
        for t in old.sortedRecordTypes {
            guard let n = new.recordTypes[t.name] else {
                throw CirrusError(
                    .serverRejectedRequest,
                    "record type \(t.name) would be removed; types are never removed once they exist")
            }
            for f in t.sortedFields {
                guard let nf = n.fields[f.name] else {
                    throw CirrusError(
                        .serverRejectedRequest,
                        "field \(t.name).\(f.name) would be removed; fields are never removed once they exist")
                }
                if nf.type != f.type {
                    throw CirrusError(
                        .serverRejectedRequest,
                        "field \(t.name).\(f.name) would change type from \(f.type) to \(nf.type); fields are never "
                            + "retyped"
                    )
                }
            }
        }
    }
}

// The schema lifecycle of a container on PostgreSQL, behind `Container.applySchema(_:)` and
// `Container.promoteSchemaToProduction()`: the façade checks a new schema against the current
// one with the embedded engine's rules (Container.schemaToImport / schemaToPromote: add-only,
// the Users type kept, role assignments per environment), then the schema becomes DDL in one
// transaction under the namespace's advisory lock, where the add-only rule is checked again
// against the stored schema (another process may have changed it since).

import CirrusFacade
import RecordModel

extension PostgresContainer {
    /// Applies `schema` (checked by `Container.applySchema(_:)`) and makes it every database's.
    public func replaceSchema(_ schema: Schema) async throws(CirrusError) -> Schema {
        try await apply(schema: schema)
        return self.schema
    }

    /// Changes the container's schema by `body`, given the schema as stored (under the
    /// namespace's lock), in one transaction (`Container.changeSecurityRoles(_:)`).
    public func updateSchema(
        _ body: @escaping @Sendable (Schema) throws(CirrusError) -> Schema
    ) async throws(CirrusError) -> Schema {
        do {
            try await root.update { old in
                do throws(CirrusError) {
                    return try body(old)
                } catch {
                    throw CirrusError(
                        CirrusError.Code(rawValue: error.code.rawValue) ?? .internalError, error.message)
                }
            }
        } catch {
            throw error
        }
        publish(await root.schema)
        return schema
    }

    /// Makes this development container's schema the production environment's: its tables in
    /// the production namespace are created or evolved in one transaction; production keeps its
    /// role assignments. A production container open elsewhere reads it with `reloadSchema()`.
    public func promoteSchema() async throws(CirrusError) -> Schema {
        guard environment == .development else {
            throw CirrusError(.invalidArguments, "promote from the development container; this one is production")
        }
        let production = root.sibling(
            for: PostgresTenant(containerID: containerID, environment: .production, database: .public))
        try await production.reloadSchema()
        let stored = await production.schema
        let promoted = try Container.schemaToPromote(schema, over: stored)
        if promoted == stored { return stored }
        try await production.apply(schema: promoted)
        return await production.schema
    }
}

// PostgresContainer+Transfer: import and export of a database's records on PostgreSQL — what
// `cirrus import --postgres` and `cirrus export --postgres` run (the container directory's
// `Container.importFile` / `exportRecords`). The work is the tenant's store's
// (PostgresStore+Import.swift: COPY in one transaction; export in commit order).

import CirrusFacade
import CirrusIO
import RecordModel

extension PostgresContainer {
    /// The store of the database `scope`, with the container's current schema.
    func store(for scope: Database.Scope) async -> PostgresStore {
        guard let db = database(scope, as: .user(scope.owner)) as? PostgresDatabase else { return root }
        return await current(db.store)
    }

    /// Imports a file (Web Services JSON Lines, gzip JSON Lines or a property list) into the
    /// database `scope` as the container's administrator, in one transaction through `COPY`
    /// (see `PostgresStore.importFile`). Records without a zone go into `zone` when given; the
    /// rejected ones are in the summary with their line and reason.
    ///
    /// ```swift
    /// let done = try await container.postgres!.importFile("cities.jsonl", into: .public)
    /// print(done.summary.records, done.summary.recordsPerSecond, done.rejections)
    /// ```
    public func importFile(
        _ path: String, into scope: Database.Scope, zone: ZoneID? = nil, options: ImportOptions = ImportOptions()
    ) async throws -> PostgresImportSummary {
        let store = await store(for: scope)
        let summary = try await store.importFile(path, zone: zone, options: options)
        publish(await store.schema)
        return summary
    }

    /// Writes the records of the database `scope` (of `type`, in `zone`, when given) as Web
    /// Services JSON Lines, one `write` call per line, in commit order; returns the count.
    @discardableResult
    public func exportRecords(
        from scope: Database.Scope, type: String? = nil, zone: ZoneID? = nil, write: (String) throws -> Void
    ) async throws -> Int {
        let store = await store(for: scope)
        return try await store.exportRecords(type: type, zone: zone) { r in
            var line = ""
            r.webServicesJSON.write(to: &line)
            line += "\n"
            try write(line)
        }
    }
}

// Bulk import and export of a tenant's records: `cirrus import --postgres` / `cirrus export
// --postgres`, `PostgresContainer.importFile` / `exportRecords`.
//
// An import is the container administrator's save of many records (as the embedded engine's
// `Container.importRecords`): no grant checks, the system fields the input carries kept (creation
// and modification dates, creator, change tag; missing ones filled in as a save fills them),
// development's schema grown by the records (DDL in the import's transaction), production's
// refusing unknown types and fields, custom zones created as needed (private databases only),
// a record id at most once per import. The whole import is one transaction — a failure (or a
// killed process) leaves the tenant as it was — and one request of the tenant: one sequence
// number, so its records' change history is one step.
//
// Per batch (the reader's, 4 096 records by default):
//   1. checks in Swift (duplicates, validation, schema, zones), DDL when the schema grows;
//   2. the names' rows, locked FOR UPDATE: which records exist (and with which type);
//   3. new records: `COPY … FROM STDIN` (text format) into the type's table and into
//      `cirrus_names`, then one statement dropping their tombstones and adding to the count;
//   4. records that exist: the batched upsert (PostgresStore+Batch.swift), after reading them;
//   5. records holding deleteSelf references or assets: the item-by-item save (their rules
//      read other rows), each under a savepoint, so a refused one is reported and skipped.
//
// Export reads a tenant's records zone by zone, each in commit order (`cirrus_names.seq`, then
// the record id), a page of 1 000 at a time, through keyset positions on the names' index
// (tenant, zone_name, seq, …): memory follows the page, not the data.

import CirrusFacade
import CirrusIO
import Foundation
import Indexes
import Logging
import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO
import RecordModel

/// One record of an import refused, and why.
public struct PostgresImportRejection: Sendable {
    /// The record's position in the batch it came in.
    public var index: Int
    /// Why it was refused.
    public var error: CirrusError
}

/// An import under way (``PostgresStore/importing(_:)``): hand it batches of records.
public final class PostgresImporter: Sendable {
    let state: NIOLockedValueBox<State>
    let connection: PostgresConnection
    let store: PostgresStoreSnapshot

    struct State: Sendable {
        var schema: Schema
        var tables: [String: TableLayout]
        var seen = Set<RecordID>()
        var zones = Set<String>()
        var imported = 0
        var sequence: Int64 = 0
        var grown = false
        /// The tenant held no record when the import began: with the import's own duplicates
        /// rejected, every record is new and no name needs looking up.
        var startedEmpty = false
        /// Tables whose emptiness was checked: empty ones had their secondary indexes dropped,
        /// to be made again after the last batch (``finish()``), by table.
        var checked = Set<String>()
        var deferred: [String: [String]] = [:]
    }

    init(connection: PostgresConnection, store: PostgresStoreSnapshot, schema: Schema, tables: [String: TableLayout]) {
        self.connection = connection
        self.store = store
        self.state = NIOLockedValueBox(State(schema: schema, tables: tables))
    }

    /// Records imported so far (not counting refused ones).
    public var imported: Int { state.withLockedValue { $0.imported } }

    /// Imports `records` (in this order); returns the refused ones by position in `records`.
    /// Throws (and the whole import is rolled back) when PostgreSQL fails.
    public func add(_ records: [Record]) async throws(CirrusError) -> [PostgresImportRejection] {
        do {
            let r = try await addBatch(records)
            Deadline.answered()
            return r
        } catch {
            throw PostgresStore.mapError(error, what: "importing records", address: store.address)
        }
    }
}

/// What an import needs of its store, read once at its start.
struct PostgresStoreSnapshot: Sendable {
    var tenant: PostgresTenant
    var address: String
    var citus: Bool
    var logger: Logger
    var now: Timestamp
    var registry: PreparedSQL.Registry
}

extension PostgresStore {
    /// Runs one import into this tenant: `body` hands the importer batches; when it returns, the
    /// import commits (the store then follows the schema it grew), and when it throws, nothing
    /// of it remains. Every batch's answer moves the store's deadline.
    ///
    /// ```swift
    /// let n = try await store.importing { importer in
    ///     for batch in batches { _ = try await importer.add(batch) }
    ///     return importer.imported
    /// }
    /// ```
    public func importing<T: Sendable>(
        _ body: @escaping @Sendable (PostgresImporter) async throws -> T
    ) async throws(CirrusError) -> T {
        if layout == .hashPartitioned {
            throw CirrusError(
                .invalidArguments, "imports into a hash-partitioned layout are not supported (use records/modify)",
                location: address)
        }
        // A private database's records may bring custom zones (a container's stores have the
        // zones table already; a store used on its own may not).
        if case .private = tenant.database { try await prepareZones() }
        let snapshot = PostgresStoreSnapshot(
            tenant: tenant, address: address, citus: citus, logger: logger, now: clock(), registry: statements)
        let schema = self.schema
        let tables = self.tables
        // An import is the administrator's long transaction: its statements (a large COPY, the
        // index builds at its end) may run longer than the store's deadline, which guards
        // interactive requests. It waits up to an hour for each answer, and its session has no
        // statement_timeout (set in its transaction).
        let (value, grown) = try await run("importing into \(tenant.key)", timeout: max(timeout, .seconds(3600))) {
            client in
            try await client.withTransaction(logger: snapshot.logger) { conn in
                let importer = PostgresImporter(connection: conn, store: snapshot, schema: schema, tables: tables)
                let v = try await body(importer)
                try await importer.finish()
                let s = importer.state.withLockedValue { $0.grown ? $0.schema : nil }
                return (v, s)
            }
        }
        if let grown { setSchema(grown) }
        return value
    }

    /// Imports a file of Web Services JSON Lines (gzip accepted) or a property list as one import
    /// (see ``importing(_:)``): read on a thread of its own in batches of `options.batchSize`,
    /// each batch imported as it arrives while the reader parses the next two (a bounded queue:
    /// memory follows three batches, not the file). Records without a zone go into `zone` when
    /// given. Rejected records are reported in the summary with their line and reason.
    public func importFile(
        _ path: String, zone: ZoneID? = nil, options: ImportOptions = ImportOptions()
    ) async throws -> PostgresImportSummary {
        let start = DispatchTime.now().uptimeNanoseconds
        let (stream, continuation) = AsyncStream.makeStream(of: [(line: Int, record: Record)].self)
        let queue = ImportQueue(depth: 2)
        let outcome = NIOLockedValueBox<Result<ImportSummary, any Error>?>(nil)
        let reader = Thread {
            let r = Result {
                try RecordTransfer.readRecords(file: path, options: options) { batch in
                    // The import's rejections are counted when it ends (it runs behind the reader).
                    try queue.enter()
                    continuation.yield(batch)
                    return []
                }
            }
            outcome.withLockedValue { $0 = r }
            continuation.finish()
        }
        reader.start()
        let refused: [(line: Int, reason: String)]
        do {
            refused = try await importing { importer in
                var refused: [(line: Int, reason: String)] = []
                for await batch in stream {
                    let records = batch.map { item -> Record in
                        var r = item.record
                        if let zone, r.recordID.zoneID.isDefaultZone { r.recordID.zoneID = zone }
                        return r
                    }
                    refused += try await importer.add(records).map { (batch[$0.index].line, "\($0.error)") }
                    queue.leave()
                }
                // The reader could not read the file: nothing of it stays.
                if case .failure(let e)? = outcome.withLockedValue({ $0 }) { throw e }
                return refused
            }
        } catch {
            // Stop the reader (it may wait for room in the queue) and let it end.
            queue.fail()
            for await _ in stream {}
            if case .failure(let e)? = outcome.withLockedValue({ $0 }), !(e is ImportQueue.Stopped) { throw e }
            throw error
        }
        guard case .success(var s)? = outcome.withLockedValue({ $0 }) else {
            throw CirrusError(.internalError, "the reader of \(path) ended without a summary", location: address)
        }
        s.records -= refused.count
        s.rejected += refused.count
        s.seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let all =
            s.rejections.map { (line: $0.line, text: $0.description) }
            + refused.map { (line: $0.line, text: "\(path):\($0.line): \($0.reason)") }
        return PostgresImportSummary(
            summary: s,
            rejections: all.sorted { $0.line < $1.line }.prefix(options.maximumReportedRejections).map(\.text))
    }
}

/// What ``PostgresStore/importFile(_:zone:options:)`` did: the counts (records imported,
/// rejected, bytes read, seconds) and the rejections, each `file:line: reason`, in line order
/// (at most `ImportOptions.maximumReportedRejections`).
public struct PostgresImportSummary: Sendable {
    /// Records imported and rejected, bytes read, seconds (its own `rejections` are the reader's
    /// only: the file's lines that did not parse).
    public var summary: ImportSummary
    /// Every reported rejection — the reader's and the import's — as `file:line: reason`.
    public var rejections: [String]
}

extension PostgresImporter {
    /// A write context of the import's transaction over `tables`.
    func context(_ st: State) -> WriteContext {
        var ctx = WriteContext(
            conn: connection, logger: store.logger, tables: st.tables, namespace: store.tenant.namespace,
            tenant: store.tenant.key, environment: store.tenant.environment, now: store.now, user: nil,
            partitioned: false)
        ctx.registry = store.registry
        ctx.sequence = st.sequence
        ctx.administrative = true
        return ctx
    }

    /// `given` as an administrator stores it over `server` (the embedded engine's rules): the
    /// system fields it carries are kept.
    static func stored(_ given: Record, over server: Record?, now: Timestamp, tag: String) -> Record {
        var r = given
        r.creationDate = given.creationDate ?? server?.creationDate ?? now
        r.creatorUserRecordID = given.creatorUserRecordID ?? server?.creatorUserRecordID
        r.modificationDate = given.modificationDate ?? now
        r.recordChangeTag = given.recordChangeTag ?? (tag == server?.recordChangeTag ? tag + "." : tag)
        return r
    }

    func addBatch(_ input: [Record]) async throws -> [PostgresImportRejection] {
        // The tenant is the database: ids are kept in the API's form (the default zone owner).
        let records = input.map { r -> Record in
            var r = r
            r.recordID.zoneID.ownerName = ZoneID.defaultOwnerName
            return r
        }
        var st = state.withLockedValue { $0 }
        let tenant = store.tenant
        let namespace = tenant.namespace
        var rejected: [PostgresImportRejection] = []
        func reject(_ i: Int, _ e: CirrusError) {
            var e = e
            if e.recordID == nil { e.recordID = records[i].recordID }
            rejected.append(PostgresImportRejection(index: i, error: e))
        }
        if st.sequence == 0 {
            // The import is one request of the tenant: one sequence number (its counter row stays
            // locked to the commit), and the search path COPY's table names resolve in.
            var b = PostgresBindings()
            b.append(namespace)
            for try await _ in try await connection.query(
                PostgresQuery(
                    unsafeSQL:
                        "SELECT set_config('search_path', quote_ident($1) || ',' || current_setting('search_path'), true), "
                        + "set_config('statement_timeout', '0', true), "
                        // Index builds (GIN above all) are faster in memory; PostgreSQL's 64 MB default
                        // made the alternate-names GIN of 235 000 cities a third of the import.
                        + "set_config('maintenance_work_mem', '256MB', true)",
                    binds: b), logger: store.logger)
            {}
            st.sequence = try await context(st).nextSequence()
            var t = PostgresBindings()
            t.append(tenant.key)
            for try await e in try await connection.query(
                PostgresQuery(
                    unsafeSQL: "SELECT NOT EXISTS (SELECT 1 FROM \(SQLName.qualified(namespace, "cirrus_names")) "
                        + "WHERE tenant = $1)", binds: t), logger: store.logger
            ).decode(Bool.self) { st.startedEmpty = e }
            // The names' secondary index (change history by sequence) is built at the end too when
            // the container has no name at all.
            if st.checked.insert("cirrus_names").inserted {
                var empty = false
                for try await e in try await connection.query(
                    PostgresQuery(
                        unsafeSQL: "SELECT NOT EXISTS (SELECT 1 FROM \(SQLName.qualified(namespace, "cirrus_names")))"),
                    logger: store.logger
                ).decode(Bool.self) { empty = e }
                if empty {
                    try await connection.query(
                        PostgresQuery(
                            unsafeSQL: "DROP INDEX IF EXISTS \(SQLName.qualified(namespace, "cirrus_names_seq"))"),
                        logger: store.logger)
                    st.deferred["cirrus_names"] = [
                        "CREATE INDEX IF NOT EXISTS cirrus_names_seq ON \(SQLName.qualified(namespace, "cirrus_names")) "
                            + "(tenant, zone_name, seq, zone_owner, record_name)"
                    ]
                }
            }
        }
        let tag = String(st.sequence, radix: 36)
        // 1. Checks in Swift.
        var accepted: [Int] = []
        for (i, r) in records.enumerated() {
            guard st.seen.insert(r.recordID).inserted else {
                reject(i, CirrusError(.invalidArguments, "the record appears more than once in this import"))
                continue
            }
            do {
                try r.validate()
            } catch {
                reject(i, CirrusError(.invalidArguments, error.message))
                continue
            }
            if case .public = tenant.database, !r.recordID.zoneID.isDefaultZone {
                reject(
                    i,
                    CirrusError(
                        .zoneNotFound,
                        "zone \"\(r.recordID.zoneID.zoneName)\": the public database has only the default zone"))
                continue
            }
            accepted.append(i)
        }
        if tenant.environment == .development {
            let grown = PostgresStore.grown(st.schema, by: accepted.map { records[$0] })
            if grown != st.schema {
                let base = st.schema
                let adding = accepted.map { records[$0] }
                let s = try await PostgresStore.applyDDL(
                    connection, namespace: namespace, citus: store.citus, logger: store.logger, address: store.address
                ) { old in PostgresStore.grown(old ?? base, by: adding) }
                st.schema = s
                st.tables = Dictionary(
                    uniqueKeysWithValues: s.recordTypes.values.map {
                        ($0.name, TableLayout(namespace: namespace, schema: $0))
                    })
                st.grown = true
            }
        }
        accepted = accepted.filter { i in
            let r = records[i]
            guard let layout = st.tables[r.recordType] else {
                reject(
                    i,
                    CirrusError(
                        .serverRejectedRequest,
                        "Cannot create new type \(r.recordType) in \(tenant.environment.rawValue) schema"))
                return false
            }
            // The first unknown field by name (sorted only when there is one).
            if let name = r.fields.keys.filter({ !layout.fieldNames.contains($0) }).min(by: { compareUTF8($0, $1) < 0 })
            {
                reject(
                    i,
                    tenant.environment == .production
                        ? CirrusError(
                            .serverRejectedRequest,
                            "Cannot create new field '\(name)' of type \(r.recordType) in production schema")
                        : CirrusError(
                            .invalidArguments,
                            "field '\(name)': an empty list does not say its type; save a value first"))
                return false
            }
            return true
        }
        // Custom zones of a private database are created as needed.
        let zones = Set(accepted.map { records[$0].recordID.zoneID }.filter { !$0.isDefaultZone }.map(\.zoneName))
            .subtracting(st.zones)
        if !zones.isEmpty {
            var b = PostgresBindings()
            b.append(tenant.key)
            b.append(String(st.sequence))
            b.append(zones.sorted())
            for try await _ in try await connection.query(
                PostgresQuery(
                    unsafeSQL:
                        "INSERT INTO \(SQLName.qualified(namespace, "cirrus_zones")) (tenant, zone_name, created_seq) "
                        + "SELECT $1, z, $2::bigint FROM unnest($3::text[]) AS z ON CONFLICT DO NOTHING", binds: b),
                logger: store.logger)
            {}
            st.zones.formUnion(zones)
        }
        let ctx = context(st)
        // 2. The names, locked.
        var serverTypes: [RecordID: String] = [:]
        if !accepted.isEmpty && !st.startedEmpty {
            var b = PostgresBindings()
            b.append(tenant.key)
            let sql = WriteContext.lookup(
                "zone_name, zone_owner, record_name, record_type", from: SQLName.qualified(namespace, "cirrus_names"),
                accepted.map { records[$0].recordID }, lock: true, &b)
            for row in try await ctx.planned(sql, b) {
                let (zone, owner, name, type) = try row.decode((String, String, String, String).self)
                serverTypes[RecordID(recordName: name, zoneID: ZoneID(zoneName: zone, ownerName: owner))] = type
            }
        }
        var special: [Int] = []
        var existing: [String: [Int]] = [:]
        var fresh: [String: [Int]] = [:]
        for i in accepted {
            let r = records[i]
            if let type = serverTypes[r.recordID], type != r.recordType {
                reject(
                    i,
                    CirrusError(
                        .constraintViolation,
                        "a \(type) record with this name exists; its type cannot change to \(r.recordType)"))
            } else if !WriteContext.deleteSelfTargets(r).isEmpty || !RecordRow.assetHashes(r).isEmpty {
                special.append(i)
            } else if serverTypes[r.recordID] != nil {
                existing[r.recordType, default: []].append(i)
            } else {
                fresh[r.recordType, default: []].append(i)
            }
        }
        var imported = 0
        // 3. New records: COPY into their tables and into the names.
        var newIDs: [RecordID] = []
        var names: [UInt8] = []
        var tenantText: [UInt8] = []
        CopyText.escape(tenant.key, into: &tenantText)
        for (type, indices) in fresh.sorted(by: { $0.key < $1.key }) {
            guard let layout = st.tables[type] else { continue }
            try await deferIndexes(layout, &st)
            let columns = BatchColumns(layout)
            var text: [UInt8] = []
            var ok: [Int] = []
            for i in indices {
                let r = Self.stored(records[i], over: nil, now: store.now, tag: tag)
                do {
                    CopyText.line(try columns.row(r, copy: true), columns, tenant: tenantText, into: &text)
                    ok.append(i)
                } catch {
                    reject(i, error)
                }
            }
            if ok.isEmpty { continue }
            try await copy(layout.table, columns: columns.columns.map { Self.unquoted($0.0) }, text)
            for i in ok {
                let id = records[i].recordID
                newIDs.append(id)
                for (k, v) in [tenant.key, id.zoneID.zoneName, id.zoneID.ownerName, id.recordName, type].enumerated() {
                    if k > 0 { names.append(0x09) }
                    CopyText.escape(v, into: &names)
                }
                names += "\t\(st.sequence)\n".utf8
            }
            imported += ok.count
        }
        if !newIDs.isEmpty {
            try await copy(
                "cirrus_names", columns: ["tenant", "zone_name", "zone_owner", "record_name", "record_type", "seq"],
                names)
            var b = PostgresBindings()
            b.append(tenant.key)
            let keys = WriteContext.keys(newIDs, &b)
            b.append(String(newIDs.count))
            _ = try await ctx.prepared(
                "WITH t AS (DELETE FROM \(SQLName.qualified(namespace, "cirrus_tombstones")) WHERE \(keys)) "
                    + "UPDATE \(SQLName.qualified(namespace, "cirrus_tenants")) SET records = records + "
                    + "$\(b.count)::bigint WHERE tenant = $1", b)
        }
        // 4. Records that exist: read, then the batched upsert.
        if !existing.isEmpty {
            var rowsByType: [String: BatchRows] = [:]
            var columnsByType: [String: BatchColumns] = [:]
            var oldIDs: [RecordID] = []
            var unreferencing: [RecordID] = []
            for (type, indices) in existing.sorted(by: { $0.key < $1.key }) {
                guard let layout = st.tables[type] else { continue }
                var servers: [RecordID: Record] = [:]
                var b = PostgresBindings()
                b.append(tenant.key)
                let sql = WriteContext.lookup(
                    "data", from: layout.qualifiedTable, indices.map { records[$0].recordID }, lock: true, &b)
                for row in try await ctx.planned(sql, b) {
                    let data = try row.decode(ByteBuffer.self)
                    let r = try RecordRow.decode(Array(data.readableBytesView))
                    servers[r.recordID] = r
                }
                let columns = BatchColumns(layout)
                var rows = BatchRows(width: columns.inputs.count)
                for i in indices {
                    let server = servers[records[i].recordID]
                    let r = Self.stored(records[i], over: server, now: store.now, tag: tag)
                    do {
                        rows.append(try columns.row(r))
                        oldIDs.append(r.recordID)
                        if let server, !WriteContext.deleteSelfTargets(server).isEmpty {
                            unreferencing.append(r.recordID)
                        }
                        imported += 1
                    } catch {
                        reject(i, error)
                    }
                }
                rowsByType[type] = rows
                columnsByType[type] = columns
            }
            try await ctx.writeBatch(
                rowsByType, columnsByType, newIDs: [], newTypes: [], oldIDs: oldIDs, unreferencing: unreferencing,
                newCount: 0)
        }
        // 5. Records with deleteSelf references or assets: item by item, each under a savepoint.
        for i in special {
            try await ctx.exec("SAVEPOINT cirrus_import")
            do {
                _ = try await ctx.save(records[i], policy: .allKeys, tag: tag)
                try await ctx.exec("RELEASE SAVEPOINT cirrus_import")
                imported += 1
            } catch {
                try await ctx.exec("ROLLBACK TO SAVEPOINT cirrus_import")
                reject(i, PostgresStore.itemError(error, records[i].recordID))
            }
        }
        st.imported += imported
        let final = st
        state.withLockedValue { $0 = final }
        return rejected.sorted { $0.index < $1.index }
    }

    /// `COPY table (columns) FROM STDIN` of `text` (lines in COPY's text format), in pieces of
    /// 1 MiB (COPY's data messages need not end at a line's end).
    func copy(_ table: String, columns: [String], _ bytes: [UInt8]) async throws {
        try await connection.copyFrom(table: table, columns: columns, logger: store.logger) { writer in
            var start = 0
            while start < bytes.count {
                let end = min(bytes.count, start + (1 << 20))
                try await writer.write(ByteBuffer(bytes: bytes[start..<end]))
                start = end
            }
        }
        Deadline.answered()
    }

    /// A bulk load into an empty table is faster without its secondary indexes, built once at
    /// the end (PostgreSQL's own advice for bulk loads): when `layout`'s table holds no row at
    /// all (a new container's, or a type no tenant has used), its B-tree, GIN and GiST indexes
    /// are dropped in the import's transaction and made again by ``finish()`` before the
    /// commit. The drop locks the table until then (other sessions' reads of the empty table
    /// wait for the import); a failed import rolls the drop back with the rest.
    func deferIndexes(_ layout: TableLayout, _ st: inout State) async throws {
        guard st.checked.insert(layout.table).inserted else { return }
        var empty = false
        for try await e in try await connection.query(
            PostgresQuery(unsafeSQL: "SELECT NOT EXISTS (SELECT 1 FROM \(layout.qualifiedTable))"), logger: store.logger
        ).decode(Bool.self) { empty = e }
        guard empty else { return }
        let indexes = layout.indexes.sorted { $0.key < $1.key }
        for (name, _) in indexes {
            try await connection.query(
                PostgresQuery(unsafeSQL: "DROP INDEX IF EXISTS \(SQLName.qualified(layout.namespace, name))"),
                logger: store.logger)
        }
        st.deferred[layout.table] = indexes.map(\.value)
    }

    /// Makes the indexes ``deferIndexes(_:_:)`` dropped (after the last batch, in the import's
    /// transaction).
    func finish() async throws {
        let deferred = state.withLockedValue { s in
            defer { s.deferred = [:] }
            return s.deferred
        }
        for (_, statements) in deferred.sorted(by: { $0.key < $1.key }) {
            for sql in statements {
                try await connection.query(PostgresQuery(unsafeSQL: sql), logger: store.logger)
                Deadline.answered()
            }
        }
    }

    /// A column name without its double quotes (COPY's column list quotes them itself; the names
    /// the layout makes hold no quote).
    static func unquoted(_ name: String) -> String {
        guard name.hasPrefix("\""), name.hasSuffix("\""), name.count >= 2 else { return name }
        return String(name.dropFirst().dropLast()).replacingOccurrences(of: "\"\"", with: "\"")
    }
}

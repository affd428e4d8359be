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
// Per batch (the reader's, 4 096 records by default; the steps: PostgresImporter+Batch.swift):
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
    /// The store; only its constants are read through it.
    let store: PostgresStore
    /// Whether the server is Citus (the store's, as it was at the import's start).
    let citus: Bool
    /// The time of every record the import writes.
    let now: Timestamp

    var tenant: PostgresTenant { store.tenant }
    var address: String { store.address }
    var logger: Logger { store.logger }
    var registry: PreparedSQL.Registry { store.statements }
    /// What the import's write contexts share.
    var scope: TenantScope { store.scope }
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
            store: self, citus: citus, now: clock())
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
        var ctx = WriteContext(conn: connection, scope: store.scope, tables: st.tables, now: store.now, user: nil)
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

    /// Imports one batch (see the file header's steps; `ImportBatch` holds them) and returns
    /// the refused records by position in `input`.
    func addBatch(_ input: [Record]) async throws -> [PostgresImportRejection] {
        // The tenant is the database: ids are kept in the API's form (the default zone owner).
        let records = input.map { r -> Record in
            var r = r
            r.recordID.zoneID.ownerName = ZoneID.defaultOwnerName
            return r
        }
        var batch = ImportBatch(importer: self, records: records, st: state.withLockedValue { $0 })
        if batch.st.sequence == 0 { try await batch.begin() }
        let tag = String(batch.st.sequence, radix: 36)
        // 1. Checks in Swift.
        var accepted = batch.checkRecords()
        if store.tenant.environment == .development { try await batch.growSchema(accepted) }
        accepted = batch.checkSchema(accepted)
        // Custom zones of a private database are created as needed.
        try await batch.createZones(accepted)
        let ctx = context(batch.st)
        // 2. The names, locked.
        let serverTypes = try await batch.lockNames(accepted, ctx)
        let (special, existing, fresh) = batch.partition(accepted, serverTypes)
        // 3. New records: COPY into their tables and into the names.
        try await batch.copyNew(fresh, ctx, tag: tag)
        // 4. Records that exist: read, then the batched upsert.
        try await batch.upsertExisting(existing, ctx, tag: tag)
        // 5. Records with deleteSelf references or assets: item by item, each under a savepoint.
        try await batch.saveSpecial(special, ctx, tag: tag)
        batch.st.imported += batch.imported
        let final = batch.st
        state.withLockedValue { $0 = final }
        return batch.rejected.sorted { $0.index < $1.index }
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

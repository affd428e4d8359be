// WriteContext+BatchSave: the steps of a batched save (steps 1–4 of PostgresStore+Batch.swift's
// header) on one value holding the request's state — its items, each one's outcome once known,
// and the rows staged for the one statement that writes them all (`WriteContext.writeBatch`).

import CirrusFacade
import Indexes
import NIOCore
import PostgresNIO
import RecordModel

/// One batched save under way (`WriteContext.saveBatch`): its items, each one's outcome once
/// known (nil: still to be decided), and what step 5 writes.
struct BatchSave {
    /// One save of the request: the record, its policy, and whether the server's fields it
    /// lacks are kept.
    typealias Item = (record: Record, policy: PostgresSavePolicy, merging: Bool)
    /// What one save did: the record as stored and the server's version it replaced.
    typealias Outcome = Result<(stored: Record, server: Record?), CirrusError>

    /// The request's transaction.
    let ctx: WriteContext
    /// The saves, in request order.
    let items: [Item]
    /// The change tag every record of the request gets.
    let tag: String
    /// Each item's outcome, by position in `items`.
    var outcome: [Outcome?]
    /// The rows to upsert, per record type.
    var rowsByType: [String: BatchRows] = [:]
    /// How each record type's rows are written.
    var columnsByType: [String: BatchColumns] = [:]
    /// The records created (their names claimed, their tombstones dropped), in order.
    var newIDs: [RecordID] = []
    /// The record types of `newIDs`.
    var newTypes: [String] = []
    /// The records replaced (their names stamped with the request's sequence).
    var oldIDs: [RecordID] = []
    /// The replaced records whose old versions held deleteSelf references.
    var unreferencing: [RecordID] = []
    /// How many records the request adds to the tenant's count.
    var newCount = 0

    /// A batch of `items` saved with change tag `tag` in `ctx`'s transaction.
    init(ctx: WriteContext, items: [Item], tag: String) {
        self.ctx = ctx
        self.items = items
        self.tag = tag
        self.outcome = Array(repeating: nil, count: items.count)
    }

    /// Fails item `i` with `e`.
    mutating func fail(_ i: Int, _ e: CirrusError) { outcome[i] = .failure(e) }

    /// Step 1: the items' custom zones exist (locked FOR SHARE, so a deletion of the zone waits);
    /// an item of a missing zone fails with zoneNotFound.
    mutating func checkZones() async throws {
        let custom = Set(items.map(\.record.recordID.zoneID).filter { !$0.isDefaultZone }.map(\.zoneName))
        if custom.isEmpty { return }
        var b = PostgresBindings()
        b.append(ctx.scope.tenant)
        b.append(custom.sorted())
        var found = Set<String>()
        for row in try await ctx.prepared(
            "SELECT zone_name FROM \(SQLName.qualified(ctx.scope.namespace, "cirrus_zones")) WHERE tenant = $1 AND "
                + "zone_name = ANY($2::text[]) FOR SHARE", b)
        {
            found.insert(try row.decode(String.self))
        }
        for (i, item) in items.enumerated() {
            let z = item.record.recordID.zoneID
            if !z.isDefaultZone && !found.contains(z.zoneName) {
                fail(
                    i,
                    CirrusError(
                        .zoneNotFound, "zone \"\(z.zoneName)\" does not exist", recordID: item.record.recordID))
            }
        }
    }

    /// The checks a save makes before it reads the server (`WriteContext.save`): the record is
    /// valid, and its type and fields are the schema's.
    mutating func checkItems() {
        for (i, item) in items.enumerated() where outcome[i] == nil {
            let given = item.record
            let id = given.recordID
            do {
                try given.validate()
            } catch {
                fail(i, CirrusError(.invalidArguments, error.message, recordID: id))
                continue
            }
            guard let layout = ctx.tables[given.recordType] else {
                fail(
                    i,
                    CirrusError(
                        .serverRejectedRequest,
                        "Cannot create new type \(given.recordType) in \(ctx.scope.environment.rawValue) schema",
                        recordID: id))
                continue
            }
            // The first unknown field by name (sorted only when there is one).
            if let name = given.fields.keys.filter({ !layout.fieldNames.contains($0) }).min(by: {
                compareUTF8($0, $1) < 0
            }) {
                fail(
                    i,
                    ctx.scope.environment == .production
                        ? CirrusError(
                            .serverRejectedRequest,
                            "Cannot create new field '\(name)' of type \(given.recordType) in production schema",
                            recordID: id)
                        : CirrusError(
                            .invalidArguments,
                            "field '\(name)': an empty list does not say its type; save a value first",
                            recordID: id))
            }
        }
    }

    /// Step 2: the names of the items at `asked`, locked: which exist, and with which type.
    func lockNames(_ asked: [Int]) async throws -> [RecordID: String] {
        var serverTypes: [RecordID: String] = [:]
        if asked.isEmpty { return serverTypes }
        var b = PostgresBindings()
        b.append(ctx.scope.tenant)
        let sql = WriteContext.lookup(
            "zone_name, zone_owner, record_name, record_type",
            from: SQLName.qualified(ctx.scope.namespace, "cirrus_names"),
            asked.map { items[$0].record.recordID }, lock: true, &b)
        for row in try await ctx.planned(sql, b) {
            let (zone, owner, name, type) = try row.decode((String, String, String, String).self)
            serverTypes[RecordID(recordName: name, zoneID: ZoneID(zoneName: zone, ownerName: owner))] = type
        }
        return serverTypes
    }

    /// Step 3: the current rows of the names that exist (`serverTypes`), locked, per type; an
    /// item of another type than its name's fails with constraintViolation.
    mutating func readServers(_ asked: [Int], _ serverTypes: [RecordID: String]) async throws -> [RecordID: Record] {
        var existing: [String: [RecordID]] = [:]
        for i in asked {
            let r = items[i].record
            guard let type = serverTypes[r.recordID] else { continue }
            if type != r.recordType {
                fail(
                    i,
                    CirrusError(
                        .constraintViolation,
                        "a \(type) record with this name exists; its type cannot change to \(r.recordType)",
                        recordID: r.recordID))
                continue
            }
            existing[type, default: []].append(r.recordID)
        }
        var servers: [RecordID: Record] = [:]
        for (type, ids) in existing.sorted(by: { $0.key < $1.key }) {
            guard let layout = ctx.tables[type] else { continue }
            var b = PostgresBindings()
            b.append(ctx.scope.tenant)
            let sql = WriteContext.lookup("data", from: layout.qualifiedTable, ids, lock: true, &b)
            for row in try await ctx.planned(sql, b) {
                let data = try row.decode(ByteBuffer.self)
                let r = try RecordRow.decode(Array(data.readableBytesView))
                servers[r.recordID] = r
            }
        }
        return servers
    }

    /// The tenant's record count before the request, when it has a quota and an item of
    /// `asked` is a new record (nil otherwise).
    func recordsBefore(_ asked: [Int], _ serverTypes: [RecordID: String]) async throws -> Int? {
        var recordsBefore: Int? = nil
        if ctx.quota != nil, asked.contains(where: { serverTypes[items[$0].record.recordID] == nil }) {
            var b = PostgresBindings()
            b.append(ctx.scope.tenant)
            for row in try await ctx.prepared(
                "SELECT records FROM \(SQLName.qualified(ctx.scope.namespace, "cirrus_tenants")) WHERE tenant = $1", b)
            {
                recordsBefore = Int(try row.decode(Int64.self))
            }
        }
        return recordsBefore
    }

    /// Step 4 for item `i`: checked as the item-by-item path would save it (`authorize`, the
    /// save policy and change tag, the quota, the typed column values) over `server`, and its
    /// row staged; its outcome is set. Throws only `batchRefused`: an item whose merged record
    /// holds references or assets leaves the batch for the item-by-item path.
    mutating func stage(
        _ i: Int, server: Record?, recordsBefore: Int?,
        authorize: (@Sendable (String, Record?, RecordID) throws -> Void)?
    ) throws(CirrusError) {
        let (given, policy, merging) = items[i]
        let id = given.recordID
        guard let layout = ctx.tables[given.recordType] else { return }
        do {
            try authorize?(given.recordType, server, id)
            var r = try Self.applying(policy, merging: merging, to: given, over: server)
            if !WriteContext.deleteSelfTargets(r).isEmpty || !RecordRow.assetHashes(r).isEmpty {
                // The server's fields it keeps hold references or assets: their rules are the
                // item-by-item path's.
                var e = CirrusError(.internalError, "a merged record holds references or assets")
                e.batchRefused = true
                throw BatchFallback(error: e)
            }
            r.creationDate = server?.creationDate ?? ctx.now
            r.creatorUserRecordID = server?.creatorUserRecordID ?? ctx.user
            r.modificationDate = ctx.now
            r.lastModifiedUserRecordID = ctx.user
            r.recordChangeTag = tag == server?.recordChangeTag ? tag + "." : tag
            if server == nil, let quota = ctx.quota, let before = recordsBefore, before + newCount + 1 > quota {
                throw CirrusError(
                    .quotaExceeded, "the database holds \(before + newCount) records; its quota is \(quota)",
                    recordID: id)
            }
            let columns = columnsByType[r.recordType] ?? BatchColumns(layout)
            let row = try columns.row(r)
            columnsByType[r.recordType] = columns
            rowsByType[r.recordType, default: BatchRows(width: columns.inputs.count)].append(row)
            if server == nil {
                newCount += 1
                newIDs.append(id)
                newTypes.append(r.recordType)
            } else {
                oldIDs.append(id)
                if let server, !WriteContext.deleteSelfTargets(server).isEmpty { unreferencing.append(id) }
            }
            outcome[i] = .success((r, server))
        } catch let f as BatchFallback {
            throw f.error
        } catch {
            outcome[i] = .failure(PostgresStore.itemError(error, id))
        }
    }

    /// `given` under its save `policy` over `server` (nil: no server version): the façade's rule,
    /// the same as the embedded engine's (`DatabaseRules.applying`).
    static func applying(
        _ policy: PostgresSavePolicy, merging: Bool, to given: Record, over server: Record?
    ) throws(CirrusError) -> Record {
        try DatabaseRules.applying(SavePolicy(policy), merging: merging, to: given, over: server)
    }
}

// Container+Transfer: administrative import and export of a database's records (what `cirrus
// import` / `cirrus export` run). Import acts as the container's administrator: no grant
// checks, system fields in the input are kept (missing ones filled in), custom zones are
// created as needed (private databases only), and the schema rules apply as for any save —
// development grows the schema, production rejects unknown types and fields.

import CirrusFacade
import CirrusIO
import Foundation
import RecordLog
import RecordModel

extension Container {
    /// Saves `records` into the database `scope` as an administrator. Returns the failures
    /// (index into `records`, error); the others are committed together.
    ///
    /// ```swift
    /// let failures = try container.importRecords(records, into: .public)
    /// ```
    public func importRecords(
        _ records: [Record], into scope: Database.Scope
    ) throws(CirrusError) -> [(Int, CirrusError)] {
        let db = try administratorDatabase(scope)
        let core = db.core
        let owner = scope.owner
        return try core.withWriteLock { () throws(CirrusError) in
            var zones: [LogOperation] = []
            if case .private = scope {
                var seen = Set<String>()
                for r in records
                where !r.recordID.zoneID.isDefaultZone && seen.insert(r.recordID.zoneID.zoneName).inserted {
                    let z = ZoneID(zoneName: r.recordID.zoneID.zoneName, ownerName: owner)
                    // An invalid zone is not created here: its records fail validation with its name.
                    if !core.zoneExists(owner: owner, z), (try? Validation.validateZoneID(z)) != nil {
                        zones.append(.createZone(z))
                    }
                }
            }
            try core.commitHoldingLock(zones, changes: [], newSchema: nil)
            var plan = ModifyPlanner(database: db, policy: .allKeys, excludedZones: [], administrative: true)
            plan.run(saving: records, deleting: [])
            try core.commitHoldingLock(
                plan.operations, changes: plan.changes, newSchema: plan.schemaChanged ? plan.schema : nil)
            return plan.outcomes.enumerated().compactMap { (i, r) in
                if case .failure(let e) = r { return (i, e) }
                return nil
            }
        }
    }

    /// The handle an import writes through: `scope` as seen by its owner, acting as the
    /// container's administrator. Throws when the container is read-only or the database cannot
    /// be used.
    private func administratorDatabase(_ scope: Database.Scope) throws(CirrusError) -> EmbeddedDatabase {
        let core = try embeddedCore("imports")
        if core.options.readOnly { throw CirrusError(.internalError, "the container is open read-only") }
        let db = EmbeddedDatabase(core: core, scope: scope, identity: .user(scope.owner))
        try db.checkDatabaseAccess()
        return db
    }

    /// Imports a file (Web Services JSON Lines, gzip JSON Lines or a property list) into the
    /// database `scope`, reporting bad records with their line and reason. Records without a
    /// zone go into `zone` when given.
    ///
    /// A bulk load (docs/storage-format.md): records are checked and planned as administrative
    /// saves in batches, then sorted straight into data segments — no log commits — and land
    /// together with one manifest switch when the input ends. If the process dies before that,
    /// the container is exactly as before the import. Other writers wait until it is done.
    /// A record id may appear once per import; a repeat is rejected with its line.
    public func importFile(
        _ path: String, into scope: Database.Scope, zone: ZoneID? = nil, options: ImportOptions = ImportOptions()
    ) throws -> ImportSummary {
        try bulkImport(into: scope, zone: zone, sortBudget: options.sortBudget, validated: true) { sink in
            try RecordTransfer.readRecords(file: path, options: options, sink: sink)
        }
    }

    /// Saves many records into `scope` as one bulk load (see `importFile`): planned in batches of
    /// `batchSize`, sorted into data segments, landed with one manifest switch. Returns the
    /// rejected records (index in `records`, error).
    ///
    /// ```swift
    /// let rejected = try container.importRecords(bulk: places, into: .public)
    /// ```
    public func importRecords<S: Sequence>(
        bulk records: S, into scope: Database.Scope, batchSize: Int = 4096
    ) throws -> [(Int, CirrusError)] where S.Element == Record {
        var rejected: [(Int, CirrusError)] = []
        _ = try bulkImport(into: scope, zone: nil, validated: false) { sink in
            var batch: [(line: Int, record: Record)] = []
            var i = 0
            func flush() throws {
                for (line, reason) in try sink(batch) {
                    rejected.append((line, CirrusError(.invalidArguments, reason)))
                }
                batch.removeAll(keepingCapacity: true)
            }
            for r in records {
                batch.append((i, r))
                i += 1
                if batch.count >= batchSize { try flush() }
            }
            try flush()
            return ImportSummary()
        }
        return rejected
    }

    /// Runs `read` as one bulk load into `scope`: every batch it hands to the sink is planned
    /// and added; the load is finished when `read` returns, cancelled when it throws.
    /// `validated`: `read` hands over records that passed `Record.validate()` (as
    /// `RecordTransfer.readRecords` does), so planning does not validate them again — unless
    /// `zone` moves them.
    func bulkImport(
        into scope: Database.Scope, zone: ZoneID?, sortBudget: Int = ImportOptions().sortBudget, validated: Bool,
        _ read: (([(line: Int, record: Record)]) throws -> [(line: Int, reason: String)]) throws -> ImportSummary
    ) throws -> ImportSummary {
        let db = try administratorDatabase(scope)
        let core = db.core
        let owner = scope.owner
        core.waitForCheckpoints()  // a bulk load is a checkpoint: one at a time
        core.writeLock.lock()
        defer { core.writeLock.unlock() }
        if core.checkpointRunning {
            throw CirrusError(.zoneBusy, "a checkpoint is being written; try the import again")
        }
        let load: BulkLoad
        do { load = try core.store.beginBulkLoad(memoryBudget: sortBudget) } catch {
            throw CirrusError(.internalError, "cannot start the import: \(error)")
        }
        core.bulk = BulkImportState(load: load, schema: core.schema)
        defer {
            core.bulk = nil
            load.cancel()  // no-op once finished
        }
        let start = DispatchTime.now().uptimeNanoseconds
        var summary = try read { batch in
            let records = batch.map { item -> Record in
                var r = item.record
                if let zone, r.recordID.zoneID.isDefaultZone { r.recordID.zoneID = zone }
                return r
            }
            return try core.bulkAdd(records, db: db, owner: owner, validated: validated && zone == nil).map { (i, e) in
                (batch[i].line, "\(e)")
            }
        }
        try core.finishBulk()
        // The landing (merge, index build, manifest switch) is part of the import's time.
        summary.seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        return summary
    }

    /// Imports bytes in any format `importFile` reads, as one bulk load; `name` labels rejections.
    public func importBytes(
        _ bytes: [UInt8], name: String, into scope: Database.Scope, zone: ZoneID? = nil,
        options: ImportOptions = ImportOptions()
    ) throws -> ImportSummary {
        try bulkImport(into: scope, zone: zone, sortBudget: options.sortBudget, validated: true) { sink in
            try RecordTransfer.readRecords(bytes, name: name, options: options, sink: sink)
        }
    }

    /// Writes the live records of a database (optionally of one type, one zone) as Web Services
    /// JSON Lines in commit order, one `write` call per line. Returns the count. As the
    /// administrator every record is written; with `readableBy`, only those that identity may read
    /// (the grants and roles of the public database; a private database only for its owner).
    @discardableResult
    public func exportRecords(
        from scope: Database.Scope, type: String? = nil, zone: ZoneID? = nil, readableBy reader: Identity? = nil,
        write: (String) throws -> Void
    ) throws -> Int {
        guard let core = embedded else { return 0 }  // another engine's records are not in files here
        let owner = scope.owner
        var n = 0
        let storageZone = zone.map { ZoneID(zoneName: $0.zoneName, ownerName: owner) }
        let schema = core.schema
        for s in try core.store.snapshot().records(ofType: type, in: storageZone)
        where s.record.recordID.zoneID.ownerName == owner {
            let api = ContainerCore.apiForm(s.record)
            if let reader, !Access.canRead(api, owner: owner, identity: reader, schema: schema) { continue }
            var line = ""
            api.webServicesJSON.write(to: &line)
            line += "\n"
            try write(line)
            n += 1
        }
        return n
    }
}

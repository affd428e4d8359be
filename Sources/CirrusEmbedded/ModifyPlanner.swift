// ModifyPlanner: plans one modify batch (write lock held) — for each item, against the
// committed state plus the batch's earlier items: ids and zones, validation, save policy and
// change tag, record type, grants, schema (grow in development, locked in production), deleteSelf
// references (same zone, target exists, ≤ 750 per target), assets present, quota; deletions with
// their cascades. Produces the log operations, the record changes and the per-item outcomes.

import CirrusFacade
import RecordLog
import RecordModel

struct ModifyPlanner {
    let db: EmbeddedDatabase
    let policy: SavePolicy
    /// Per-item rules (`Database.modify(_:)`): save index → its policy and whether fields the
    /// record does not carry are kept from the server's version; delete index → the change tag
    /// the server's record must still have.
    var savePolicies: [Int: (SavePolicy, Bool)] = [:]
    var deleteTags: [Int: String] = [:]
    let excludedZones: Set<String>
    /// Import mode: no grant checks, given system fields kept (missing ones filled in).
    let administrative: Bool
    /// The saved records were validated already (a bulk import validates them while parsing, on
    /// every core): `save` does not validate them again.
    var validated = false
    let now: Timestamp
    var schema: Schema
    var schemaChanged = false
    /// Batch-local state: id → record (nil: deleted in this batch).
    var overlay: [RecordID: Record?] = [:]
    var addedRefs: [RecordID: Set<RecordID>] = [:]
    var liveCount: Int
    /// The first sequence number the batch will get (the write lock keeps it stable).
    let batchSequence: UInt64
    var outcomes: [Result<Record, CirrusError>] = []
    var zoneOf: [Int: String] = [:]
    var operations: [LogOperation] = []
    var changes: [RecordChange] = []

    init(database: EmbeddedDatabase, policy: SavePolicy, excludedZones: Set<String>, administrative: Bool = false) {
        db = database
        self.administrative = administrative
        self.policy = administrative ? .allKeys : policy
        self.excludedZones = excludedZones
        now = Timestamp(millisecondsSince1970: database.core.options.clock.wallMilliseconds())
        let bulk = database.core.bulk
        schema = bulk?.schema ?? database.core.schema
        batchSequence = bulk?.load.nextSequence ?? database.core.store.lastSequence + 1
        liveCount = database.core.stateLock.withLock {
            (database.core.tables[database.owner] ?? [:]).values.reduce(0) { $0 + $1.liveCount }
        }
    }

    var core: ContainerCore { db.core }

    func current(_ id: RecordID) throws(CirrusError) -> Record? {
        if let o = overlay[id] { return o }
        return try core.current(owner: db.owner, id)
    }

    mutating func run(saving: [Record], deleting: [RecordID]) {
        let schemaBefore = schema
        var seen = Set<RecordID>()
        for (i, r) in saving.enumerated() {
            zoneOf[i] = r.recordID.zoneID.zoneName
            if excludedZones.contains(r.recordID.zoneID.zoneName) {
                outcomes.append(.failure(.record(.batchRequestFailed, r.recordID, "excluded")))
                continue
            }
            do throws(CirrusError) {
                let inBulk = core.bulk.map {
                    $0.seen.contains(ContainerCore.storageID(r.recordID, owner: db.owner), in: $0.load)
                }
                if !seen.insert(ContainerCore.apiID(r.recordID)).inserted || inBulk == true {
                    if inBulk == nil {
                        throw .record(.invalidArguments, r.recordID, "the record is saved twice in one request")
                    }
                    throw .record(.invalidArguments, r.recordID, "the record appears earlier in this import")
                }
                let (p, merging) = savePolicies[i] ?? (policy, false)
                outcomes.append(.success(try save(r, policy: administrative ? .allKeys : p, mergingFields: merging)))
            } catch {
                outcomes.append(.failure(error))
            }
        }
        for (j, id) in deleting.enumerated() {
            zoneOf[saving.count + j] = id.zoneID.zoneName
            if excludedZones.contains(id.zoneID.zoneName) {
                outcomes.append(.failure(.record(.batchRequestFailed, id, "excluded")))
                continue
            }
            do throws(CirrusError) {
                try delete(id, ifChangeTag: deleteTags[j])
                outcomes.append(.success(Record(recordType: "", recordID: id)))
            } catch {
                outcomes.append(.failure(error))
            }
        }
        schemaChanged = schema != schemaBefore
    }

    // MARK: save

    mutating func save(_ given: Record, policy: SavePolicy, mergingFields: Bool) throws(CirrusError) -> Record {
        let id = try db.checkID(given.recordID)
        if !id.zoneID.isDefaultZone && !core.zoneExists(owner: db.owner, id.zoneID) {
            throw .record(.zoneNotFound, given.recordID, "zone \"\(id.zoneID.zoneName)\" does not exist")
        }
        var r = given
        r.recordID = id
        if !validated {
            do {
                try r.validate()
            } catch {
                throw CirrusError(.invalidArguments, error.message, recordID: given.recordID)
            }
        }
        if r.recordType == Schema.usersRecordType && !administrative {
            guard case .public = db.scope, db.identity.userRecordName == id.recordName else {
                throw .record(
                    .permissionFailure, given.recordID,
                    "a Users record can only be saved by its user, in the public database")
            }
        }
        let server = try current(id)
        if let server, server.recordType != r.recordType {
            throw .record(
                .constraintViolation, given.recordID,
                "a \(server.recordType) record with this name exists; its type cannot change to \(r.recordType)")
        }
        r = try DatabaseRules.applying(policy, merging: mergingFields, to: r, over: server)
        if !administrative {
            try db.checkWrite(type: r.recordType, current: server, id: given.recordID, schema: schema)
        }
        try checkSchema(r, id: given.recordID)
        let targets = deleteSelfTargets(r)
        if !targets.isEmpty { try checkReferences(targets, id: given.recordID) }
        try checkAssets(r, id: given.recordID)
        if server == nil, let q = core.options.maximumRecordsPerDatabase, liveCount + 1 > q {
            throw .record(
                .quotaExceeded, given.recordID, "the \(db.scope) holds \(liveCount) records; its quota is \(q)")
        }
        // System fields.
        if administrative {
            r.creationDate = given.creationDate ?? server?.creationDate ?? now
            r.creatorUserRecordID = given.creatorUserRecordID ?? server?.creatorUserRecordID
            r.modificationDate = given.modificationDate ?? now
            r.recordChangeTag = given.recordChangeTag ?? newTag(after: server?.recordChangeTag)
        } else {
            let user = db.identity.userRecordName.map { RecordID(recordName: $0) }
            r.creationDate = server?.creationDate ?? now
            r.creatorUserRecordID = server?.creatorUserRecordID ?? user
            r.modificationDate = now
            r.lastModifiedUserRecordID = user
            r.recordChangeTag = newTag(after: server?.recordChangeTag)
        }
        if server == nil { liveCount += 1 }
        overlay[id] = .some(r)
        for target in targets { addedRefs[target, default: []].insert(id) }
        var stored = r
        stored.recordID = ContainerCore.storageID(id, owner: db.owner)
        operations.append(.save(stored))
        changes.append(RecordChange(owner: db.owner, old: server, new: r))
        return r
    }

    /// A record version's change tag: the log sequence number of its batch in base 36. Every
    /// version of a record is written by a later batch, so tags never repeat — not even across
    /// reopenings or compactions (sequence numbers only grow) — unlike random tags from a
    /// seeded source.
    func newTag(after old: String?) -> String {
        let t = String(batchSequence, radix: 36)
        return t == old ? t + "." : t
    }

    mutating func checkSchema(_ r: Record, id: RecordID) throws(CirrusError) {
        let prod = schema.environment == .production
        var t = schema.recordTypes[r.recordType]
        if t == nil {
            if prod {
                throw .record(.serverRejectedRequest, id, "Cannot create new type \(r.recordType) in production schema")
            }
            t = RecordTypeSchema(name: r.recordType)
        }
        guard var type = t else { return }
        var grew = schema.recordTypes[r.recordType] == nil
        for (name, v) in r.fields {  // in name order
            if let f = type.fields[name] {
                let ok = v.fieldType == f.type || (v.fieldType == nil && f.type.isList)
                if !ok {
                    throw CirrusError(
                        .invalidArguments,
                        "invalid attempt to set value type \(v.typeName) for field '\(name)' for type '\(r.recordType)', defined to be: \(f.type)",
                        recordID: id)
                }
                continue
            }
            if prod {
                throw .record(
                    .serverRejectedRequest, id,
                    "Cannot create new field '\(name)' of type \(r.recordType) in production schema")
            }
            guard let ft = v.fieldType else {
                throw .record(
                    .invalidArguments, id, "field '\(name)': an empty list does not say its type; save a value first")
            }
            type.fields[name] = FieldSchema(name: name, type: ft, options: .automatic(for: ft))
            grew = true
        }
        if grew { schema.recordTypes[r.recordType] = type }
    }

    /// The targets of `r`'s deleteSelf references (API form), in field order.
    func deleteSelfTargets(_ r: Record) -> [RecordID] {
        var out: [RecordID] = []
        for v in r.fields.values {
            v.forEachElement { e in
                if case .reference(let ref) = e, ref.action == .deleteSelf {
                    out.append(ContainerCore.apiID(ref.recordID))
                }
            }
        }
        return out
    }

    /// The rules for a saved record's deleteSelf `targets` (same zone, target exists, at most
    /// `maximumCascadingReferences` sources).
    func checkReferences(_ targets: [RecordID], id: RecordID) throws(CirrusError) {
        for target in Set(targets) {
            if target.zoneID.zoneName != id.zoneID.zoneName {
                throw .record(
                    .referenceViolation, id,
                    "a deleteSelf reference must stay in its zone; \"\(target.recordName)\" is in zone \"\(target.zoneID.zoneName)\""
                )
            }
            if target != id, try current(target) == nil {
                throw .record(
                    .referenceViolation, id, "the deleteSelf reference target \"\(target.recordName)\" does not exist")
            }
            var sources = core.backrefs[db.owner]?[target] ?? []
            sources.formUnion(addedRefs[target] ?? [])
            sources.insert(id)
            if sources.count > DatabaseLimits.maximumCascadingReferences {
                throw .record(
                    .limitExceeded, id,
                    "record \"\(target.recordName)\" already has \(sources.count - 1) deleteSelf references; the limit is \(DatabaseLimits.maximumCascadingReferences)"
                )
            }
        }
    }

    func checkAssets(_ r: Record, id: RecordID) throws(CirrusError) {
        for (name, v) in r.fields {
            try v.forEachElement { (e) throws(CirrusError) in
                guard case .asset(let a) = e, !core.options.fileSystem.exists(core.store.assetPath(a.contentHash))
                else {
                    return
                }
                throw CirrusError(
                    .invalidArguments, "field '\(name)': asset \(a.contentHash) was not stored (use storeAsset first)",
                    recordID: id)
            }
        }
    }

    // MARK: delete

    mutating func delete(_ given: RecordID, ifChangeTag tag: String? = nil) throws(CirrusError) {
        let id = try db.checkID(given)
        if !id.zoneID.isDefaultZone && !core.zoneExists(owner: db.owner, id.zoneID) {
            throw .record(.zoneNotFound, given, "zone \"\(id.zoneID.zoneName)\" does not exist")
        }
        guard let server = try current(id) else { throw .record(.unknownItem, given, "record not found") }
        if let tag, tag != server.recordChangeTag {
            throw CirrusError(
                .serverRecordChanged,
                "recordChangeTag \"\(tag)\" is stale; the server has \"\(server.recordChangeTag ?? "")\"",
                recordID: given, serverRecord: server)
        }
        try db.checkWrite(type: server.recordType, current: server, id: given, schema: schema)
        var queue = [server]
        var done = Set<RecordID>([id])
        while let victim = queue.popLast() {
            overlay[victim.recordID] = .some(nil)
            liveCount -= 1
            operations.append(
                .delete(ContainerCore.storageID(victim.recordID, owner: db.owner), recordType: victim.recordType))
            changes.append(RecordChange(owner: db.owner, old: victim, new: nil))
            var sources = core.backrefs[db.owner]?[victim.recordID] ?? []
            sources.formUnion(addedRefs[victim.recordID] ?? [])
            for s in sources.sorted() where !done.contains(s) {
                guard let rec = try current(s), deleteSelfTargets(rec).contains(victim.recordID),
                    s.zoneID.zoneName == victim.recordID.zoneID.zoneName
                else { continue }
                done.insert(s)
                queue.append(rec)
            }
        }
    }
}

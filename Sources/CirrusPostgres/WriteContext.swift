// WriteContext: one transaction's writes for one tenant — sequences, record counts, zones,
// the current rows (locked), a record's row and its list, token and reference rows written, deleteSelf
// references checked, assets claimed. The record calls (PostgresStore+Records.swift), batched saves
// (PostgresStore+Batch.swift) and imports (PostgresStore+Import.swift) all write through it.

import CirrusFacade
import Logging
import NIOCore
import PostgresNIO
import RecordModel

/// What the writes of one store's tenant share, whatever the transaction: where its tables are,
/// whose rows they write, how statements are logged.
struct TenantScope: Sendable {
    /// The logger of every statement.
    let logger: Logger
    /// The container environment's namespace.
    let namespace: String
    /// The tenant's key.
    let tenant: String
    /// The key of the namespace's public database (TableLayout.indexes).
    let publicTenant: String
    /// The tenant's environment.
    let environment: Environment
    /// Hash-partitioned over foreign tables: no `ON CONFLICT` (no unique index on the parent).
    let partitioned: Bool
}

/// One transaction's writes for one tenant.
struct WriteContext {
    let conn: PostgresConnection
    /// The tenant written: namespace, key, environment, logger, layout.
    let scope: TenantScope
    var tables: [String: TableLayout]
    let now: Timestamp
    let user: RecordID?
    /// The tenant's sequence this request writes at (``nextSequence()``).
    var sequence: Int64 = 0
    /// Most records the tenant may hold (nil: no quota); a new record past it → quotaExceeded.
    var quota: Int? = nil
    /// The statements prepared on the store's sessions (PreparedSQL.swift).
    var registry = PreparedSQL.Registry()
    /// An administrator's import (PostgresStore+Import.swift): saves keep the system fields the
    /// records carry (the embedded engine's administrative saves).
    var administrative = false

    /// Runs a statement and drains its rows.
    func exec(_ sql: String, _ b: SQLBuilder = SQLBuilder()) async throws {
        for try await _ in try await query(sql, b) {}
    }

    /// Runs a statement; the caller reads its rows. Its answer moves the request's deadline
    /// (``Deadline/answered()``): a request of many items ends when the server stops answering,
    /// not when their statements together pass the timeout.
    func query(_ sql: String, _ b: SQLBuilder) async throws -> PostgresRowSequence {
        let rows = try await conn.query(PostgresQuery(unsafeSQL: sql, binds: b.binds), logger: scope.logger)
        Deadline.answered()
        return rows
    }

    /// The tenant's next request number (locks the tenant's counter row to the commit).
    func nextSequence() async throws -> Int64 {
        var b = SQLBuilder()
        let t = b.param(scope.tenant)
        let table = SQLName.qualified(scope.namespace, "cirrus_tenants")
        if scope.partitioned {
            // The tenant's counter row is created by its first request (two concurrent first
            // requests of one tenant: one fails on the worker's primary key, nothing is written).
            var sequence: Int64? = nil
            for try await n in try await query(
                "UPDATE \(table) SET sequence = sequence + 1 WHERE tenant = \(t) RETURNING sequence", b
            ).decode(Int64.self) { sequence = n }
            if sequence == nil {
                try await exec("INSERT INTO \(table) (tenant, sequence) VALUES (\(t), 1)", b)
                sequence = 1
            }
            return sequence!
        }
        let rows = try await query(
            "INSERT INTO \(table) AS t (tenant, sequence) VALUES (\(t), 1) ON CONFLICT (tenant) "
                + "DO UPDATE SET sequence = t.sequence + 1 RETURNING sequence", b)
        var sequence: Int64? = nil
        for try await n in rows.decode(Int64.self) { sequence = n }
        guard let sequence else { throw CirrusError(.internalError, "the tenant counter returned no row") }
        return sequence
    }

    /// Adds `delta` to the tenant's record count (`cirrus_tenants.records`, its row locked by
    /// ``nextSequence()``); past the quota → quotaExceeded, which fails the item that adds it.
    func countRecords(_ delta: Int, _ id: RecordID) async throws {
        var b = SQLBuilder()
        var count: Int64 = 0
        for try await n in try await query(
            "UPDATE \(SQLName.qualified(scope.namespace, "cirrus_tenants")) SET records = records + "
                + "\(b.param(String(delta)))::bigint WHERE tenant = \(b.param(scope.tenant)) RETURNING records", b
        ).decode(Int64.self) { count = n }
        if delta > 0, let quota, count > quota {
            throw CirrusError(
                .quotaExceeded, "the database holds \(count - 1) records; its quota is \(quota)", recordID: id)
        }
    }

    /// Throws zoneNotFound unless the custom zone of `id` exists in this tenant (its row is
    /// locked FOR SHARE until the transaction ends, so a deletion of the zone waits for it).
    func requireZone(_ id: RecordID) async throws {
        var b = SQLBuilder()
        let t = b.param(scope.tenant)
        let z = b.param(id.zoneID.zoneName)
        var found = false
        for try await _ in try await query(
            "SELECT 1 FROM \(SQLName.qualified(scope.namespace, "cirrus_zones")) WHERE tenant = \(t) AND zone_name = \(z) "
                + "FOR SHARE", b)
        { found = true }
        if !found {
            throw CirrusError(
                .zoneNotFound, "zone \"\(id.zoneID.zoneName)\" does not exist", recordID: id)
        }
    }

    /// The record type a name is used by in this tenant, locked with `lock`.
    func recordType(of id: RecordID, lock: Bool) async throws -> String? {
        var b = SQLBuilder()
        let key = RecordRow.keyCondition(tenant: scope.tenant, id, &b)
        let rows = try await query(
            "SELECT record_type FROM \(SQLName.qualified(scope.namespace, "cirrus_names")) WHERE \(key)"
                + (lock ? " FOR UPDATE" : ""), b)
        var type: String? = nil
        for try await t in rows.decode(String.self) { type = t }
        return type
    }

    /// The current record with `id`, if any.
    func current(_ id: RecordID, lock: Bool) async throws -> Record? {
        guard let type = try await recordType(of: id, lock: lock), let layout = tables[type] else { return nil }
        var b = SQLBuilder()
        let key = RecordRow.keyCondition(tenant: scope.tenant, id, &b)
        let rows = try await query(
            "SELECT data FROM \(layout.qualifiedTable) WHERE \(key)" + (lock ? " FOR UPDATE" : ""), b)
        var record: Record? = nil
        for try await data in rows.decode(ByteBuffer.self) {
            record = try RecordRow.decode(Array(data.readableBytesView))
        }
        return record
    }

    /// The records of `ids` that exist: one statement for their types, one per type for the rows.
    func records(_ ids: [RecordID]) async throws -> [RecordID: Record] {
        func keys(_ b: inout SQLBuilder, _ ids: [RecordID]) -> String {
            "tenant = \(b.param(scope.tenant)) AND (zone_name, zone_owner, record_name) IN (SELECT * FROM unnest("
                + "\(b.param(ids.map(\.zoneID.zoneName)))::text[], \(b.param(ids.map(\.zoneID.ownerName)))::text[], "
                + "\(b.param(ids.map(\.recordName)))::text[]))"
        }
        var b = SQLBuilder()
        let rows = try await query(
            "SELECT zone_name, zone_owner, record_name, record_type FROM "
                + "\(SQLName.qualified(scope.namespace, "cirrus_names")) WHERE \(keys(&b, ids))", b)
        var byType: [String: [RecordID]] = [:]
        for try await (zone, owner, name, type) in rows.decode((String, String, String, String).self) {
            byType[type, default: []].append(
                RecordID(recordName: name, zoneID: ZoneID(zoneName: zone, ownerName: owner)))
        }
        var out: [RecordID: Record] = [:]
        for (type, typeIDs) in byType.sorted(by: { $0.key < $1.key }) {
            guard let layout = tables[type] else { continue }
            var b = SQLBuilder()
            let rows = try await query("SELECT data FROM \(layout.qualifiedTable) WHERE \(keys(&b, typeIDs))", b)
            for try await data in rows.decode(ByteBuffer.self) {
                let r = try RecordRow.decode(Array(data.readableBytesView))
                out[r.recordID] = r
            }
        }
        return out
    }

    /// Saves one item (see the policies in docs/database.md); returns it as stored and the
    /// server's version it replaced.
    func save(
        _ given: Record, policy: PostgresSavePolicy, merging: Bool = false, tag: String,
        authorize: (@Sendable (String, Record?, RecordID) throws -> Void)? = nil
    ) async throws -> (stored: Record, server: Record?) {
        let id = given.recordID
        do {
            try given.validate()
        } catch {
            throw CirrusError(.invalidArguments, error.message, recordID: id)
        }
        guard let layout = tables[given.recordType] else {
            throw CirrusError(
                .serverRejectedRequest,
                "Cannot create new type \(given.recordType) in \(scope.environment.rawValue) schema",
                recordID: id)
        }
        for name in given.fields.keys where !layout.fieldNames.contains(name) {  // in name order
            throw scope.environment == .production
                ? CirrusError(
                    .serverRejectedRequest,
                    "Cannot create new field '\(name)' of type \(given.recordType) in production schema", recordID: id)
                : CirrusError(
                    .invalidArguments, "field '\(name)': an empty list does not say its type; save a value first",
                    recordID: id)
        }
        let serverType = try await recordType(of: id, lock: true)
        if let serverType, serverType != given.recordType {
            throw CirrusError(
                .constraintViolation,
                "a \(serverType) record with this name exists; its type cannot change to \(given.recordType)",
                recordID: id)
        }
        let server = serverType == nil ? nil : try await current(id, lock: true)
        try authorize?(given.recordType, server, id)
        var r = try BatchSave.applying(policy, merging: merging, to: given, over: server)
        try await checkReferences(r)
        try await claimAssets(r)
        if administrative {
            r = PostgresImporter.stored(given, over: server, now: now, tag: tag)
        } else {
            r.creationDate = server?.creationDate ?? now
            r.creatorUserRecordID = server?.creatorUserRecordID ?? user
            r.modificationDate = now
            r.lastModifiedUserRecordID = user
            r.recordChangeTag = tag == server?.recordChangeTag ? tag + "." : tag
        }
        try await write(r, layout, isNew: server == nil)
        // The references it holds now, unless it holds none and held none.
        let targets = Self.deleteSelfTargets(r)
        if !targets.isEmpty || !(server.map(Self.deleteSelfTargets)?.isEmpty ?? true) {
            try await setReferences(of: id, to: targets)
        }
        return (r, server)
    }

    /// Throws invalidArguments naming the field of an asset `r` holds that this tenant has not
    /// stored. The assets it holds are stored again (`stored_at` now, under their row locks), so
    /// a concurrent sweep cannot take them before this request commits the reference.
    func claimAssets(_ r: Record) async throws {
        let hashes = RecordRow.assetHashes(r)
        if hashes.isEmpty { return }
        var b = SQLBuilder()
        var found = Set<String>()
        for try await h in try await query(
            "UPDATE \(SQLName.qualified(scope.namespace, "cirrus_assets")) SET stored_at = "
                + "(extract(epoch from clock_timestamp()) * 1000)::bigint WHERE tenant = \(b.param(scope.tenant)) AND "
                + "hash = ANY(\(b.param(hashes))::text[]) RETURNING hash", b
        ).decode(String.self) { found.insert(h) }
        for (name, value) in r.fields {
            for case .asset(let a) in value.elements where !found.contains(a.contentHash) {
                throw CirrusError(
                    .invalidArguments, "field '\(name)': asset \(a.contentHash) was not stored (use storeAsset first)",
                    recordID: r.recordID)
            }
        }
    }

    /// The records `r` refers to with deleteSelf (their deletion deletes `r`), each once, by name.
    static func deleteSelfTargets(_ r: Record) -> [RecordID] {
        var out: [RecordID] = []
        var seen = Set<String>()
        for (_, value) in r.fields {
            for case .reference(let ref) in value.elements
            where ref.action == .deleteSelf && seen.insert(ref.recordID.recordName).inserted {
                out.append(ref.recordID)
            }
        }
        return out
    }

    /// The embedded engine's rules for deleteSelf references (ModifyPlanner.checkReferences):
    /// the target is in the record's zone and exists (or is the record itself), and has at most
    /// `maximumCascadingReferences` sources — else referenceViolation / limitExceeded.
    func checkReferences(_ r: Record) async throws {
        let id = r.recordID
        for target in Self.deleteSelfTargets(r) {
            if target.zoneID.zoneName != id.zoneID.zoneName {
                throw CirrusError(
                    .referenceViolation,
                    "a deleteSelf reference must stay in its zone; \"\(target.recordName)\" is in zone "
                        + "\"\(target.zoneID.zoneName)\"", recordID: id)
            }
            let local = RecordID(recordName: target.recordName, zoneID: id.zoneID)
            if local != id, try await recordType(of: local, lock: false) == nil {
                throw CirrusError(
                    .referenceViolation, "the deleteSelf reference target \"\(target.recordName)\" does not exist",
                    recordID: id)
            }
            var b = SQLBuilder()
            var others = 0
            for try await n in try await query(
                "SELECT count(*) FROM \(SQLName.qualified(scope.namespace, "cirrus_backrefs")) WHERE "
                    + "\(Self.refKey(scope.tenant, id.zoneID, &b)) AND target_name = \(b.param(target.recordName)) "
                    + "AND source_name <> \(b.param(id.recordName))", b
            ).decode(Int64.self) { others = Int(n) }
            if others + 1 > Self.maximumCascadingReferences {
                throw CirrusError(
                    .limitExceeded,
                    "record \"\(target.recordName)\" already has \(others) deleteSelf references; the limit is "
                        + "\(Self.maximumCascadingReferences)", recordID: id)
            }
        }
    }

    /// CloudKit's limit on deleteSelf references to one record (the embedded engine's
    /// `DatabaseLimits.maximumCascadingReferences`).
    static let maximumCascadingReferences = 750

    /// `tenant = … AND zone_name = … AND zone_owner = …` of `cirrus_backrefs`.
    static func refKey(_ tenant: String, _ zone: ZoneID, _ b: inout SQLBuilder) -> String {
        "tenant = \(b.param(tenant)) AND zone_name = \(b.param(zone.zoneName)) AND zone_owner = "
            + "\(b.param(zone.ownerName))"
    }

    /// Replaces the deleteSelf references `source` holds in `cirrus_backrefs` by `targets`.
    func setReferences(of source: RecordID, to targets: [RecordID]) async throws {
        let table = SQLName.qualified(scope.namespace, "cirrus_backrefs")
        var b = SQLBuilder()
        try await exec(
            "DELETE FROM \(table) WHERE \(Self.refKey(scope.tenant, source.zoneID, &b)) AND source_name = "
                + "\(b.param(source.recordName))", b)
        if targets.isEmpty { return }
        var i = SQLBuilder()
        let rows = targets.map { t in
            "(\(i.param(scope.tenant)), \(i.param(source.zoneID.zoneName)), \(i.param(source.zoneID.ownerName)), "
                + "\(i.param(t.recordName)), \(i.param(source.recordName)))"
        }
        try await exec(
            "INSERT INTO \(table) (tenant, zone_name, zone_owner, target_name, source_name) VALUES "
                + rows.joined(separator: ", "), i)
    }

    /// Upserts the row of `r` (and claims its name when new).
    func write(_ r: Record, _ layout: TableLayout, isNew: Bool) async throws {
        let id = r.recordID
        var n = SQLBuilder()
        let seq = "\(n.param(String(sequence)))::bigint"
        if isNew {
            try await countRecords(+1, id)
            let vals = [scope.tenant, id.zoneID.zoneName, id.zoneID.ownerName, id.recordName, r.recordType].map {
                n.param($0)
            }
            try await exec(
                "INSERT INTO \(SQLName.qualified(scope.namespace, "cirrus_names")) "
                    + "(tenant, zone_name, zone_owner, record_name, record_type, seq) VALUES ("
                    + "\(vals.joined(separator: ", ")), \(seq))", n)
            // A name saved again after its deletion is live: its tombstone goes.
            var t = SQLBuilder()
            try await exec(
                "DELETE FROM \(SQLName.qualified(scope.namespace, "cirrus_tombstones")) WHERE "
                    + RecordRow.keyCondition(tenant: scope.tenant, id, &t), t)
        } else {
            let key = RecordRow.keyCondition(tenant: scope.tenant, id, &n)
            try await exec(
                "UPDATE \(SQLName.qualified(scope.namespace, "cirrus_names")) SET seq = \(seq) WHERE \(key)", n)
        }
        var b = SQLBuilder()
        var cols: [(String, String)] = [
            ("tenant", b.param(scope.tenant)), ("zone_name", b.param(id.zoneID.zoneName)),
            ("zone_owner", b.param(id.zoneID.ownerName)), ("record_name", b.param(id.recordName)),
            ("record_type", b.param(r.recordType)), ("change_tag", b.param(r.recordChangeTag ?? "")),
            ("created_at", r.creationDate.map { "\(b.param(String($0.millisecondsSince1970)))::bigint" } ?? "NULL"),
            (
                "modified_at",
                r.modificationDate.map { "\(b.param(String($0.millisecondsSince1970)))::bigint" } ?? "NULL"
            ),
            ("created_by", r.creatorUserRecordID.map { b.param(SQLText.referenceKey($0)) } ?? "NULL"),
            ("modified_by", r.lastModifiedUserRecordID.map { b.param(SQLText.referenceKey($0)) } ?? "NULL"),
            ("data", "decode(\(b.param(SQLText.hex(RecordRow.encode(r)))), 'hex')"),
        ]
        cols += try RecordRow.typedValues(r, layout, &b)
        let names = cols.map(\.0)
        let updates = names.dropFirst(4).map { "\($0) = EXCLUDED.\($0)" }.joined(separator: ", ")
        if scope.partitioned {
            // The row was read (and locked) before: insert a new one, update an existing one.
            if isNew {
                try await exec(
                    "INSERT INTO \(layout.qualifiedTable) (\(names.joined(separator: ", "))) VALUES ("
                        + cols.map(\.1).joined(separator: ", ") + ")", b)
            } else {
                let set = cols.dropFirst(4).map { "\($0.0) = \($0.1)" }.joined(separator: ", ")
                let key =
                    "tenant = \(cols[0].1) AND zone_name = \(cols[1].1) AND zone_owner = \(cols[2].1) "
                    + "AND record_name = \(cols[3].1)"
                try await exec("UPDATE \(layout.qualifiedTable) SET \(set) WHERE \(key)", b)
            }
            return
        }
        try await exec(
            "INSERT INTO \(layout.qualifiedTable) (\(names.joined(separator: ", "))) VALUES ("
                + cols.map(\.1).joined(separator: ", ")
                + ") ON CONFLICT (tenant, zone_name, zone_owner, record_name) DO UPDATE SET \(updates)", b)
    }

    /// Deletes one record and, cascading, the records of its zone that refer to a deleted one
    /// with deleteSelf; each leaves its tombstone at this request's sequence. Returns the
    /// deleted versions, the given record's first. unknownItem when there is none. With
    /// `ifChangeTag`, only while the server's record has that tag (else serverRecordChanged
    /// carrying it). `authorize` is asked for the given record only (as on the embedded engine).
    func delete(
        _ id: RecordID, ifChangeTag: String? = nil,
        authorize: (@Sendable (String, Record?, RecordID) throws -> Void)? = nil
    ) async throws -> [Record] {
        guard let first = try await deleteOne(id, ifChangeTag: ifChangeTag, authorize: authorize, cascading: false)
        else { return [] }
        var deleted = [first]
        var queue = [id]
        var done: Set<RecordID> = [id]
        let table = SQLName.qualified(scope.namespace, "cirrus_backrefs")
        while let victim = queue.popLast() {
            var b = SQLBuilder()
            var sources: [String] = []
            for try await s in try await query(
                "DELETE FROM \(table) WHERE \(Self.refKey(scope.tenant, victim.zoneID, &b)) AND target_name = "
                    + "\(b.param(victim.recordName)) RETURNING source_name", b
            ).decode(String.self) { sources.append(s) }
            for s in sources.sorted() {
                let source = RecordID(recordName: s, zoneID: victim.zoneID)
                guard done.insert(source).inserted, let r = try await deleteOne(source, cascading: true) else {
                    continue
                }
                deleted.append(r)
                queue.append(source)
            }
        }
        return deleted
    }

    /// Deletes one record (no cascade) with its name, outgoing deleteSelf references and a
    /// tombstone; returns the server's version (nil when a cascade finds it gone already).
    private func deleteOne(
        _ id: RecordID, ifChangeTag: String? = nil,
        authorize: (@Sendable (String, Record?, RecordID) throws -> Void)? = nil, cascading: Bool
    ) async throws -> Record? {
        guard let type = try await recordType(of: id, lock: true) else {
            if cascading { return nil }
            throw CirrusError(.unknownItem, "no such record to delete", recordID: id)
        }
        let server = try await current(id, lock: true)
        try authorize?(type, server, id)
        if let ifChangeTag, let server, server.recordChangeTag != ifChangeTag {
            throw CirrusError(
                .serverRecordChanged,
                "recordChangeTag \"\(ifChangeTag)\" is stale; the server has \"\(server.recordChangeTag ?? "")\"",
                recordID: id, serverRecord: server)
        }
        var b = SQLBuilder()
        let key = RecordRow.keyCondition(tenant: scope.tenant, id, &b)
        try await exec("DELETE FROM \(SQLName.qualified(scope.namespace, "cirrus_names")) WHERE \(key)", b)
        if let layout = tables[type] { try await exec("DELETE FROM \(layout.qualifiedTable) WHERE \(key)", b) }
        try await countRecords(-1, id)
        // The tombstone (a name deleted twice keeps its latest; no ON CONFLICT: partitioned
        // layouts have no unique index on the parent).
        let tombstones = SQLName.qualified(scope.namespace, "cirrus_tombstones")
        try await exec("DELETE FROM \(tombstones) WHERE \(key)", b)
        if let server, !Self.deleteSelfTargets(server).isEmpty { try await setReferences(of: id, to: []) }
        var t = SQLBuilder()
        let vals = [scope.tenant, id.zoneID.zoneName, id.zoneID.ownerName, id.recordName, type].map { t.param($0) }
        try await exec(
            "INSERT INTO \(tombstones) (tenant, zone_name, zone_owner, record_name, record_type, seq) VALUES ("
                + vals.joined(separator: ", ") + ", \(t.param(String(sequence)))::bigint)", t)
        return server
    }
}

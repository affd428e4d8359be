// Batched saves: a request's saves in a few statements instead of a few per record.
//
// The item-by-item path (PostgresStore+Records.swift) sends 4–8 statements per save — lock the
// name, read the row, count, claim the name, drop a tombstone, upsert — each a round trip, so a
// request of 400 saves takes thousands of round trips. A request whose items are all saves of
// distinct records, with no deleteSelf references and no assets, of types the schema has (no
// growth), runs here instead, with the same rules in the same order and the same results (steps
// 1–4: WriteContext+BatchSave.swift):
//
//   1. (custom zones) the zones' rows, locked FOR SHARE                  one statement
//   2. the names' rows, locked FOR UPDATE (their record types)            one statement
//   3. the current rows of the names that exist, locked, per type         one statement per type
//   4. every item checked in Swift: validation, schema, type, the write grant (`authorize`),
//      the save policy and change tag, the quota, the typed column values
//   5. every write in one statement: data-modifying CTEs claim the new names and stamp the
//      existing ones with the request's sequence, drop the new names' tombstones and the old
//      versions' deleteSelf references, add to the record count, and upsert each type's rows
//      as one INSERT … SELECT FROM unnest(…) … ON CONFLICT DO UPDATE           one statement
//
// Arrays travel as PostgreSQL array literals in text parameters (NULL elements are missing
// fields), so every statement's text depends only on the namespace and the record types: the
// statements are prepared (PreparedSQL.swift). An atomic request with a failed item writes
// nothing (the caller rolls back). A write PostgreSQL refuses (none is expected: values are
// checked in Swift) rolls the request back and it runs again item by item
// (`CirrusError.batchRefused`), so each item gets its own outcome.

import CirrusFacade
import Foundation
import Indexes
import NIOCore
import PostgresNIO
import RecordModel

extension PostgresStore {
    /// Whether `items` can run as one batch (see the file header).
    static func batchable(_ items: [PostgresItem], tables: [String: TableLayout]) -> Bool {
        var seen = Set<RecordID>()
        for item in items {
            guard case .save(let r, _, _) = item, seen.insert(r.recordID).inserted else { return false }
            if !WriteContext.deleteSelfTargets(r).isEmpty || !RecordRow.assetHashes(r).isEmpty { return false }
        }
        return !items.isEmpty
    }
}

/// Leaves a batch for the item-by-item path (the error is `batchRefused`).
struct BatchFallback: Error {
    var error: CirrusError
}

/// A PostgreSQL array literal (`{"a",NULL,"b"}`) of texts, for a text parameter cast to an array.
enum ArrayLiteral {
    static func make(_ items: [String?]) -> String {
        var out: [UInt8] = [0x7B]
        out.reserveCapacity(items.count * 16 + 2)
        for (i, item) in items.enumerated() {
            if i > 0 { out.append(0x2C) }
            guard let item else {
                out += [0x4E, 0x55, 0x4C, 0x4C]  // NULL
                continue
            }
            out.append(0x22)
            for b in item.utf8 {
                if b == 0x22 || b == 0x5C { out.append(0x5C) }  // " and \ escaped
                out.append(b)
            }
            out.append(0x22)
        }
        out.append(0x7D)
        return String(decoding: out, as: UTF8.self)
    }
}

/// The rows of one record type's table as arrays of texts, one array per input of
/// ``BatchColumns``.
struct BatchRows {
    var inputs: [[String?]]
    /// Each row's record bytes (the `data` column, bound as one bytea[] in its binary form).
    var data: [[UInt8]] = []
    var count: Int { data.count }

    init(width: Int) { inputs = Array(repeating: [], count: width) }

    mutating func append(_ row: BatchRow) {
        for (i, v) in row.texts.enumerated() { inputs[i].append(v) }
        data.append(row.data)
    }
}

/// One row as ``BatchColumns/row(_:)`` makes it: a text per input (nil: NULL; the `data`
/// input's is nil, its bytes are `data`) and the record's bytes.
struct BatchRow {
    var texts: [String?]
    var data: [UInt8]
}

/// How a record type's rows are written from arrays: the unnest inputs and, per column, its
/// SQL expression over them — and, for `COPY … FROM STDIN` (PostgresStore+Import.swift), how the
/// column's text is made from the same inputs.
struct BatchColumns {
    /// How a column's `COPY` text is made from a row's inputs.
    enum Cell: Sendable {
        /// The tenant (not an input).
        case tenant
        /// The input as it is (text, numbers, array literals of texts and numbers).
        case text(Int)
        /// Lower-case hex → bytea (`\x…`).
        case bytea(Int)
        /// The record's bytes (``BatchRow/data``) → bytea (`\x…`).
        case data
        /// Longitude and latitude → EWKT `SRID=4326;POINT(lon lat)`.
        case geography(Int, Int)
        /// The tokens: an array literal for the batched statement, tsvector text for COPY
        /// (``BatchColumns/row(_:copy:)``).
        case tsvector(Int)
        /// Always NULL.
        case null
    }

    /// The inputs' aliases in `unnest(…) AS u(…)`, in order.
    var inputs: [String] = []
    /// The input of the record bytes (bound as bytea[], not as a text array).
    var dataInput = 0
    /// The typed columns in the layout's order (sorted once: `TableLayout.sortedColumns` sorts
    /// at every call).
    let sortedColumns: [Column]
    /// (quoted column, expression over `u.<input>`).
    var columns: [(String, String)] = []
    /// Per column (as `columns`), its `COPY` text.
    var cells: [Cell] = []
    let layout: TableLayout

    init(_ layout: TableLayout) {
        self.layout = layout
        sortedColumns = layout.sortedColumns
        var next = 0
        func input() -> (Int, String) {
            defer { next += 1 }
            return (next, "u.i\(next)")
        }
        func add(_ column: String, _ expr: String, _ cell: Cell) {
            columns.append((column, expr))
            cells.append(cell)
        }
        add("tenant", "$1", .tenant)
        for name in ["zone_name", "zone_owner", "record_name", "record_type", "change_tag"] {
            let (i, v) = input()
            add(name, v, .text(i))
        }
        for name in ["created_at", "modified_at"] {
            let (i, v) = input()
            add(name, "\(v)::bigint", .text(i))
        }
        for name in ["created_by", "modified_by"] {
            let (i, v) = input()
            add(name, v, .text(i))
        }
        let (d, data) = input()
        dataInput = d
        add("data", data, .data)
        for c in sortedColumns {
            if c.isList {
                let (i, v) = input()
                switch c.family {
                case .bytes: add(c.sql, "\(v)::bytea[]", .text(i))  // elements `\x…` (see row(_:))
                case .number, .date: add(c.sql, "\(v)::\(c.type.sqlElementType)[]", .text(i))
                default: add(c.sql, "\(v)::text[]", .text(i))
                }
            } else if c.family == .location {
                let (lo, lon) = input()
                let (la, lat) = input()
                add(
                    c.sql, "ST_SetSRID(ST_MakePoint(\(lon)::float8, \(lat)::float8), 4326)::geography",
                    .geography(lo, la))
                for column in c.vectorColumns {
                    let (i, v) = input()
                    add(column, "\(v)::float8", .text(i))
                }
            } else {
                let (i, v) = input()
                switch c.family {
                case .number, .date: add(c.sql, "\(v)::\(c.type.sqlType)", .text(i))
                case .bytes: add(c.sql, "decode(\(v), 'hex')", .bytea(i))
                default: add(c.sql, v, .text(i))
                }
            }
        }
        if layout.searchableFields.isEmpty {
            add("tokens", "NULL::tsvector", .null)
        } else {
            let (i, v) = input()
            add("tokens", "array_to_tsvector(\(v)::text[])", .tsvector(i))
        }
        if layout.hasAssets {
            let (i, v) = input()
            add("asset_refs", "\(v)::text[]", .text(i))
        }
        inputs = (0..<next).map { "i\($0)" }
    }

    /// The error for field `c`'s value `v` that does not fit its column: another list-ness, or
    /// no exact form in the column's type (made only when thrown: building its text for every
    /// column of every row cost more than the row's other texts together).
    static func mismatch(_ c: Column, _ v: FieldValue, _ layout: TableLayout, _ id: RecordID) -> CirrusError {
        let kind = c.family == .number ? (c.type.isInteger ? "INT64" : "DOUBLE") : "\(c.family)"
        return CirrusError(
            .invalidArguments,
            "field \(c.field) holds a \(v.typeName) value; the schema of \(layout.recordType) says "
                + "\(c.isList ? "a list of " : "")\(kind)", recordID: id)
    }

    /// The texts of `r`'s row, one per input; a value of another list-ness than its field's
    /// column, or with no exact form in its type → invalidArguments (as `RecordRow.typedValues`).
    /// `copy`: the tokens as tsvector text (a COPY line's), not as an array literal.
    func row(_ r: Record, copy: Bool = false) throws(CirrusError) -> BatchRow {
        let id = r.recordID
        var out: [String?] = [
            id.zoneID.zoneName, id.zoneID.ownerName, id.recordName, r.recordType, r.recordChangeTag ?? "",
            r.creationDate.map { String($0.millisecondsSince1970) },
            r.modificationDate.map { String($0.millisecondsSince1970) },
            r.creatorUserRecordID.map(SQLText.referenceKey), r.lastModifiedUserRecordID.map(SQLText.referenceKey),
            nil,  // the data input: `BatchRow.data`
        ]
        out.reserveCapacity(inputs.count)
        for c in sortedColumns {
            guard let v = r.fields[c.field] else {
                out.append(nil)
                if !c.isList && c.family == .location { out += [nil, nil, nil, nil] }
                continue
            }
            if c.isList {
                guard case .list(let items) = v else { throw Self.mismatch(c, v, layout, id) }
                var texts: [String?] = []
                for item in items {
                    guard let e = c.type.exact(item) else { throw Self.mismatch(c, v, layout, id) }
                    // Bytes as bytea's text form (`\x` and hex), so the literal casts to bytea[].
                    if case .bytes(let b) = e {
                        texts.append("\\x" + SQLText.hex(b))
                    } else {
                        texts.append(try SQLText.text(e))
                    }
                }
                out.append(ArrayLiteral.make(texts))
            } else {
                guard let v = c.type.exact(v) else { throw Self.mismatch(c, v, layout, id) }
                if case .location(let l) = v {
                    let u = UnitVector(latitude: l.latitude, longitude: l.longitude)
                    out += [
                        SQLText.double(l.longitude), SQLText.double(l.latitude), SQLText.double(u.x),
                        SQLText.double(u.y), SQLText.double(u.z),
                    ]
                } else {
                    out.append(try SQLText.text(v))
                }
            }
        }
        if !layout.searchableFields.isEmpty {
            let tokens = RecordRow.tokens(r, layout)
            out.append(copy ? CopyText.tsvector(tokens) : ArrayLiteral.make(tokens))
        }
        if layout.hasAssets { out.append(ArrayLiteral.make(RecordRow.assetHashes(r))) }
        return BatchRow(texts: out, data: RecordRow.encode(r))
    }

    /// The CTE (or statement) upserting this type's rows from the parameters starting at `first`.
    func upsert(first: Int) -> String {
        let names = columns.map(\.0)
        let params = inputs.indices.map { "$\(first + $0)::\($0 == dataInput ? "bytea" : "text")[]" }
        let updates = names.dropFirst(4).map { "\($0) = EXCLUDED.\($0)" }.joined(separator: ", ")
        return "INSERT INTO \(layout.qualifiedTable) (\(names.joined(separator: ", "))) SELECT "
            + columns.map(\.1).joined(separator: ", ") + " FROM unnest(\(params.joined(separator: ", "))) AS u("
            + inputs.joined(separator: ", ")
            + ") ON CONFLICT (tenant, zone_name, zone_owner, record_name) DO UPDATE SET \(updates)"
    }
}

extension WriteContext {
    /// Runs a statement as a prepared one (PreparedSQL.swift) and returns its rows; its answer
    /// moves the request's deadline.
    func prepared(_ sql: String, _ binds: PostgresBindings) async throws -> [PostgresRow] {
        let rows = try await conn.run(sql, binds, registry: registry, logger: scope.logger)
        Deadline.answered()
        return rows
    }

    /// Runs a statement unprepared — planned for its values and the tables as they are now —
    /// and returns its rows. For the lookups by id (``lookup(_:from:_:lock:_:)``): a prepared
    /// statement keeps the plan made for the table's first, small state (a sequential scan per
    /// id), which a bulk load outgrows before any ANALYZE: each batch then slower than the last.
    func planned(_ sql: String, _ binds: PostgresBindings) async throws -> [PostgresRow] {
        var out: [PostgresRow] = []
        for try await r in try await conn.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: scope.logger) {
            out.append(r)
        }
        Deadline.answered()
        return out
    }

    /// `SELECT <columns> FROM <table> WHERE <key> [FOR UPDATE]` for each record id of `ids`, as one
    /// statement: the ids' three text arrays unnested, and per id a LATERAL subquery on the
    /// primary key — one index probe per id when the table's statistics are current (an
    /// `(…) IN (SELECT * FROM unnest(…))` became a nested loop over a sequential scan of
    /// `cirrus_names`). Without statistics the planner may probe another index whose prefix
    /// matches (`cirrus_names_seq`) and read a whole zone per id: the store keeps them current
    /// while it writes (PostgresStore+Growth.swift). The tenant is `$1`; the arrays are appended
    /// to `b`.
    static func lookup(
        _ columns: String, from table: String, _ ids: [RecordID], lock: Bool, _ b: inout PostgresBindings
    ) -> String {
        "SELECT l.* FROM unnest(\(keyArrays(ids, &b))) AS u(z, o, r) "
            + "CROSS JOIN LATERAL (SELECT \(columns) FROM \(table) WHERE tenant = $1 AND zone_name = u.z AND "
            + "zone_owner = u.o AND record_name = u.r\(lock ? " FOR UPDATE" : "")) l"
    }

    /// `tenant = $1 AND (zone_name, zone_owner, record_name) IN (unnest of three text arrays)`
    /// with the arrays as parameters `$a, $b, $c` (appended to `b`).
    static func keys(_ ids: [RecordID], _ b: inout PostgresBindings, name: String = "record_name") -> String {
        "tenant = $1 AND (zone_name, zone_owner, \(name)) IN (SELECT * FROM unnest(\(keyArrays(ids, &b))))"
    }

    /// Appends the ids' zone names, zone owners and record names to `b` as three text arrays and
    /// returns their parameters, `$a::text[], $b::text[], $c::text[]` (in that order).
    static func keyArrays(_ ids: [RecordID], _ b: inout PostgresBindings) -> String {
        b.append(ids.map(\.zoneID.zoneName))
        b.append(ids.map(\.zoneID.ownerName))
        b.append(ids.map(\.recordName))
        let n = b.count
        return "$\(n - 2)::text[], $\(n - 1)::text[], $\(n)::text[]"
    }

    /// Saves `items` (all saves of distinct records; see the file header) and returns each one's
    /// outcome — the record as stored and the server's version it replaced — in order. With
    /// `atomically`, nothing is written when an item fails.
    func saveBatch(
        _ items: [(record: Record, policy: PostgresSavePolicy, merging: Bool)], tag: String, atomically: Bool,
        zones: Bool, authorize: (@Sendable (String, Record?, RecordID) throws -> Void)?
    ) async throws -> [Result<(stored: Record, server: Record?), CirrusError>] {
        var batch = BatchSave(ctx: self, items: items, tag: tag)
        // 1. Custom zones exist (locked FOR SHARE, so a deletion of the zone waits).
        if zones { try await batch.checkZones() }
        // The checks a save makes before it reads the server (WriteContext.save).
        batch.checkItems()
        // 2. The names, locked: which exist, and with which type.
        let asked = items.indices.filter { batch.outcome[$0] == nil }
        let serverTypes = try await batch.lockNames(asked)
        // 3. The current rows of the names that exist, locked, per type.
        let servers = try await batch.readServers(asked, serverTypes)
        // 4. Each item as the item-by-item path would save it.
        let recordsBefore = try await batch.recordsBefore(asked, serverTypes)
        for i in asked where batch.outcome[i] == nil {
            try batch.stage(
                i, server: servers[items[i].record.recordID], recordsBefore: recordsBefore, authorize: authorize)
        }
        let results = batch.outcome.enumerated().map { i, o in
            o ?? .failure(CirrusError(.internalError, "no outcome", recordID: items[i].record.recordID))
        }
        if atomically && results.contains(where: { if case .failure = $0 { true } else { false } }) { return results }
        if batch.rowsByType.isEmpty { return results }
        // 5. Every write in one statement.
        try await writeBatch(
            batch.rowsByType, batch.columnsByType, newIDs: batch.newIDs, newTypes: batch.newTypes,
            oldIDs: batch.oldIDs, unreferencing: batch.unreferencing, newCount: batch.newCount)
        return results
    }

    /// Writes a batch in one statement (step 5 of the file header): claims `newIDs` (of
    /// `newTypes`) and drops their tombstones, stamps `oldIDs` with the request's sequence, drops
    /// the deleteSelf references `unreferencing` held, adds `newCount` to the record count and
    /// upserts every type's rows. A statement PostgreSQL refuses throws `batchRefused`.
    func writeBatch(
        _ rowsByType: [String: BatchRows], _ columnsByType: [String: BatchColumns], newIDs: [RecordID],
        newTypes: [String], oldIDs: [RecordID], unreferencing: [RecordID], newCount: Int
    ) async throws {
        var b = PostgresBindings()
        b.append(scope.tenant)
        b.append(String(sequence))
        b.append(newIDs.map(\.zoneID.zoneName))
        b.append(newIDs.map(\.zoneID.ownerName))
        b.append(newIDs.map(\.recordName))
        b.append(newTypes)
        let names = SQLName.qualified(scope.namespace, "cirrus_names")
        var ctes = [
            "cn AS (INSERT INTO \(names) (tenant, zone_name, zone_owner, record_name, record_type, seq) "
                + "SELECT $1, z, o, r, t, $2::bigint FROM unnest($3::text[], $4::text[], $5::text[], $6::text[]) "
                + "AS u(z, o, r, t))",
            "ct AS (DELETE FROM \(SQLName.qualified(scope.namespace, "cirrus_tombstones")) WHERE tenant = $1 AND "
                + "(zone_name, zone_owner, record_name) IN (SELECT * FROM unnest($3::text[], $4::text[], $5::text[])))",
        ]
        let old = Self.keys(oldIDs, &b)
        ctes.append("co AS (UPDATE \(names) SET seq = $2::bigint WHERE \(old))")
        let refs = Self.keys(unreferencing, &b, name: "source_name")
        ctes.append("cf AS (DELETE FROM \(SQLName.qualified(scope.namespace, "cirrus_backrefs")) WHERE \(refs))")
        b.append(String(newCount))
        ctes.append(
            "cc AS (UPDATE \(SQLName.qualified(scope.namespace, "cirrus_tenants")) SET records = records + $\(b.count)::bigint "
                + "WHERE tenant = $1)")
        for (k, (type, rows)) in rowsByType.sorted(by: { $0.key < $1.key }).enumerated() {
            guard let columns = columnsByType[type] else { continue }
            let first = b.count + 1
            for (i, input) in rows.inputs.enumerated() {
                if i == columns.dataInput {
                    b.append(rows.data.map { ByteBuffer(bytes: $0) })
                } else {
                    b.append(ArrayLiteral.make(input))
                }
            }
            ctes.append("w\(k) AS (\(columns.upsert(first: first)))")
        }
        do {
            _ = try await prepared("WITH " + ctes.joined(separator: ",\n") + "\nSELECT 1", b)
        } catch {
            let count = rowsByType.values.map(\.count).reduce(0, +)
            var e = PostgresStore.mapError(error, what: "writing a batch of \(count) records", address: "")
            e.batchRefused = true
            throw e
        }
    }
}

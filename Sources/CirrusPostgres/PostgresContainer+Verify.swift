// PostgresContainer+Verify: `cirrus verify --postgres` — a read-only check that a container's
// tables on PostgreSQL agree with each other, the counterpart of a directory's log and index
// check. PostgreSQL keeps its own files and indexes consistent (its WAL, `amcheck` for B-trees);
// what only Cirrus can check is its own bookkeeping:
//
//   - every name in `cirrus_names` has its row in its type's table, and every row its name;
//   - each tenant's record count (`cirrus_tenants.records`, the quota's) equals its names;
//   - every row's `data` decodes (RecordLog's codec) to a record of the row's key and type.
//
// Rows are read a page at a time (keyset on the primary key), so memory follows the page.

import CirrusFacade
import NIOCore
import PostgresNIO
import RecordModel

/// What `verify()` found in one environment of a container on PostgreSQL.
public struct PostgresVerifyReport: Sendable {
    /// The environment's namespace.
    public var namespace: String
    /// Live records (names), per record type.
    public var recordsByType: [String: Int] = [:]
    /// Tenants (databases) holding records.
    public var tenants = 0
    /// Rows whose stored record was decoded and compared with its key.
    public var rowsChecked = 0
    /// What does not agree, one line each (empty: clean).
    public var problems: [String] = []

    /// Whether nothing disagrees.
    public var isClean: Bool { problems.isEmpty }

    /// The report as text, ending with `status: clean` or `status: DAMAGED`.
    public var text: String {
        var s = "namespace \(namespace): \(tenants) databases, \(rowsChecked) rows checked\n"
        for (t, n) in recordsByType.sorted(by: { compareUTF8($0.key, $1.key) < 0 }) { s += "  type \(t): \(n)\n" }
        for p in problems.prefix(50) { s += "problem: \(p)\n" }
        if problems.count > 50 { s += "… \(problems.count - 50) more problems\n" }
        return s + (isClean ? "status: clean\n" : "status: DAMAGED\n")
    }
}

extension PostgresContainer {
    /// Checks this environment's tables against each other (see the file header); read-only.
    public func verify(pageSize: Int = 5000) async throws(CirrusError) -> PostgresVerifyReport {
        do {
            return try await root.verify(pageSize: pageSize)
        } catch {
            throw error
        }
    }
}

extension PostgresStore {
    /// The checks of ``PostgresContainer/verify(pageSize:)`` on this store's namespace.
    func verify(pageSize: Int) async throws(CirrusError) -> PostgresVerifyReport {
        var report = PostgresVerifyReport(namespace: tenant.namespace)
        try await verifyCounts(&report)
        for layout in tables.values.sorted(by: { $0.table < $1.table }) {
            try await verifyNames(layout, &report)
            try await verifyRecords(layout, pageSize: pageSize, &report)
        }
        return report
    }

    /// The rows of a read-only statement of the check (retried as a read when the session fails).
    private func verifyRows(
        _ sql: String, _ binds: PostgresBindings = PostgresBindings()
    ) async throws(CirrusError) -> [PostgresRow] {
        let logger = self.logger
        return try await run("verifying \(tenant.namespace)", retryRead: true) { client in
            var out: [PostgresRow] = []
            for try await r in try await client.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger) {
                out.append(r)
            }
            return out
        }
    }

    /// `body`'s value; a column that does not decode is an internal error naming the namespace.
    private func verifyDecoding<T>(_ body: () throws -> T) throws(CirrusError) -> T {
        do { return try body() } catch {
            throw CirrusError(.internalError, "verify: an unexpected column in \(tenant.namespace): \(error)")
        }
    }

    /// The records per type, and each tenant's record count against its names.
    private func verifyCounts(_ report: inout PostgresVerifyReport) async throws(CirrusError) {
        let namespace = tenant.namespace
        let names = SQLName.qualified(namespace, "cirrus_names")
        for r in try await verifyRows("SELECT record_type, count(*) FROM \(names) GROUP BY record_type") {
            let (type, n) = try verifyDecoding { try r.decode((String, Int64).self) }
            report.recordsByType[type] = Int(n)
        }
        for r in try await verifyRows(
            "SELECT t.tenant, t.records, (SELECT count(*) FROM \(names) n WHERE n.tenant = t.tenant) FROM "
                + "\(SQLName.qualified(namespace, "cirrus_tenants")) t")
        {
            let (tenantKey, counted, actual) = try verifyDecoding { try r.decode((String, Int64, Int64).self) }
            if actual > 0 { report.tenants += 1 }
            if counted != actual {
                report.problems.append(
                    "database \(tenantKey): its record count says \(counted), it has \(actual) records")
            }
        }
    }

    /// Every name of `layout`'s type has its row, and every row of its table its name.
    private func verifyNames(_ layout: TableLayout, _ report: inout PostgresVerifyReport) async throws(CirrusError) {
        let names = SQLName.qualified(tenant.namespace, "cirrus_names")
        let table = layout.qualifiedTable
        let key = "tenant, zone_name, zone_owner, record_name"
        var b = PostgresBindings()
        b.append(layout.recordType)
        for r in try await verifyRows(
            "SELECT tenant, zone_name, record_name FROM \(names) n WHERE record_type = $1 AND NOT EXISTS "
                + "(SELECT 1 FROM \(table) d WHERE (d.\(key.replacingOccurrences(of: ", ", with: ", d."))) = "
                + "(n.\(key.replacingOccurrences(of: ", ", with: ", n."))))", b)
        {
            let (t, z, n) = try verifyDecoding { try r.decode((String, String, String).self) }
            report.problems.append("database \(t): \(layout.recordType) \(n) in zone \(z) has a name but no row")
        }
        for r in try await verifyRows(
            "SELECT tenant, zone_name, record_name FROM \(table) d WHERE NOT EXISTS (SELECT 1 FROM \(names) n "
                + "WHERE (n.\(key.replacingOccurrences(of: ", ", with: ", n."))) = "
                + "(d.\(key.replacingOccurrences(of: ", ", with: ", d."))) AND n.record_type = $1)", b)
        {
            let (t, z, n) = try verifyDecoding { try r.decode((String, String, String).self) }
            report.problems.append("database \(t): \(layout.recordType) \(n) in zone \(z) has a row but no name")
        }
    }

    /// Every row's stored record of `layout`'s table decodes to a record of the row's key and
    /// type; read a page of `pageSize` rows at a time (keyset on the primary key).
    private func verifyRecords(
        _ layout: TableLayout, pageSize: Int, _ report: inout PostgresVerifyReport
    ) async throws(CirrusError) {
        let table = layout.qualifiedTable
        let key = "tenant, zone_name, zone_owner, record_name"
        var after = ("", "", "", "")
        while true {
            var p = PostgresBindings()
            p.append(after.0)
            p.append(after.1)
            p.append(after.2)
            p.append(after.3)
            p.append(Int64(pageSize))
            let page = try await verifyRows(
                "SELECT \(key), record_type, data FROM \(table) WHERE (\(key)) > ($1, $2, $3, $4) "
                    + "ORDER BY \(key) LIMIT $5", p)
            for r in page {
                let (t, z, o, n, type, data) = try verifyDecoding {
                    try r.decode((String, String, String, String, String, ByteBuffer).self)
                }
                after = (t, z, o, n)
                report.rowsChecked += 1
                let where_ = "database \(t): \(layout.recordType) \(n) in zone \(z)"
                let record: Record
                do {
                    record = try RecordRow.decode(Array(data.readableBytesView))
                } catch {
                    report.problems.append("\(where_): its stored record does not decode: \(error)")
                    continue
                }
                let id = record.recordID
                if id.recordName != n || id.zoneID.zoneName != z || id.zoneID.ownerName != o {
                    report.problems.append(
                        "\(where_): its stored record is \(id.recordName) in zone \(id.zoneID.zoneName)")
                }
                if record.recordType != layout.recordType || type != layout.recordType {
                    report.problems.append("\(where_): its stored record is a \(record.recordType)")
                }
            }
            if page.count < pageSize { break }
        }
    }
}

extension PostgresContainer {
    /// Whether the container has tables in `environment` on the server at `url` (its stored
    /// schema), without creating anything.
    public static func exists(
        url: String, containerID: String, environment: Environment, timeout: Duration = .seconds(15)
    ) async throws(CirrusError) -> Bool {
        let tenant = PostgresTenant(containerID: containerID, environment: environment, database: .public)
        let store: PostgresStore
        do {
            store = try await PostgresStore.connect(url: url, tenant: tenant, timeout: timeout)
        } catch {
            throw error
        }
        let found: Result<Bool, CirrusError>
        do { found = .success(try await store.hasStoredSchema()) } catch { found = .failure(error) }
        await store.close()
        do { return try found.get() } catch { throw error }
    }
}

extension PostgresStore {
    /// Whether this namespace holds a stored schema (`cirrus_schema`).
    func hasStoredSchema() async throws(CirrusError) -> Bool {
        var b = PostgresBindings()
        b.append(SQLName.qualified(tenant.namespace, "cirrus_schema"))
        let binds = b
        return try await run("looking for \(tenant.namespace)", retryRead: true) { client in
            var found = false
            for try await e in try await client.query(
                PostgresQuery(unsafeSQL: "SELECT to_regclass($1) IS NOT NULL", binds: binds)
            ).decode(Bool.self) { found = e }
            return found
        }
    }
}

// PostgresStore+Export: a tenant's records read back as a container's export — zone by zone,
// each in commit order, a page at a time with keyset positions (`cirrus export --postgres`).

import CirrusFacade
import CirrusIO
import Foundation
import Indexes
import Logging
import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO
import RecordModel

extension PostgresStore {
    /// Every record of this tenant (of `type`, in `zone` when given), zone by zone (the default
    /// zone first, then the custom zones by name), each zone in commit order — by the sequence of
    /// the request that last wrote a record, then by record id — handed to `write` a page of
    /// `pageSize` at a time (read with keyset positions on the names' index, so memory follows
    /// the page). Returns how many were written.
    ///
    /// ```swift
    /// let n = try await store.exportRecords { record in print(record.webServicesJSON.jsonText) }
    /// ```
    @discardableResult
    public nonisolated func exportRecords(
        type: String? = nil, zone: ZoneID? = nil, pageSize: Int = 1000, write: (Record) throws -> Void
    ) async throws -> Int {
        let key = tenant.key
        let namespace = tenant.namespace
        let registry = statements
        let logger = self.logger
        var zones: [String]
        if let zone {
            zones = [zone.zoneName]
        } else {
            zones = [ZoneID.defaultZoneName]
            var b = PostgresBindings()
            b.append(key)
            let binds = b
            let custom = try await run("listing the zones of \(key)", retryRead: true) { client in
                try await client.run(
                    "SELECT zone_name FROM \(SQLName.qualified(namespace, "cirrus_zones")) WHERE tenant = $1 "
                        + "ORDER BY zone_name", binds, registry: registry, logger: logger
                ).map { try $0.decode(String.self) }
            }
            zones += custom.filter { $0 != ZoneID.defaultZoneName }
        }
        var count = 0
        for zoneName in zones {
            var after: (Int64, String, String) = (-1, "", "")
            while true {
                var b = PostgresBindings()
                b.append(key)
                b.append(zoneName)
                b.append(String(after.0))
                b.append(after.1)
                b.append(after.2)
                b.append(String(pageSize))
                var sql =
                    "SELECT seq, zone_owner, record_name FROM \(SQLName.qualified(namespace, "cirrus_names")) "
                    + "WHERE tenant = $1 AND zone_name = $2 AND (seq, zone_owner, record_name) > ($3::bigint, $4, $5)"
                if let type {
                    b.append(type)
                    sql += " AND record_type = $7"
                }
                sql += " ORDER BY seq, zone_owner, record_name LIMIT $6::bigint"
                let binds = b
                let statement = sql
                let page = try await run("exporting the records of \(key)", retryRead: true) { client in
                    try await client.run(statement, binds, registry: registry, logger: logger).map {
                        try $0.decode((Int64, String, String).self)
                    }
                }
                if page.isEmpty { break }
                let ids = page.map { RecordID(recordName: $0.2, zoneID: ZoneID(zoneName: zoneName, ownerName: $0.1)) }
                let found = try await records(for: ids)
                for id in ids {
                    guard let r = found[id] else { continue }
                    try write(r)
                    count += 1
                }
                guard let last = page.last, page.count == pageSize else { break }
                after = last
            }
        }
        return count
    }
}

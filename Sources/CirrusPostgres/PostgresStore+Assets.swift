// Assets on PostgreSQL: files stored beside records, addressed by the SHA-256 of their content,
// one copy per tenant (`cirrus_assets`: tenant, hash, bytes, stored_at — the server's clock in
// ms). A record refers to its assets through `asset_refs` (its types' tables, GIN-indexed).
//
// Sweep: an asset no live record of its tenant refers to, stored (or stored again) more than
// `assetRetention` ago, is deleted. A fresh upload is never swept, so a client has that long to
// save the record that uses it (as CloudKit's upload URLs expire); storing the same bytes again
// renews it. The sweep runs, at most once a minute per store, when an asset is stored and after
// a request that deleted or replaced a record holding assets.

import CirrusFacade
import Crypto
import Foundation
import NIOCore
import PostgresNIO
import RecordModel

extension PostgresStore {
    /// How long an asset no record refers to is kept after it was stored: one hour.
    public static let assetRetention: Duration = .seconds(3600)

    /// Stores `bytes` as an asset of this tenant (nothing new when the same bytes are stored).
    public func storeAsset(_ bytes: [UInt8]) async throws(CirrusError) -> Asset {
        let hash = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
        let table = SQLName.qualified(tenant.namespace, "cirrus_assets")
        let key = tenant.key
        let logger = self.logger
        let partitioned = layout == .hashPartitioned
        try await run("storing an asset of \(key)") { client in
            try await client.withTransaction(logger: logger) { conn in
                var b = SQLBuilder()
                let t = b.param(key)
                let h = b.param(hash)
                let data = "decode(\(b.param(SQLText.hex(bytes))), 'hex')"
                let now = "(extract(epoch from clock_timestamp()) * 1000)::bigint"
                if partitioned {
                    var updated = false
                    for try await _ in try await conn.query(
                        PostgresQuery(
                            unsafeSQL: "UPDATE \(table) SET stored_at = \(now) WHERE tenant = \(t) AND hash = \(h) "
                                + "RETURNING 1", binds: b.binds), logger: logger)
                    { updated = true }
                    if updated { return }
                }
                for try await _ in try await conn.query(
                    PostgresQuery(
                        unsafeSQL: "INSERT INTO \(table) (tenant, hash, bytes, stored_at) VALUES (\(t), \(h), \(data), "
                            + "\(now))"
                            + (partitioned
                                ? "" : " ON CONFLICT (tenant, hash) DO UPDATE SET stored_at = EXCLUDED.stored_at"),
                        binds: b.binds), logger: logger)
                {}
            }
        }
        _ = try? await sweepAssets()
        return Asset(contentHash: hash, size: Int64(bytes.count))
    }

    /// The bytes of this tenant's asset `hash`; unknownItem when it has none.
    public func assetBytes(_ hash: String) async throws(CirrusError) -> [UInt8] {
        let table = SQLName.qualified(tenant.namespace, "cirrus_assets")
        let key = tenant.key
        let found: [UInt8]? = try await run("reading an asset of \(key)", retryRead: true) { client in
            var b = SQLBuilder()
            let t = b.param(key)
            let h = b.param(hash)
            var out: [UInt8]? = nil
            for try await data in try await client.query(
                PostgresQuery(
                    unsafeSQL: "SELECT bytes FROM \(table) WHERE tenant = \(t) AND hash = \(h)", binds: b.binds)
            ).decode(ByteBuffer.self) { out = Array(data.readableBytesView) }
            return out
        }
        guard let found else {
            throw CirrusError(.unknownItem, "no asset \(hash) in \(key)", location: address)
        }
        return found
    }

    /// Deletes this tenant's assets that no record refers to and that were stored more than
    /// `retention` ago (at most once a minute unless `force`); returns how many.
    @discardableResult
    public func sweepAssets(
        force: Bool = false, retention: Duration = PostgresStore.assetRetention
    ) async throws(CirrusError) -> Int {
        let now = ContinuousClock.now
        if !force, let last = lastAssetSweep, now - last < .seconds(60) { return 0 }
        lastAssetSweep = now
        let referring = tables.values.filter(\.hasAssets).map(\.qualifiedTable).sorted()
        let table = SQLName.qualified(tenant.namespace, "cirrus_assets")
        let key = tenant.key
        let retention = retention.components.seconds * 1000 + retention.components.attoseconds / 1_000_000_000_000_000
        return try await run("sweeping the assets of \(key)") { client in
            var b = SQLBuilder()
            let t = b.param(key)
            let keep = referring.map {
                " AND NOT EXISTS (SELECT 1 FROM \($0) r WHERE r.tenant = a.tenant AND r.asset_refs @> ARRAY[a.hash::text])"
            }.joined()
            var n = 0
            for try await _ in try await client.query(
                PostgresQuery(
                    unsafeSQL: "DELETE FROM \(table) a WHERE a.tenant = \(t) AND a.stored_at < "
                        + "(extract(epoch from clock_timestamp()) * 1000)::bigint - \(retention)\(keep) RETURNING 1",
                    binds: b.binds))
            { n += 1 }
            return n
        }
    }
}

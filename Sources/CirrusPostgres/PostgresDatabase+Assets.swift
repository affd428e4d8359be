// Assets through the façade on PostgreSQL, with the embedded engine's rules: storing needs a
// signed-in user with access to the database; reading goes through a record this identity may
// read that holds the asset (else that record's error, or unknownItem). Storage and the sweep of
// unreferenced assets: PostgresStore+Assets.swift.

import CirrusFacade
import RecordModel

extension PostgresDatabase {
    /// Stores bytes as an asset of this database and returns the value to put in a field.
    public func storeAsset(_ bytes: [UInt8]) async throws(CirrusError) -> Asset {
        try Self.checkCancelled()
        try AccessRules.checkDatabaseAccess(scope: scope, identity: identity)
        if identity.userRecordName == nil {
            throw CirrusError(.notAuthenticated, "storing an asset needs a signed-in user")
        }
        do {
            return try await store.storeAsset(bytes)
        } catch {
            throw error
        }
    }

    /// The content of an asset of a record this identity may read.
    public func assetData(_ asset: Asset, of recordID: RecordID) async throws(CirrusError) -> [UInt8] {
        guard let (_, result) = try await records(for: [recordID]).first else {
            throw CirrusError(.internalError, "no result for the record", recordID: recordID)
        }
        let record = try result.get()
        guard record.fields.values.contains(where: { $0.elements.contains(.asset(asset)) }) else {
            throw CirrusError(.unknownItem, "the record has no asset \(asset.contentHash)", recordID: recordID)
        }
        do {
            return try await store.assetBytes(asset.contentHash)
        } catch {
            var e = error
            if e.code == .unknownItem {
                e = CirrusError(
                    .internalError, "asset \(asset.contentHash) of the record is missing", recordID: recordID)
            }
            throw e
        }
    }
}

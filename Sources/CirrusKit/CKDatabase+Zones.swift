// CKDatabase: zones, zone and database changes, subscriptions (async forms).

import Cirrus
import RecordModel

extension CKDatabase {
    /// Changes in a zone.
    public struct RecordZoneChange: Sendable {
        /// A record created or changed.
        public struct Modification: Sendable {
            /// The record as it is now.
            public let record: CKRecord
        }
        /// A record deleted.
        public struct Deletion: Sendable {
            /// Its id.
            public let recordID: CKRecord.ID
            /// Its type.
            public let recordType: CKRecord.RecordType
        }
    }

    /// Changes in a database's zones.
    public struct DatabaseChange: Sendable {
        /// A zone created or with changed records.
        public struct Modification: Sendable {
            /// The zone.
            public let zoneID: CKRecordZone.ID
        }
        /// A zone deleted.
        public struct Deletion: Sendable {
            /// The zone.
            public let zoneID: CKRecordZone.ID
            /// Whether the user purged it (never, in Cirrus).
            public let purged: Bool
        }
    }

    // MARK: zones

    /// Every zone of the database: the default zone, then custom zones by name.
    public func allRecordZones() async throws -> [CKRecordZone] {
        try await backend.allZones().map { CKRecordZone(zoneID: CKRecordZone.ID($0)) }
    }

    /// The zone with `zoneID`; zoneNotFound when there is none.
    public func recordZone(for zoneID: CKRecordZone.ID) async throws -> CKRecordZone {
        guard let result = try await recordZones(for: [zoneID])[zoneID] else {
            throw CKError(.zoneNotFound, "zone \"\(zoneID.zoneName)\" does not exist")
        }
        return try result.get()
    }

    /// The zones with `ids`, each as a result (zoneNotFound for a missing one).
    public func recordZones(
        for ids: [CKRecordZone.ID]
    ) async throws -> [CKRecordZone.ID: Result<CKRecordZone, any Error>] {
        let all = Set(try await backend.allZones().map { CKRecordZone.ID($0) })
        var out: [CKRecordZone.ID: Result<CKRecordZone, any Error>] = [:]
        for id in ids {
            out[id] =
                all.contains(id)
                ? .success(CKRecordZone(zoneID: id))
                : .failure(CKError(.zoneNotFound, "zone \"\(id.zoneName)\" does not exist"))
        }
        return out
    }

    /// Creates `zone` (saving an existing zone succeeds).
    public func save(_ zone: CKRecordZone) async throws -> CKRecordZone {
        let r = try await modifyRecordZones(saving: [zone], deleting: [])
        guard let result = r.saveResults[zone.zoneID] else { throw CKError(.internalError, "no result for the zone") }
        return try result.get()
    }

    /// Deletes the zone with `zoneID` and every record in it.
    @discardableResult
    public func deleteRecordZone(withID zoneID: CKRecordZone.ID) async throws -> CKRecordZone.ID {
        let r = try await modifyRecordZones(saving: [], deleting: [zoneID])
        if case .failure(let e)? = r.deleteResults[zoneID] { throw e }
        return zoneID
    }

    /// Creates and deletes zones: a result per zone.
    public func modifyRecordZones(
        saving recordZonesToSave: [CKRecordZone], deleting recordZoneIDsToDelete: [CKRecordZone.ID]
    ) async throws -> ModifyResults<CKRecordZone.ID, CKRecordZone> {
        let r = try await backend.modifyZones(
            saving: recordZonesToSave.map(\.zoneID.cirrus), deleting: recordZoneIDsToDelete.map(\.cirrus))
        return (
            Self.byID(recordZonesToSave.map(\.zoneID), r.saved.map { $0.1.map { CKRecordZone(zoneID: .init($0)) } }),
            Self.byID(recordZoneIDsToDelete, r.deleted.map(\.1))
        )
    }

    // MARK: changes

    /// The records changed and deleted in `zoneID` since `changeToken` (nil: from the start):
    /// one page of at most `resultsLimit` changes, a token to continue from, and whether more
    /// follow. changeTokenExpired when the token is too old or of another zone.
    public func recordZoneChanges(
        inZoneWith zoneID: CKRecordZone.ID, since changeToken: CKServerChangeToken?,
        desiredKeys: [CKRecord.FieldKey]? = nil, resultsLimit: Int? = nil
    ) async throws -> (
        modificationResultsByID: [CKRecord.ID: Result<CKDatabase.RecordZoneChange.Modification, any Error>],
        deletions: [CKDatabase.RecordZoneChange.Deletion], changeToken: CKServerChangeToken, moreComing: Bool
    ) {
        let page = try await backend.zoneChanges(zoneID.cirrus, since: changeToken?.data, limit: resultsLimit)
        var modifications: [CKRecord.ID: Result<CKDatabase.RecordZoneChange.Modification, any Error>] = [:]
        for r in page.changed {
            var p = r
            if let keys = desiredKeys {
                p.fields = RecordFields(r.fields.filter { keys.contains($0.key) }.map { ($0.key, $0.value) })
            }
            let rec = await makeRecord(p)
            modifications[rec.recordID] = .success(RecordZoneChange.Modification(record: rec))
        }
        let deletions = page.deleted.map { RecordZoneChange.Deletion(recordID: CKRecord.ID($0.0), recordType: $0.1) }
        return (modifications, deletions, CKServerChangeToken(data: page.token), page.moreComing)
    }

    /// The zones created, changed or deleted since `changeToken` (nil: every zone).
    public func databaseChanges(
        since changeToken: CKServerChangeToken?, resultsLimit: Int? = nil
    ) async throws -> (
        modifications: [CKDatabase.DatabaseChange.Modification], deletions: [CKDatabase.DatabaseChange.Deletion],
        changeToken: CKServerChangeToken, moreComing: Bool
    ) {
        let page = try await backend.databaseChanges(since: changeToken?.data, limit: resultsLimit)
        return (
            page.changed.map { DatabaseChange.Modification(zoneID: CKRecordZone.ID($0)) },
            page.deleted.map { DatabaseChange.Deletion(zoneID: CKRecordZone.ID($0), purged: false) },
            CKServerChangeToken(data: page.token), page.moreComing
        )
    }

    // MARK: subscriptions

    /// Saves `subscription` (its predicate is checked as a query's).
    public func save(_ subscription: CKSubscription) async throws -> CKSubscription {
        let r = try await modifySubscriptions(saving: [subscription], deleting: [])
        guard let result = r.saveResults[subscription.subscriptionID] else {
            throw CKError(.internalError, "no result for the subscription")
        }
        return try result.get()
    }

    /// The subscription with `id`; unknownItem when there is none.
    public func subscription(for id: CKSubscription.ID) async throws -> CKSubscription {
        guard let s = try await backend.allSubscriptions().first(where: { $0.id == id }) else {
            throw CKError(.unknownItem, "subscription \"\(id)\" not found")
        }
        return CKSubscription.from(s)
    }

    /// Every subscription of the database.
    public func allSubscriptions() async throws -> [CKSubscription] {
        try await backend.allSubscriptions().map(CKSubscription.from)
    }

    /// Deletes the subscription with `id`.
    @discardableResult
    public func deleteSubscription(withID id: CKSubscription.ID) async throws -> CKSubscription.ID {
        try await backend.deleteSubscription(id)
        return id
    }

    /// Saves and deletes subscriptions: a result per subscription.
    public func modifySubscriptions(
        saving subscriptionsToSave: [CKSubscription], deleting subscriptionIDsToDelete: [CKSubscription.ID]
    ) async throws -> ModifyResults<CKSubscription.ID, CKSubscription> {
        let backend = self.backend
        var saves: [CKSubscription.ID: Result<CKSubscription, any Error>] = [:]
        for s in subscriptionsToSave {
            do throws(CKError) {
                _ = try await backend.save(try s.cirrusSubscription())
                saves[s.subscriptionID] = .success(s)
            } catch {
                saves[s.subscriptionID] = .failure(error)
            }
        }
        var deletes: [CKSubscription.ID: Result<Void, any Error>] = [:]
        for id in subscriptionIDsToDelete {
            do throws(CKError) {
                try await backend.deleteSubscription(id)
                deletes[id] = .success(())
            } catch {
                deletes[id] = .failure(error)
            }
        }
        return (saves, deletes)
    }
}

// Zone lookups and subscriptions as operations: CKFetchRecordZonesOperation,
// CKModifySubscriptionsOperation and CKFetchSubscriptionsOperation — thin wrappers over the
// async CKDatabase methods, reporting per item as Apple's do.

/// Fetches zones by id, or every zone.
open class CKFetchRecordZonesOperation: CKDatabaseOperation, @unchecked Sendable {
    /// The ids to fetch (nil: every zone).
    open var recordZoneIDs: [CKRecordZone.ID]?
    /// Called with each zone's outcome (zoneNotFound for a missing one).
    open var perRecordZoneResultBlock: ((CKRecordZone.ID, Result<CKRecordZone, any Error>) -> Void)?
    /// Called last: success, partialFailure, or the request's error.
    open var fetchRecordZonesResultBlock: ((Result<Void, any Error>) -> Void)?
    /// Called last (deprecated by Apple): the zones by id, and the error.
    open var fetchRecordZonesCompletionBlock: (([CKRecordZone.ID: CKRecordZone]?, (any Error)?) -> Void)?

    /// An operation fetching every zone.
    public class func fetchAllRecordZonesOperation() -> Self { Self(recordZoneIDs: nil) }

    /// An operation fetching `recordZoneIDs` (nil: every zone).
    public required init(recordZoneIDs: [CKRecordZone.ID]?) {
        self.recordZoneIDs = recordZoneIDs
        super.init()
    }

    override func perform() async {
        let db = targetDatabase
        do {
            if isCancelled { throw cancelledError }
            var ids: [CKRecordZone.ID]
            if let given = recordZoneIDs { ids = given } else { ids = try await db.allRecordZones().map(\.zoneID) }
            let found = try await db.recordZones(for: ids)
            var zones: [CKRecordZone.ID: CKRecordZone] = [:]
            var failures: [AnyHashable: any Error] = [:]
            for id in ids {
                guard let result = found[id] else { continue }
                perRecordZoneResultBlock?(id, result)
                switch result {
                case .success(let z): zones[id] = z
                case .failure(let e): failures[id] = e
                }
            }
            let error = CKOperation.partialFailure(failures, of: ids.count)
            fetchRecordZonesResultBlock?(error.map { .failure($0) } ?? .success(()))
            fetchRecordZonesCompletionBlock?(zones, error)
        } catch {
            fetchRecordZonesResultBlock?(.failure(error))
            fetchRecordZonesCompletionBlock?(nil, error)
        }
    }
}

/// Saves and deletes subscriptions.
open class CKModifySubscriptionsOperation: CKDatabaseOperation, @unchecked Sendable {
    /// The subscriptions to save.
    open var subscriptionsToSave: [CKSubscription]?
    /// The ids of the subscriptions to delete.
    open var subscriptionIDsToDelete: [CKSubscription.ID]?
    /// Called with each subscription's outcome.
    open var perSubscriptionSaveBlock: ((CKSubscription.ID, Result<CKSubscription, any Error>) -> Void)?
    /// Called with each deletion's outcome.
    open var perSubscriptionDeleteBlock: ((CKSubscription.ID, Result<Void, any Error>) -> Void)?
    /// Called last: success, partialFailure, or the request's error.
    open var modifySubscriptionsResultBlock: ((Result<Void, any Error>) -> Void)?
    /// Called last (deprecated by Apple): the saved subscriptions, the deleted ids, the error.
    open var modifySubscriptionsCompletionBlock: (([CKSubscription]?, [CKSubscription.ID]?, (any Error)?) -> Void)?

    /// An operation saving `subscriptionsToSave` and deleting `subscriptionIDsToDelete`.
    public init(subscriptionsToSave: [CKSubscription]? = nil, subscriptionIDsToDelete: [CKSubscription.ID]? = nil) {
        self.subscriptionsToSave = subscriptionsToSave
        self.subscriptionIDsToDelete = subscriptionIDsToDelete
        super.init()
    }

    override func perform() async {
        let saving = subscriptionsToSave ?? []
        let deleting = subscriptionIDsToDelete ?? []
        do {
            if isCancelled { throw cancelledError }
            let r = try await targetDatabase.modifySubscriptions(saving: saving, deleting: deleting)
            var failures: [AnyHashable: any Error] = [:]
            var saved: [CKSubscription] = []
            for s in saving {
                guard let result = r.saveResults[s.subscriptionID] else { continue }
                perSubscriptionSaveBlock?(s.subscriptionID, result)
                switch result {
                case .success(let x): saved.append(x)
                case .failure(let e): failures[s.subscriptionID] = e
                }
            }
            var deleted: [CKSubscription.ID] = []
            for id in deleting {
                guard let result = r.deleteResults[id] else { continue }
                perSubscriptionDeleteBlock?(id, result)
                switch result {
                case .success: deleted.append(id)
                case .failure(let e): failures[id] = e
                }
            }
            let error = CKOperation.partialFailure(failures, of: saving.count + deleting.count)
            modifySubscriptionsResultBlock?(error.map { .failure($0) } ?? .success(()))
            modifySubscriptionsCompletionBlock?(saved, deleted, error)
        } catch {
            modifySubscriptionsResultBlock?(.failure(error))
            modifySubscriptionsCompletionBlock?(nil, nil, error)
        }
    }
}

/// Fetches subscriptions by id, or every subscription.
open class CKFetchSubscriptionsOperation: CKDatabaseOperation, @unchecked Sendable {
    /// The ids to fetch (nil: every subscription).
    open var subscriptionIDs: [CKSubscription.ID]?
    /// Called with each subscription's outcome (unknownItem for a missing one).
    open var perSubscriptionResultBlock: ((CKSubscription.ID, Result<CKSubscription, any Error>) -> Void)?
    /// Called last: success, partialFailure, or the request's error.
    open var fetchSubscriptionsResultBlock: ((Result<Void, any Error>) -> Void)?
    /// Called last (deprecated by Apple): the subscriptions by id, and the error.
    open var fetchSubscriptionCompletionBlock: (([CKSubscription.ID: CKSubscription]?, (any Error)?) -> Void)?

    /// An operation fetching every subscription.
    public class func fetchAllSubscriptionsOperation() -> Self { Self(subscriptionIDs: nil) }

    /// An operation fetching `subscriptionIDs` (nil: every subscription).
    public required init(subscriptionIDs: [CKSubscription.ID]?) {
        self.subscriptionIDs = subscriptionIDs
        super.init()
    }

    override func perform() async {
        do {
            if isCancelled { throw cancelledError }
            let all = try await targetDatabase.allSubscriptions()
            let ids = subscriptionIDs ?? all.map(\.subscriptionID)
            var found: [CKSubscription.ID: CKSubscription] = [:]
            var failures: [AnyHashable: any Error] = [:]
            for id in ids {
                if let s = all.first(where: { $0.subscriptionID == id }) {
                    found[id] = s
                    perSubscriptionResultBlock?(id, .success(s))
                } else {
                    let e = CKError(.unknownItem, "subscription \"\(id)\" not found")
                    failures[id] = e
                    perSubscriptionResultBlock?(id, .failure(e))
                }
            }
            let error = CKOperation.partialFailure(failures, of: ids.count)
            fetchSubscriptionsResultBlock?(error.map { .failure($0) } ?? .success(()))
            fetchSubscriptionCompletionBlock?(found, error)
        } catch {
            fetchSubscriptionsResultBlock?(.failure(error))
            fetchSubscriptionCompletionBlock?(nil, error)
        }
    }
}

extension CKOperation {
    /// partialFailure listing `failures`, or nil when there are none.
    static func partialFailure(_ failures: [AnyHashable: any Error], of count: Int) -> CKError? {
        failures.isEmpty
            ? nil
            : CKError(
                .partialFailure, "\(failures.count) of \(count) items failed", [CKPartialErrorsByItemIDKey: failures])
    }
}

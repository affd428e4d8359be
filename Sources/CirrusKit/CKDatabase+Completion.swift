// CKDatabase: the completion-handler forms of CloudKit's API. Each runs the async form on a
// task and calls the handler once with its result (from that task, not the main thread).

extension CKDatabase {
    /// Runs `work` and hands its outcome to `handler`.
    private func complete<T>(
        _ handler: @escaping (T?, (any Error)?) -> Void, _ work: @escaping @Sendable () async throws -> T
    ) {
        let h = UncheckedSendable(handler)
        Task {
            do {
                let value = try await work()
                h.value(value, nil)
            } catch {
                h.value(nil, error)
            }
        }
    }

    /// Runs `work` and hands its result to `handler`.
    private func completeResult<T>(
        _ handler: @escaping (Result<T, any Error>) -> Void, _ work: @escaping @Sendable () async throws -> T
    ) {
        let h = UncheckedSendable(handler)
        Task {
            do {
                h.value(.success(try await work()))
            } catch {
                h.value(.failure(error))
            }
        }
    }

    /// Fetches the record with `recordID`.
    public func fetch(
        withRecordID recordID: CKRecord.ID, completionHandler: @escaping (CKRecord?, (any Error)?) -> Void
    ) {
        complete(completionHandler) { try await self.record(for: recordID) }
    }

    /// Fetches records by id: a result per id.
    public func fetch(
        withRecordIDs recordIDs: [CKRecord.ID], desiredKeys: [CKRecord.FieldKey]? = nil,
        completionHandler: @escaping (Result<[CKRecord.ID: Result<CKRecord, any Error>], any Error>) -> Void
    ) {
        let ids = UncheckedSendable(recordIDs)
        completeResult(completionHandler) { try await self.records(for: ids.value, desiredKeys: desiredKeys) }
    }

    /// Saves `record`.
    public func save(_ record: CKRecord, completionHandler: @escaping (CKRecord?, (any Error)?) -> Void) {
        complete(completionHandler) { try await self.save(record) }
    }

    /// Deletes the record with `recordID`.
    public func delete(
        withRecordID recordID: CKRecord.ID, completionHandler: @escaping (CKRecord.ID?, (any Error)?) -> Void
    ) {
        complete(completionHandler) { try await self.deleteRecord(withID: recordID) }
    }

    /// Runs `query` in `zoneID` (nil: the default zone) and hands over the records of its first
    /// page (as Apple's, without a cursor: use `CKQueryOperation` for more).
    public func perform(
        _ query: CKQuery, inZoneWith zoneID: CKRecordZone.ID?,
        completionHandler: @escaping ([CKRecord]?, (any Error)?) -> Void
    ) {
        complete(completionHandler) {
            let page = try await self.records(matching: query, inZoneWith: zoneID)
            return page.matchResults.compactMap { try? $0.1.get() }
        }
    }

    /// Runs `query` and hands over its first page and cursor.
    public func fetch(
        withQuery query: CKQuery, inZoneWith zoneID: CKRecordZone.ID? = nil, desiredKeys: [CKRecord.FieldKey]? = nil,
        resultsLimit: Int = CKQueryOperation.maximumResults,
        completionHandler:
            @escaping (
                Result<
                    (matchResults: [(CKRecord.ID, Result<CKRecord, any Error>)], queryCursor: CKQueryOperation.Cursor?),
                    any Error
                >
            ) -> Void
    ) {
        let page = UncheckedSendable(completionHandler)
        Task {
            do {
                let r = try await self.records(
                    matching: query, inZoneWith: zoneID, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
                page.value(.success(r))
            } catch {
                page.value(.failure(error))
            }
        }
    }

    /// Fetches every zone of the database.
    public func fetchAllRecordZones(completionHandler: @escaping ([CKRecordZone]?, (any Error)?) -> Void) {
        complete(completionHandler) { try await self.allRecordZones() }
    }

    /// Fetches the zone with `zoneID`.
    public func fetch(
        withRecordZoneID zoneID: CKRecordZone.ID, completionHandler: @escaping (CKRecordZone?, (any Error)?) -> Void
    ) {
        complete(completionHandler) { try await self.recordZone(for: zoneID) }
    }

    /// Creates `zone`.
    public func save(_ zone: CKRecordZone, completionHandler: @escaping (CKRecordZone?, (any Error)?) -> Void) {
        complete(completionHandler) { try await self.save(zone) }
    }

    /// Deletes the zone with `zoneID`.
    public func delete(
        withRecordZoneID zoneID: CKRecordZone.ID, completionHandler: @escaping (CKRecordZone.ID?, (any Error)?) -> Void
    ) {
        complete(completionHandler) { try await self.deleteRecordZone(withID: zoneID) }
    }

    /// Saves `subscription`.
    public func save(
        _ subscription: CKSubscription, completionHandler: @escaping (CKSubscription?, (any Error)?) -> Void
    ) {
        complete(completionHandler) { try await self.save(subscription) }
    }

    /// Fetches every subscription.
    public func fetchAllSubscriptions(completionHandler: @escaping ([CKSubscription]?, (any Error)?) -> Void) {
        complete(completionHandler) { try await self.allSubscriptions() }
    }

    /// Deletes the subscription with `subscriptionID`.
    public func delete(
        withSubscriptionID subscriptionID: CKSubscription.ID,
        completionHandler: @escaping (String?, (any Error)?) -> Void
    ) {
        complete(completionHandler) { try await self.deleteSubscription(withID: subscriptionID) }
    }
}

// Subscriptions and notifications of a PostgresDatabase: the façade's calls, with the embedded
// engine's rules and errors — the same checks (AccessRules, DatabaseRules, SubscriptionRules)
// in the same order — over the tables of PostgresStore+Subscriptions.swift and the streams of
// PostgresNotifier.swift, so a write made through one `cirrus serve` process notifies a stream
// opened in another.
//
// One difference from the embedded engine, by design: a fired `once` subscription is removed in
// the transaction of the write it fired on, whether or not any stream was open (the embedded
// engine fires nothing, and keeps it, while no stream of the container is open; across
// processes no one knows whether a stream is open somewhere).

import CirrusFacade
import RecordModel

extension PostgresDatabase {
    /// Saves (or replaces) a subscription; its predicate is checked like a query's.
    /// notAuthenticated without a signed-in user; invalidArguments for a predicate the checker
    /// refuses; zoneNotFound for a custom zone that does not exist; constraintViolation when
    /// another user's subscription has the id.
    @discardableResult
    public func save(_ subscription: Subscription) async throws(CirrusError) -> Subscription {
        try Self.checkCancelled()
        try AccessRules.checkDatabaseAccess(scope: scope, identity: identity)
        guard let user = identity.userRecordName else {
            throw CirrusError(.notAuthenticated, "subscriptions need a signed-in user")
        }
        if case .query(let t, _, _, _) = subscription.kind { try checkCanRead(recordType: t) }
        if case .zone(let z) = subscription.kind { _ = try checkZone(z) }
        let checked = try SubscriptionRules.check(subscription, schema: schema, now: store.clock())
        let outcome: PostgresSubscriptionSave
        do {
            outcome = try await container.current(store).saveSubscription(checked, subscriber: user)
        } catch {
            throw error
        }
        switch outcome {
        case .saved: return checked
        case .zoneNotFound:
            guard case .zone(let z) = subscription.kind else { return checked }
            throw CirrusError(.zoneNotFound, "no such zone", zoneID: z)
        case .taken:
            throw CirrusError(.constraintViolation, "subscription id \"\(subscription.id)\" is taken by another user")
        }
    }

    /// Deletes a subscription of this identity by id (unknownItem if it has none by that id).
    public func deleteSubscription(withID id: String) async throws(CirrusError) {
        try AccessRules.checkDatabaseAccess(scope: scope, identity: identity)
        let deleted: Bool
        do {
            deleted = try await store.deleteSubscription(id: id, subscriber: identity.userRecordName ?? "")
        } catch {
            throw error
        }
        if !deleted { throw CirrusError(.unknownItem, "no subscription \"\(id)\"") }
    }

    /// The subscriptions of this database saved by this identity, by id.
    public func allSubscriptions() async throws(CirrusError) -> [Subscription] {
        try AccessRules.checkDatabaseAccess(scope: scope, identity: identity)
        guard let user = identity.userRecordName else { return [] }
        do {
            return try await store.subscriptions(of: user)
        } catch {
            throw error
        }
    }

    /// The notifications of this identity's subscriptions in this database, from now on, in
    /// commit order — also of writes made through other processes (PostgresNotifier.swift).
    /// The stream ends when the consumer stops iterating or the container closes.
    public func notifications() -> AsyncStream<RecordNotification> {
        let store = self.store
        let container = self.container
        let scope = self.scope
        let identity = self.identity
        let subscriber = identity.userRecordName ?? ""
        return container.notifier.open(
            tenant: store.tenant.key,
            start: { () async throws -> Int64 in try await store.currentSequence() },
            read: { (after: OutboxPosition) async throws -> [(OutboxPosition, RecordNotification?)] in
                let rows = try await store.outbox(subscriber: subscriber, after: after)
                let schema = container.schema
                return rows.map { p, n, r in
                    (p, AccessRules.canRead(r, scope: scope, identity: identity, schema: schema) ? n : nil)
                }
            })
    }

    /// What a request of this database does in its transaction before it commits: the
    /// notifications its changes fire (PostgresStore+Subscriptions.swift).
    func notifyingAfterWrites() -> PostgresAfterWrites {
        let notifier = container.notifier
        let tenant = store.tenant
        let logger = store.logger
        let schema = self.schema
        let clock = store.clock
        return { conn, seq, changes in
            notifier.writing(tenant: tenant.key, sequence: seq)
            try await PostgresStore.fireSubscriptions(
                conn, logger: logger, namespace: tenant.namespace, tenant: tenant.key, seq: seq, changes: changes,
                schema: schema, now: clock())
        }
    }
}

// ContainerCore+Notify: the embedded engine's subscribers and the notifications it sends after a
// commit (the Subscription and RecordNotification types: CirrusFacade's Subscriptions.swift).

import CirrusFacade
import PredicateSyntax
import QueryChecker
import QueryExecution
import RecordModel

/// A registered notification stream.
struct Subscriber {
    var owner: String
    var identity: Identity
    var continuation: AsyncStream<RecordNotification>.Continuation
}

extension ContainerCore {
    /// Checks a subscription's predicate against the current schema, stores and persists it.
    func saveSubscription(_ s: Subscription, owner: String, identity: Identity) throws(CirrusError) -> Subscription {
        try withWriteLock { () throws(CirrusError) in
            let previous = stateLock.withLock { subscriptions[owner]?[s.id] }
            // Ids are unique per database; in the public database several users share it, and
            // one must not replace another's subscription.
            if let previous, previous.subscriber != identity {
                throw CirrusError(.constraintViolation, "subscription id \"\(s.id)\" is taken by another user")
            }
            let saved = try storeSubscription(s, owner: owner, identity: identity)
            do throws(CirrusError) {
                try persistSubscriptions()
            } catch {
                stateLock.withLock { subscriptions[owner, default: [:]][s.id] = previous }  // undone: not saved
                throw error
            }
            return saved
        }
    }

    /// Checks a subscription (SubscriptionRules) and keeps it in memory.
    func storeSubscription(_ s: Subscription, owner: String, identity: Identity) throws(CirrusError) -> Subscription {
        var s = try SubscriptionRules.check(
            s, schema: schema, now: Timestamp(millisecondsSince1970: options.clock.wallMilliseconds()))
        s.subscriber = identity
        if case .zone(let z) = s.kind, !zoneExists(owner: owner, z) { throw .zone(.zoneNotFound, z, "no such zone") }
        stateLock.withLock { subscriptions[owner, default: [:]][s.id] = s }
        return s
    }

    /// Deletes the subscription `id` of `subscriber` (another identity's is unknownItem).
    func deleteSubscription(id: String, owner: String, subscriber: Identity) throws(CirrusError) {
        try withWriteLock { () throws(CirrusError) in
            let removed = stateLock.withLock { () -> Subscription? in
                guard subscriptions[owner]?[id]?.subscriber == subscriber else { return nil }
                return subscriptions[owner]?.removeValue(forKey: id)
            }
            guard let removed else { throw CirrusError(.unknownItem, "no subscription \"\(id)\"") }
            do throws(CirrusError) {
                try persistSubscriptions()
            } catch {
                stateLock.withLock { subscriptions[owner, default: [:]][id] = removed }  // undone: still there
                throw error
            }
        }
    }

    func allSubscriptions(owner: String) -> [Subscription] {
        stateLock.withLock { (subscriptions[owner] ?? [:]).values.sorted { $0.id < $1.id } }
    }

    func addSubscriber(owner: String, identity: Identity) -> AsyncStream<RecordNotification> {
        let (stream, cont) = AsyncStream<RecordNotification>.makeStream()
        let key = stateLock.withLock {
            nextSubscriberKey += 1
            subscribers[nextSubscriberKey] = Subscriber(owner: owner, identity: identity, continuation: cont)
            return nextSubscriberKey
        }
        cont.onTermination = { [weak self] _ in
            guard let self else { return }
            self.stateLock.withLock { _ = self.subscribers.removeValue(forKey: key) }
        }
        return stream
    }

    /// Delivers the notifications a commit causes (writeLock held: commit order is delivery order).
    func notify(_ changes: [RecordChange]) {
        let (subs, streams) = stateLock.withLock { (subscriptions, subscribers) }
        if subs.isEmpty || streams.isEmpty { return }
        var fired: [(String, String)] = []
        for c in changes {
            guard let owner = subs[c.owner], let any = c.new ?? c.old else { continue }
            for s in owner.values.sorted(by: { $0.id < $1.id }) {
                guard let n = SubscriptionRules.notification(s, old: c.old, new: c.new) else { continue }
                for sub in streams.values
                where sub.owner == c.owner && sub.identity == s.subscriber
                    && Access.canRead(any, owner: c.owner, identity: sub.identity, schema: schema)
                {
                    sub.continuation.yield(n)
                }
                if SubscriptionRules.firesOnce(s) { fired.append((c.owner, s.id)) }
            }
        }
        if !fired.isEmpty {
            stateLock.withLock { for (o, id) in fired { subscriptions[o]?[id] = nil } }
            persistSubscriptionsLater()
        }
    }
}

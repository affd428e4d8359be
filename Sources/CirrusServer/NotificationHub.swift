// NotificationHub: subscriptions' notifications kept for Server-Sent Events.
//
// The façade delivers notifications only to streams open at commit time. The hub keeps one
// stream open per feed — an environment, a database and an identity — from the first time the
// feed is needed (a subscription saved through the server, or a client connecting to
// `…/notifications`) until the server stops, and numbers what arrives 1, 2, 3 … in commit order.
// The last `capacity` events of each feed are kept, so a client that reconnects with
// `Last-Event-ID: n` gets every event after n (without one: every event kept); when events after
// n are no longer kept (or n is from before a restart), it gets a `reset` event first, meaning:
// fetch changes, then listen again.
//
// Bounded: at most `maximumFeeds` feeds (further ones are refused with TRY_AGAIN_LATER) and
// `capacity` events per feed; a slow listener's own queue holds at most `capacity` events,
// after which it is told to reset and disconnected.

import Cirrus
import Foundation
import RecordModel

/// One event of a feed.
public struct NotificationEvent: Sendable, Equatable {
    /// The event id (`id:` line of the stream), increasing by one per event within a feed.
    public var id: Int
    /// The notification as JSON (`data:` line).
    public var json: JSONValue
}

/// The feeds of a server.
final class NotificationHub: @unchecked Sendable {
    struct FeedKey: Hashable {
        var environment: Environment
        var scope: Database.Scope
        var identity: Identity
    }

    /// A listener's view: the events kept after its Last-Event-ID, whether some were lost before
    /// them, and the stream of those that follow.
    struct Listening {
        var backlog: [NotificationEvent]
        var reset: Bool
        var live: AsyncStream<NotificationEvent>
    }

    final class Feed: @unchecked Sendable {
        let capacity: Int
        // Guarded by lock:
        var events: [NotificationEvent] = []
        var nextID = 1
        var listeners: [Int: AsyncStream<NotificationEvent>.Continuation] = [:]
        var nextListener = 0
        let lock = NSLock()

        init(capacity: Int) { self.capacity = capacity }

        /// Numbers and keeps an event and hands it to the listeners. Called from the feed's one
        /// pump task, so events are appended in commit order; yielding happens outside the lock
        /// (a finished stream's termination handler takes it).
        func append(_ json: JSONValue) {
            let (e, targets) = lock.withLock {
                let e = NotificationEvent(id: nextID, json: json)
                nextID += 1
                events.append(e)
                if events.count > capacity { events.removeFirst(events.count - capacity) }
                return (e, Array(listeners.values))
            }
            for c in targets {
                // A listener that fell `capacity` events behind is cut off; it reconnects with
                // its Last-Event-ID and gets the backlog or a reset.
                if case .dropped = c.yield(e) { c.finish() }
            }
        }

        func listen(after last: Int?) -> Listening {
            lock.withLock {
                let (stream, continuation) = AsyncStream<NotificationEvent>.makeStream(
                    bufferingPolicy: .bufferingOldest(capacity))
                let key = nextListener
                nextListener += 1
                listeners[key] = continuation
                continuation.onTermination = { [weak self] _ in
                    guard let self else { return }
                    self.lock.withLock { _ = self.listeners.removeValue(forKey: key) }
                }
                // No Last-Event-ID: everything kept (as if the client had seen none).
                let last = last ?? 0
                let oldest = events.first?.id ?? nextID
                // From the future (another server run) or older than what is kept: reset.
                let reset = last >= nextID || last + 1 < oldest
                let backlog = reset ? events : events.filter { $0.id > last }
                return Listening(backlog: backlog, reset: reset, live: stream)
            }
        }
    }

    let capacity: Int
    let maximumFeeds: Int
    private let lock = NSLock()
    // Guarded by lock:
    private var feeds: [FeedKey: Feed] = [:]
    private var pumpsByFeed: [ObjectIdentifier: Task<Void, Never>] = [:]

    init(capacity: Int = 1_000, maximumFeeds: Int = 10_000) {
        self.capacity = capacity
        self.maximumFeeds = maximumFeeds
    }

    /// The feed of a database as an identity, opened on first use.
    func feed(_ db: Database) throws(WebServicesError) -> Feed {
        let key = FeedKey(environment: db.environment, scope: db.scope, identity: db.identity)
        lock.lock()
        defer { lock.unlock() }
        if let f = feeds[key] { return f }
        guard feeds.count < maximumFeeds else {
            throw WebServicesError(.tryAgainLater, "the server follows \(maximumFeeds) notification feeds already")
        }
        let f = Feed(capacity: capacity)
        feeds[key] = f
        let stream = db.notifications()
        pumpsByFeed[ObjectIdentifier(f)] = Task {
            for await n in stream { f.append(Self.json(n)) }
        }
        return f
    }

    /// Ends the feeds of `environment` (its container is being replaced): their pumps stop, their
    /// listeners are disconnected, and the next use opens a new feed numbered from 1 (a client
    /// reconnecting with an older Last-Event-ID gets a `reset` event).
    func drop(environment: Environment) {
        let (tasks, dropped) = lock.withLock {
            var tasks: [Task<Void, Never>] = []
            var dropped: [Feed] = []
            for (k, f) in feeds where k.environment == environment {
                feeds[k] = nil
                dropped.append(f)
                if let t = pumpsByFeed.removeValue(forKey: ObjectIdentifier(f)) { tasks.append(t) }
            }
            return (tasks, dropped)
        }
        for t in tasks { t.cancel() }
        for f in dropped {
            for c in f.lock.withLock({ Array(f.listeners.values) }) { c.finish() }
        }
    }

    /// Stops every feed (the server is stopping).
    func close() {
        let (tasks, all) = lock.withLock { (Array(pumpsByFeed.values), Array(feeds.values)) }
        for t in tasks { t.cancel() }
        for f in all {
            for c in f.lock.withLock({ Array(f.listeners.values) }) { c.finish() }
        }
    }

    /// `{"subscriptionID", "reason": "create|update|delete", "recordName", "recordType", "zoneID"?}`
    static func json(_ n: RecordNotification) -> JSONValue {
        let reason =
            switch n.reason {
            case .recordCreated: "create"
            case .recordUpdated: "update"
            case .recordDeleted: "delete"
            }
        var m: [(String, JSONValue)] = [
            ("subscriptionID", .string(n.subscriptionID)), ("reason", .string(reason)),
            ("recordName", .string(n.recordID.recordName)), ("recordType", .string(n.recordType)),
        ]
        if n.recordID.zoneID != .default { m.append(("zoneID", n.recordID.zoneID.webServicesJSON)) }
        // Like CloudKit's notifications, no record body: events stay small (a feed keeps
        // `capacity` of them), and the record is a records/lookup away.
        return .object(m)
    }
}

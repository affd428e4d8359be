// Subscriptions: query subscriptions (record type + a predicate checked by the CKQuery checker +
// when to fire) and zone subscriptions, delivered in-process as an AsyncSequence of
// notifications after the commit that caused them. "Matches" is RecordMatcher (QueryExecution),
// the same single-record evaluator the planner's tests use as their full-scan oracle. The checks
// and the firing rule are SubscriptionRules' (shared with the PostgreSQL engine); this file keeps
// the embedded engine's subscriptions in memory and delivers to in-process streams.
//
// Subscriptions are kept in memory and persisted in subscriptions.json (SubscriptionStore.swift);
// notifications are in-process only: a commit made while no stream is open is not replayed.

import PredicateSyntax
import QueryChecker
import QueryExecution
import RecordModel

/// What a subscription watches.
///
/// ```swift
/// let sub = try await db.save(Subscription(id: "cafes", recordType: "Place",
///     predicate: "kind == %@", arguments: ["cafe"], firesOn: [.creation, .update]))
/// for await n in db.notifications() { print(n.recordID, n.reason) }
/// ```
public struct Subscription: Sendable, Identifiable {
    /// When a query subscription fires: any of the three kinds of change, and whether it fires
    /// only once.
    ///
    /// ```swift
    /// let s = Subscription(id: "new-cafes", recordType: "Place", predicate: "kind == %@",
    ///                      arguments: ["cafe"], firesOn: [.creation, .once])
    /// ```
    public struct FiresOn: OptionSet, Sendable, Hashable {
        /// The bits: 1 creation, 2 update, 4 deletion, 8 once. Stored in `subscriptions.json`;
        /// never change them.
        public let rawValue: UInt8
        /// The options whose bits are set in `rawValue`.
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// A record is created that matches the predicate.
        public static let creation = FiresOn(rawValue: 1)
        /// A record is changed that matches the predicate before the change, after it, or both:
        /// a change that makes a record match, or stop matching, fires as an update.
        public static let update = FiresOn(rawValue: 2)
        /// A record is deleted that matched the predicate.
        public static let deletion = FiresOn(rawValue: 4)
        /// Removed after the first commit it fires on. It is removed even when no stream of its
        /// subscriber was open to receive the notification, as long as some notification stream
        /// of the container was; with none open, nothing fires and it stays. (On PostgreSQL, where
        /// streams may be open in other processes, it is removed in the commit it fires on,
        /// whether or not any stream is open.)
        public static let once = FiresOn(rawValue: 8)
        /// Creation, update and deletion (not `once`); the default of a query subscription.
        public static let all: FiresOn = [.creation, .update, .deletion]
    }

    /// What a subscription watches.
    public enum Kind: Sendable {
        /// Records of a type matching a predicate (format string + arguments).
        case query(recordType: String, predicate: String, arguments: [PredicateArgument], firesOn: FiresOn)
        /// Every change in one zone.
        case zone(ZoneID)
    }

    /// The subscription's name in its database. One name space per database, shared by every
    /// identity: saving a subscription with an id in use replaces the old one, whoever saved it.
    public let id: String
    /// What it watches: records of a type that match a predicate, or one zone.
    public var kind: Kind

    /// A query subscription.
    public init(
        id: String, recordType: String, predicate: String, arguments: [PredicateArgument] = [], firesOn: FiresOn = .all
    ) {
        self.id = id
        self.kind = .query(recordType: recordType, predicate: predicate, arguments: arguments, firesOn: firesOn)
    }

    /// A zone subscription.
    public init(id: String, zoneID: ZoneID) {
        self.id = id
        self.kind = .zone(zoneID)
    }

    /// The checked predicate (set when saved).
    package var matcher: RecordMatcher?
    /// Who saved it (notifications go to their streams, filtered by what they may read).
    package var subscriber: Identity = .anonymous
}

/// A notification: a change that a subscription asked for, delivered after its commit.
public struct RecordNotification: Sendable, Hashable {
    /// What the commit did to the record (whether it entered or left a query's matches is not
    /// told apart: both are `recordUpdated`). `recordCreated`: the record did not exist before
    /// the commit; `recordUpdated`: it existed before and after; `recordDeleted`: it was deleted.
    public enum Reason: Sendable, Hashable {
        case recordCreated, recordUpdated, recordDeleted
    }

    /// The `id` of the subscription that fired.
    public var subscriptionID: String
    /// The record that changed.
    public var recordID: RecordID
    /// The record's type (for a deletion, the type it had).
    public var recordType: String
    /// What the commit did to the record.
    public var reason: Reason
    /// The record after the change (nil for a deletion).
    public var record: Record?

    /// A notification (engines make them: `SubscriptionRules.notification(_:old:new:)`).
    public init(
        subscriptionID: String, recordID: RecordID, recordType: String, reason: Reason, record: Record?
    ) {
        self.subscriptionID = subscriptionID
        self.recordID = recordID
        self.recordType = recordType
        self.reason = reason
        self.record = record
    }
}

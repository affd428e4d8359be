// Subscriptions: CKQuerySubscription (records of a type matching a predicate) and
// CKRecordZoneSubscription (every change in a zone), saved as the façade's Subscription.
// CKDatabaseSubscription exists so that code compiles; saving one fails (Cirrus has no
// database-wide subscriptions). Notifications are not pushed to CirrusKit clients
// (docs/cirruskit.md).

import Cirrus
import RecordModel

/// A subscription: what changes a user wants to hear of.
open class CKSubscription: NSObject, NSSecureCoding, NSCopying, @unchecked Sendable {
    // @unchecked: the mutable members (`notificationInfo`) are set before the subscription is
    // saved, as CloudKit documents; reads and writes are behind `lock`.
    /// A subscription's id.
    public typealias ID = String

    /// The kind of a subscription.
    public enum SubscriptionType: Int, Sendable, Hashable {
        /// A `CKQuerySubscription`.
        case query = 1
        /// A `CKRecordZoneSubscription`.
        case recordZone = 2
        /// A `CKDatabaseSubscription`.
        case database = 3
    }

    /// What a push notification of the subscription shows. Kept, not used: Cirrus does not
    /// send push notifications.
    open class NotificationInfo: NSObject, @unchecked Sendable {
        /// The alert's text.
        public var alertBody: String?
        /// Whether the notification wakes the app silently.
        public var shouldSendContentAvailable: Bool = false
        /// Fields of the record to include.
        public var desiredKeys: [CKRecord.FieldKey]?
        /// A plain notification info.
        public override init() { super.init() }
    }

    /// The subscription's id.
    public let subscriptionID: ID
    /// The kind of subscription.
    public let subscriptionType: SubscriptionType
    private let lock = NSLock()
    private var info: NotificationInfo?

    init(subscriptionID: ID, type: SubscriptionType) {
        self.subscriptionID = subscriptionID
        subscriptionType = type
        super.init()
    }

    /// What a push notification shows (kept only).
    public var notificationInfo: NotificationInfo? {
        get {
            lock.lock()
            defer { lock.unlock() }
            return info
        }
        set {
            lock.lock()
            defer { lock.unlock() }
            info = newValue
        }
    }

    /// The subscription itself (subscriptions are compared by id).
    open func copy(with zone: NSZone? = nil) -> Any { self }
    /// Subscriptions archive securely (their id and kind only).
    public class var supportsSecureCoding: Bool { true }
    /// Archives the id and kind.
    open func encode(with coder: NSCoder) {
        coder.encode(subscriptionID as NSString, forKey: "subscriptionID")
        coder.encode(subscriptionType.rawValue, forKey: "subscriptionType")
    }
    /// Reads what `encode(with:)` wrote.
    public required init?(coder: NSCoder) {
        guard let id = coder.cirrusObject(of: NSString.self, forKey: "subscriptionID"),
            let type = SubscriptionType(rawValue: coder.decodeInteger(forKey: "subscriptionType"))
        else { return nil }
        subscriptionID = id as String
        subscriptionType = type
        super.init()
    }

    /// Equal when the ids are.
    open override func isEqual(_ object: Any?) -> Bool { (object as? CKSubscription)?.subscriptionID == subscriptionID }
    /// Hashes the id.
    open override var hash: Int { subscriptionID.hashValue }

    /// The façade's subscription.
    func cirrusSubscription() throws(CKError) -> Subscription {
        throw CKError(.invalidArguments, "database subscriptions are not supported by Cirrus")
    }

    /// A CK subscription from the façade's.
    static func from(_ s: Subscription) -> CKSubscription {
        switch s.kind {
        case .query(let type, let predicate, let arguments, let firesOn):
            let args: [Any] = arguments.map { a -> Any in
                switch a {
                case .key(let k): return k
                case .value(let v): return RecordValues.present(v, asset: { CKAsset(stored: $0, file: nil) })
                }
            }
            return CKQuerySubscription(
                recordType: type, predicate: NSPredicate(format: predicate, argumentArray: args),
                subscriptionID: s.id, options: CKQuerySubscription.Options(rawValue: UInt(firesOn.rawValue)))
        case .zone(let z):
            return CKRecordZoneSubscription(zoneID: CKRecordZone.ID(z), subscriptionID: s.id)
        }
    }
}

/// Records of a type that match a predicate: fires when one is created, updated or deleted.
///
/// ```swift
/// let s = CKQuerySubscription(recordType: "Note", predicate: NSPredicate(format: "priority > %d", 2),
///                             options: [.firesOnRecordCreation])
/// ```
open class CKQuerySubscription: CKSubscription, @unchecked Sendable {
    /// When the subscription fires.
    public struct Options: OptionSet, Sendable, Hashable {
        /// The raw bits (Apple's values).
        public let rawValue: UInt
        /// Options from their bits.
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// A matching record is created.
        public static let firesOnRecordCreation = Options(rawValue: 1)
        /// A matching record is changed.
        public static let firesOnRecordUpdate = Options(rawValue: 2)
        /// A matching record is deleted.
        public static let firesOnRecordDeletion = Options(rawValue: 4)
        /// The subscription is removed after it fires.
        public static let firesOnce = Options(rawValue: 8)
    }

    /// The record type watched.
    public let recordType: CKRecord.RecordType
    /// Which records.
    public let predicate: NSPredicate
    /// When it fires.
    public let querySubscriptionOptions: Options
    /// The zone watched (nil: every zone).
    public var zoneID: CKRecordZone.ID?

    /// A query subscription named `subscriptionID` (by default a UUID).
    public init(
        recordType: CKRecord.RecordType, predicate: NSPredicate, subscriptionID: CKSubscription.ID = UUID().uuidString,
        options querySubscriptionOptions: Options
    ) {
        self.recordType = recordType
        self.predicate = predicate
        self.querySubscriptionOptions = querySubscriptionOptions
        super.init(subscriptionID: subscriptionID, type: .query)
    }

    /// Archiving keeps the id only: use `CKSubscription(coder:)`.
    public required init?(coder: NSCoder) { nil }

    override func cirrusSubscription() throws(CKError) -> Subscription {
        let (format, arguments) = try PredicateTranslation.flatten(predicate)
        return Subscription(
            id: subscriptionID, recordType: recordType, predicate: format, arguments: arguments,
            firesOn: Subscription.FiresOn(rawValue: UInt8(truncatingIfNeeded: querySubscriptionOptions.rawValue & 15)))
    }
}

/// Every change in one zone.
open class CKRecordZoneSubscription: CKSubscription, @unchecked Sendable {
    /// The zone watched.
    public let zoneID: CKRecordZone.ID
    /// The record type watched (nil: every type). Kept, not used: Cirrus fires for every type.
    public var recordType: CKRecord.RecordType?

    /// A zone subscription named `subscriptionID` (by default a UUID).
    public init(zoneID: CKRecordZone.ID, subscriptionID: CKSubscription.ID = UUID().uuidString) {
        self.zoneID = zoneID
        super.init(subscriptionID: subscriptionID, type: .recordZone)
    }

    /// Archiving keeps the id only: use `CKSubscription(coder:)`.
    public required init?(coder: NSCoder) { nil }

    override func cirrusSubscription() throws(CKError) -> Subscription {
        Subscription(id: subscriptionID, zoneID: zoneID.cirrus)
    }
}

/// Every change in a database. Saving one fails with invalidArguments: Cirrus has no
/// database-wide subscriptions.
open class CKDatabaseSubscription: CKSubscription, @unchecked Sendable {
    /// The record type watched (nil: every type).
    public var recordType: CKRecord.RecordType?

    /// A database subscription named `subscriptionID` (by default a UUID).
    public init(subscriptionID: CKSubscription.ID = UUID().uuidString) {
        super.init(subscriptionID: subscriptionID, type: .database)
    }

    /// Archiving keeps the id only: use `CKSubscription(coder:)`.
    public required init?(coder: NSCoder) { nil }
}

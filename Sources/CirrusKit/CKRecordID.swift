// Identifiers: CKRecordZone.ID, CKRecord.ID and CKRecord.Reference. They are top-level classes
// (CKRecordZoneID, CKRecordID, CKReference — their Objective-C names) with Apple's Swift names
// as nested typealiases, because swift-corelibs-foundation's NSKeyedArchiver cannot archive a
// nested class (NSStringFromClass stops the process), and records and tokens are archived.

import RecordModel

/// The owner name of the current user's zones (`__defaultOwner__`).
public let CKCurrentUserDefaultName: String = "__defaultOwner__"

/// A zone's identity: its name and its owner. Use `CKRecordZone.ID`.
///
/// ```swift
/// let work = CKRecordZone.ID(zoneName: "Work")
/// ```
public final class CKRecordZoneID: NSObject, NSSecureCoding, NSCopying, Sendable {
    /// The zone's name.
    public let zoneName: String
    /// The user record name of the zone's owner (`CKCurrentUserDefaultName` for one's own).
    public let ownerName: String

    /// `_defaultZone`.
    public static let defaultZoneName: String = "_defaultZone"
    /// The default zone of the database.
    public static let `default` = CKRecordZoneID(zoneName: defaultZoneName, ownerName: CKCurrentUserDefaultName)

    /// A zone id; by default the default zone of the current user.
    public init(zoneName: String = CKRecordZoneID.defaultZoneName, ownerName: String = CKCurrentUserDefaultName) {
        self.zoneName = zoneName
        self.ownerName = ownerName
        super.init()
    }

    /// Equal when name and owner are (the façade's ids compare).
    public override func isEqual(_ object: Any?) -> Bool { (object as? CKRecordZoneID)?.cirrus == cirrus }

    /// Hashes name and owner (the façade's id).
    public override var hash: Int { cirrus.hashValue }

    /// `<CKRecordZoneID: zoneName=Work, ownerName=__defaultOwner__>`.
    public override var description: String { "<CKRecordZoneID: zoneName=\(zoneName), ownerName=\(ownerName)>" }

    /// The id itself: it is immutable.
    public func copy(with zone: NSZone? = nil) -> Any { self }
    /// Archives securely.
    public static var supportsSecureCoding: Bool { true }
    /// Archives the name and owner.
    public func encode(with coder: NSCoder) {
        coder.encode(zoneName as NSString, forKey: "zoneName")
        coder.encode(ownerName as NSString, forKey: "ownerName")
    }
    /// Reads what `encode(with:)` wrote.
    public init?(coder: NSCoder) {
        guard let n = coder.cirrusObject(of: NSString.self, forKey: "zoneName"),
            let o = coder.cirrusObject(of: NSString.self, forKey: "ownerName")
        else { return nil }
        zoneName = n as String
        ownerName = o as String
        super.init()
    }

    /// The façade's zone id.
    var cirrus: ZoneID { ZoneID(zoneName: zoneName, ownerName: ownerName) }
    /// From the façade's zone id.
    convenience init(_ z: ZoneID) { self.init(zoneName: z.zoneName, ownerName: z.ownerName) }
}

/// A record's identity: its name and zone. Use `CKRecord.ID`.
///
/// ```swift
/// let id = CKRecord.ID(recordName: "n1", zoneID: CKRecordZone.ID(zoneName: "Work"))
/// ```
public final class CKRecordID: NSObject, NSSecureCoding, NSCopying, Sendable {
    /// The record's name, unique in its zone.
    public let recordName: String
    /// The record's zone.
    public let zoneID: CKRecordZoneID

    /// An id in the default zone; without a name, a new UUID.
    public convenience init(recordName: String = UUID().uuidString) {
        self.init(recordName: recordName, zoneID: .default)
    }

    /// An id in `zoneID`.
    public init(recordName: String, zoneID: CKRecordZoneID) {
        self.recordName = recordName
        self.zoneID = zoneID
        super.init()
    }

    /// Equal when name and zone are (the façade's ids compare).
    public override func isEqual(_ object: Any?) -> Bool { (object as? CKRecordID)?.cirrus == cirrus }

    /// Hashes name and zone (the façade's id).
    public override var hash: Int { cirrus.hashValue }

    /// `<CKRecordID: recordName=n1, zoneID=Work:__defaultOwner__>`.
    public override var description: String {
        "<CKRecordID: recordName=\(recordName), zoneID=\(zoneID.zoneName):\(zoneID.ownerName)>"
    }

    /// The id itself: it is immutable.
    public func copy(with zone: NSZone? = nil) -> Any { self }
    /// Archives securely.
    public static var supportsSecureCoding: Bool { true }
    /// Archives the name and zone.
    public func encode(with coder: NSCoder) {
        coder.encode(recordName as NSString, forKey: "recordName")
        coder.encode(zoneID, forKey: "zoneID")
    }
    /// Reads what `encode(with:)` wrote.
    public init?(coder: NSCoder) {
        guard let n = coder.cirrusObject(of: NSString.self, forKey: "recordName"),
            let z = coder.cirrusObject(of: CKRecordZoneID.self, forKey: "zoneID")
        else { return nil }
        recordName = n as String
        zoneID = z
        super.init()
    }

    /// The façade's record id.
    var cirrus: RecordID { RecordID(recordName: recordName, zoneID: zoneID.cirrus) }
    /// From the façade's record id.
    convenience init(_ id: RecordID) { self.init(recordName: id.recordName, zoneID: CKRecordZoneID(id.zoneID)) }
}

/// A reference from one record to another. Use `CKRecord.Reference`.
///
/// ```swift
/// note["folder"] = CKRecord.Reference(recordID: folder.recordID, action: .deleteSelf)
/// ```
public final class CKReference: NSObject, NSSecureCoding, NSCopying, Sendable {
    /// The record referred to.
    public let recordID: CKRecordID
    /// What happens to the referring record when the target is deleted.
    public let referenceAction: CKRecord_Reference_Action

    /// A reference to the record with `recordID`.
    public init(recordID: CKRecordID, action: CKRecord_Reference_Action) {
        self.recordID = recordID
        self.referenceAction = action
        super.init()
    }

    /// A reference to `record`.
    public convenience init(record: CKRecord, action: CKRecord_Reference_Action) {
        self.init(recordID: record.recordID, action: action)
    }

    /// Equal when target and action are.
    public override func isEqual(_ object: Any?) -> Bool {
        guard let o = object as? CKReference else { return false }
        return recordID == o.recordID && referenceAction == o.referenceAction
    }

    /// Hashes the target.
    public override var hash: Int { recordID.hash }

    /// `<CKReference: recordID=…, action=none>`.
    public override var description: String { "<CKReference: recordID=\(recordID), action=\(referenceAction)>" }

    /// The reference itself: it is immutable.
    public func copy(with zone: NSZone? = nil) -> Any { self }
    /// Archives securely.
    public static var supportsSecureCoding: Bool { true }
    /// Archives target and action.
    public func encode(with coder: NSCoder) {
        coder.encode(recordID, forKey: "recordID")
        coder.encode(Int(referenceAction.rawValue), forKey: "action")
    }
    /// Reads what `encode(with:)` wrote.
    public init?(coder: NSCoder) {
        guard let id = coder.cirrusObject(of: CKRecordID.self, forKey: "recordID"),
            let action = CKRecord_Reference_Action(rawValue: UInt(max(0, coder.decodeInteger(forKey: "action"))))
        else { return nil }
        recordID = id
        referenceAction = action
        super.init()
    }
}

/// What a reference does when its target is deleted. Use `CKRecord.ReferenceAction`.
public enum CKRecord_Reference_Action: UInt, Sendable, Hashable {
    /// Nothing.
    case none = 0
    /// The referring record is deleted with its target (same zone only).
    case deleteSelf = 1
}

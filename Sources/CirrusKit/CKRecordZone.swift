// CKRecordZone: a zone of a database, and CKQueryOperation.Cursor (CKQueryCursor): where a
// query's next page starts.

import Cirrus
import RecordModel

/// A zone: the default zone, or a custom zone of a private database.
///
/// ```swift
/// let work = try await db.save(CKRecordZone(zoneName: "Work"))
/// ```
open class CKRecordZone: NSObject, NSSecureCoding, NSCopying, @unchecked Sendable {
    // @unchecked: every stored member is a `let`.
    /// A zone's identity (`CKRecordZoneID`).
    public typealias ID = CKRecordZoneID

    /// What a zone can do.
    public struct Capabilities: OptionSet, Sendable, Hashable {
        /// The raw bits.
        public let rawValue: UInt
        /// A capability set from its bits.
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// Changes can be fetched (custom zones).
        public static let fetchChanges = Capabilities(rawValue: 1)
        /// Batches are atomic (custom zones).
        public static let atomic = Capabilities(rawValue: 2)
        /// Records can be shared (not in Cirrus).
        public static let sharing = Capabilities(rawValue: 4)
        /// The whole zone can be shared (not in Cirrus).
        public static let zoneWideSharing = Capabilities(rawValue: 8)
    }

    /// The zone's identity.
    public let zoneID: ID

    /// A zone named `zoneName`, owned by the current user.
    public convenience init(zoneName: String) { self.init(zoneID: ID(zoneName: zoneName)) }

    /// The zone with `zoneID`.
    public init(zoneID: ID) {
        self.zoneID = zoneID
        super.init()
    }

    /// The default zone.
    public class func `default`() -> CKRecordZone { CKRecordZone(zoneID: .default) }

    /// `[.fetchChanges, .atomic]` for a custom zone, none for the default zone.
    public var capabilities: Capabilities { zoneID.zoneName == ID.defaultZoneName ? [] : [.fetchChanges, .atomic] }

    /// Equal when the ids are.
    open override func isEqual(_ object: Any?) -> Bool { (object as? CKRecordZone)?.zoneID == zoneID }
    /// Hashes the id.
    open override var hash: Int { zoneID.hash }
    /// `<CKRecordZone: zoneID=…>`.
    open override var description: String { "<CKRecordZone: zoneID=\(zoneID)>" }
    /// The zone itself: it is immutable.
    open func copy(with zone: NSZone? = nil) -> Any { self }
    /// Zones archive securely.
    public static var supportsSecureCoding: Bool { true }
    /// Archives the id.
    open func encode(with coder: NSCoder) { coder.encode(zoneID, forKey: "zoneID") }
    /// Reads what `encode(with:)` wrote.
    public required init?(coder: NSCoder) {
        guard let id = coder.cirrusObject(of: ID.self, forKey: "zoneID") else { return nil }
        zoneID = id
        super.init()
    }
}

/// Where the next page of a query starts. Use `CKQueryOperation.Cursor`.
public final class CKQueryCursor: NSObject, NSSecureCoding, NSCopying, @unchecked Sendable {
    // @unchecked: every stored member is a `let` of immutable values.
    /// The backend's continuation: the embedded engine's signed cursor token, or a Web
    /// Services `continuationMarker`.
    let marker: String
    /// The query the cursor continues (Web Services asks for it again with the marker).
    let query: RecordQuery
    /// The zone the query runs in (nil: every zone).
    let zoneID: ZoneID?

    init(marker: String, query: RecordQuery, zoneID: ZoneID?) {
        self.marker = marker
        self.query = query
        self.zoneID = zoneID
        super.init()
    }

    /// Equal when the markers are.
    public override func isEqual(_ object: Any?) -> Bool { (object as? CKQueryCursor)?.marker == marker }
    /// Hashes the marker.
    public override var hash: Int { marker.hashValue }
    /// The cursor itself: it is immutable.
    public func copy(with zone: NSZone? = nil) -> Any { self }
    /// Cursors archive securely (the marker and the query as its format string and JSON
    /// arguments).
    public static var supportsSecureCoding: Bool { true }
    /// Archives the marker, the query and the zone.
    public func encode(with coder: NSCoder) {
        coder.encode(marker as NSString, forKey: "marker")
        coder.encode(CursorArchive.json(query, zoneID).jsonText as NSString, forKey: "query")
    }
    /// Reads what `encode(with:)` wrote.
    public init?(coder: NSCoder) {
        guard let m = coder.cirrusObject(of: NSString.self, forKey: "marker"),
            let q = coder.cirrusObject(of: NSString.self, forKey: "query"),
            let (query, zone) = CursorArchive.read(q as String)
        else { return nil }
        marker = m as String
        self.query = query
        zoneID = zone
        super.init()
    }
}

/// The archived form of a cursor's query: JSON with the record type, the format string, the
/// arguments (Web Services field values, or `{"key": name}`), the sorts and the zone.
enum CursorArchive {
    static func json(_ q: RecordQuery, _ zone: ZoneID?) -> JSONValue {
        var m: [(String, JSONValue)] = [
            ("recordType", .string(q.recordType)), ("predicate", .string(q.predicate)),
            (
                "arguments",
                .array(
                    q.arguments.map {
                        switch $0 {
                        case .key(let k): .object([("key", .string(k))])
                        case .value(let v): v.webServicesJSON
                        }
                    })
            ),
            ("sortBy", .array(q.sortDescriptors.map { $0.webServicesJSON })),
        ]
        if let zone { m.append(("zoneID", zone.webServicesJSON)) }
        return .object(m)
    }

    static func read(_ text: String) -> (RecordQuery, ZoneID?)? {
        guard let j = try? JSONValue.parse(text), let type = j["recordType"]?.stringValue,
            let predicate = j["predicate"]?.stringValue, case .array(let args)? = j["arguments"],
            case .array(let sorts)? = j["sortBy"]
        else { return nil }
        var arguments: [PredicateArgument] = []
        for a in args {
            if let k = a["key"]?.stringValue {
                arguments.append(.key(k))
            } else if let v = try? FieldValue(webServicesJSON: a) {
                arguments.append(.value(v))
            } else {
                return nil
            }
        }
        var sortBy: [RecordModel.SortDescriptor] = []
        for s in sorts {
            guard let d = try? RecordModel.SortDescriptor(webServicesJSON: s) else { return nil }
            sortBy.append(d)
        }
        let zone = j["zoneID"].flatMap { try? ZoneID(webServicesJSON: $0) }
        return (
            RecordQuery(recordType: type, predicate: predicate, arguments: arguments, sortDescriptors: sortBy), zone
        )
    }
}

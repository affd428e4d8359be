// The CloudKit Web Services JSON form of field values (CKQUERY.md §5).
//
// `{"type": "LOCATION", "value": {"latitude": 48.85, "longitude": 2.29}}` ↔ `FieldValue`.
// Used for predicate arguments (`cirrus check --arg`), record import and export. The `type`
// member may be omitted when the JSON makes it obvious (string → STRING, integer → INT64,
// other number → DOUBLE, object with latitude → LOCATION, with recordName → REFERENCE, arrays
// → lists); it is always written.

import Foundation

/// A Web Services JSON value that does not describe a valid field value.
public struct WebServicesJSONError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong with the value.
    public var message: String
    /// An error saying `message`.
    public init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}

extension ZoneID {
    /// `{"zoneName": "...", "ownerRecordName": "..."}`
    public var webServicesJSON: JSONValue {
        .object([("zoneName", .string(zoneName)), ("ownerRecordName", .string(ownerName))])
    }

    /// Reads `{"zoneName", "ownerRecordName"?}`.
    public init(webServicesJSON json: JSONValue) throws(WebServicesJSONError) {
        guard let name = json["zoneName"]?.stringValue else {
            throw WebServicesJSONError("zoneID needs a string \"zoneName\"")
        }
        let owner = json["ownerRecordName"]?.stringValue ?? ZoneID.defaultOwnerName
        self.init(zoneName: name, ownerName: owner)
    }
}

extension FieldValue {
    /// `{"value": …, "type": "…"}` as Web Services writes it.
    public var webServicesJSON: JSONValue {
        .object([
            ("value", webServicesJSONValue), ("type", .string(typeName == "EMPTY_LIST" ? "STRING_LIST" : typeName)),
        ])
    }

    /// The `value` member alone.
    public var webServicesJSONValue: JSONValue {
        switch self {
        case .string(let s): return .string(s)
        case .int64(let i): return .integer(i)
        case .double(let d): return .number(d)
        case .date(let t): return .integer(t.millisecondsSince1970)
        case .bytes(let b): return .string(Data(b).base64EncodedString())
        case .location(let l):
            var m: [(String, JSONValue)] = [
                ("latitude", .number(l.latitude)), ("longitude", .number(l.longitude)),
                ("horizontalAccuracy", .number(l.horizontalAccuracy)),
                ("verticalAccuracy", .number(l.verticalAccuracy)), ("altitude", .number(l.altitude)),
                ("speed", .number(l.speed)), ("course", .number(l.course)),
            ]
            if let t = l.timestamp { m.append(("timestamp", .integer(t.millisecondsSince1970))) }
            return .object(m)
        case .reference(let r):
            return .object([
                ("recordName", .string(r.recordID.recordName)), ("zoneID", r.recordID.zoneID.webServicesJSON),
                ("action", .string(r.action.rawValue)),
            ])
        case .asset(let a):
            return .object([("fileChecksum", .string(a.contentHash)), ("size", .integer(a.size))])
        case .list(let items): return .array(items.map(\.webServicesJSONValue))
        }
    }

    /// Reads `{"value": …, "type"?: "…"}`.
    public init(webServicesJSON json: JSONValue) throws(WebServicesJSONError) {
        guard case .object = json, let value = json["value"] else {
            throw WebServicesJSONError("a field value is an object {\"value\": …, \"type\": …}")
        }
        var type: FieldType? = nil
        if let t = json["type"] {
            guard let name = t.stringValue, let ft = FieldType(webServicesName: name) else {
                throw WebServicesJSONError(
                    "unknown field type \(t.jsonText); expected STRING, INT64, DOUBLE, TIMESTAMP, BYTES, LOCATION, "
                        + "REFERENCE, ASSETID or one of them with _LIST"
                )
            }
            type = ft
        }
        try self.init(webServicesJSONValue: value, type: type)
    }

    /// Reads a bare `value` of the given type, inferring the type when `type` is nil.
    public init(webServicesJSONValue v: JSONValue, type: FieldType?) throws(WebServicesJSONError) {
        guard let type else {
            self = try FieldValue.inferred(v)
            return
        }
        if type.isList {
            guard case .array(let items) = v else {
                throw WebServicesJSONError("a \(type.webServicesName) value is an array, not \(v.kindName)")
            }
            var out: [FieldValue] = []
            out.reserveCapacity(items.count)
            for item in items { out.append(try FieldValue.scalar(item, type.scalar)) }
            self = .list(out)
        } else {
            self = try FieldValue.scalar(v, type.scalar)
        }
    }

    private static func inferred(_ v: JSONValue) throws(WebServicesJSONError) -> FieldValue {
        switch v {
        case .string(let s): return .string(s)
        case .integer(let i): return .int64(i)
        case .number(let d): return .double(d)
        case .object:
            if v["latitude"] != nil { return try scalar(v, .location) }
            if v["recordName"] != nil { return try scalar(v, .reference) }
            throw WebServicesJSONError("cannot tell the type of an object value; add \"type\"")
        case .array(let items):
            var out: [FieldValue] = []
            for item in items { out.append(try inferred(item)) }
            if let first = out.first?.scalarType,
                out.contains(where: { $0.scalarType != first && !($0.scalarType?.isNumeric == true && first.isNumeric) }
                )
            {
                throw WebServicesJSONError("list elements have different types")
            }
            return .list(out)
        case .bool, .null:
            throw WebServicesJSONError(
                "\(v.kindName) is not a CloudKit value (CloudKit has no boolean type: use INT64 0/1)")
        }
    }

    private static func scalar(_ v: JSONValue, _ t: ScalarType) throws(WebServicesJSONError) -> FieldValue {
        func bad() -> WebServicesJSONError {
            WebServicesJSONError("\(v.jsonText) is not a valid \(t.webServicesName) value")
        }
        switch t {
        case .string:
            guard let s = v.stringValue else { throw bad() }
            return .string(s)
        case .int64:
            guard let i = v.int64Value else { throw bad() }
            return .int64(i)
        case .double:
            guard let d = v.doubleValue else { throw bad() }
            return .double(d)
        case .date:
            guard let i = v.int64Value else { throw bad() }
            return .date(Timestamp(millisecondsSince1970: i))
        case .bytes:
            guard let s = v.stringValue, let d = Data(base64Encoded: s) else {
                throw WebServicesJSONError("\(v.jsonText) is not valid base64 for a BYTES value")
            }
            return .bytes([UInt8](d))
        case .location:
            guard case .object = v, let lat = v["latitude"]?.doubleValue, let lon = v["longitude"]?.doubleValue else {
                throw WebServicesJSONError("a LOCATION value needs numeric \"latitude\" and \"longitude\"")
            }
            let loc = Location(
                latitude: lat, longitude: lon, altitude: v["altitude"]?.doubleValue ?? 0,
                horizontalAccuracy: v["horizontalAccuracy"]?.doubleValue ?? 0,
                verticalAccuracy: v["verticalAccuracy"]?.doubleValue ?? -1, course: v["course"]?.doubleValue ?? -1,
                speed: v["speed"]?.doubleValue ?? -1,
                timestamp: v["timestamp"]?.int64Value.map { Timestamp(millisecondsSince1970: $0) })
            guard loc.hasValidCoordinates else {
                throw WebServicesJSONError("LOCATION latitude must be in -90...90 and longitude in -180...180")
            }
            return .location(loc)
        case .reference:
            guard case .object = v, let name = v["recordName"]?.stringValue else {
                throw WebServicesJSONError("a REFERENCE value needs a string \"recordName\"")
            }
            let zone =
                try v["zoneID"].map { (z) throws(WebServicesJSONError) in try ZoneID(webServicesJSON: z) } ?? .default
            var action = Reference.Action.none
            if let a = v["action"]?.stringValue {
                switch a.uppercased() {
                case "NONE", "VALIDATE": action = .none
                case "DELETE_SELF": action = .deleteSelf
                default: throw WebServicesJSONError("unknown reference action \"\(a)\"; expected NONE or DELETE_SELF")
                }
            }
            return .reference(Reference(recordID: RecordID(recordName: name, zoneID: zone), action: action))
        case .asset:
            guard case .object = v, let hash = v["fileChecksum"]?.stringValue ?? v["contentHash"]?.stringValue else {
                throw WebServicesJSONError("an ASSETID value needs a string \"fileChecksum\"")
            }
            return .asset(Asset(contentHash: hash, size: v["size"]?.int64Value ?? 0))
        }
    }
}

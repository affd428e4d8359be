// Human-readable text of field values and filters, for the command line and messages.
//
// Strings are JSON-quoted, dates ISO 8601, locations `(lat, lon)`, references `ref(name)` (with
// the zone when it is not the default), bytes `bytes(base64)`, lists `[a, b]`.

import Foundation

extension FieldValue: CustomStringConvertible {
    /// The value as text: strings JSON-quoted, dates ISO 8601, locations `(lat, lon)`, references
    /// `ref(name)`, bytes `bytes(base64)`, lists `[a, b]`.
    public var description: String {
        switch self {
        case .string(let s): return JSONValue.string(s).jsonText
        case .int64(let i): return String(i)
        case .double(let d): return "\(d)"
        case .date(let t): return t.description
        case .bytes(let b): return "bytes(\(Data(b).base64EncodedString()))"
        case .location(let l): return l.description
        case .reference(let r):
            let z = r.recordID.zoneID
            return z == .default ? "ref(\(r.recordID.recordName))" : "ref(\(r.recordID.recordName) in \(z.zoneName))"
        case .asset(let a): return "asset(\(a.contentHash.prefix(12)), \(a.size) bytes)"
        case .list(let items): return "[" + items.map(\.description).joined(separator: ", ") + "]"
        }
    }
}

extension QueryFilter: CustomStringConvertible {
    /// `kind EQUALS "cafe"`, `location NEAR (48.85, 2.29) within 5000 m`.
    public var description: String {
        var s = "\(fieldName) \(comparator.rawValue) \(fieldValue)"
        if let d = distance {
            s += " within " + (d.rounded() == d && abs(d) < 1e15 ? String(Int64(d)) : "\(d)") + " m"
        }
        return s
    }

    /// The Web Services filter: `{"fieldName", "comparator", "fieldValue": {"value", "type"}, "distance"?}`.
    public var webServicesJSON: JSONValue {
        var m: [(String, JSONValue)] = [
            ("fieldName", .string(fieldName)), ("comparator", .string(comparator.rawValue)),
            ("fieldValue", fieldValue.webServicesJSON),
        ]
        if let d = distance { m.append(("distance", .number(d))) }
        return .object(m)
    }
}

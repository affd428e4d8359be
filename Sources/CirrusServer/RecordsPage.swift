// RecordsPage: the answer of records/query written straight into bytes. Building the answer as a
// JSONValue tree and then writing it was the largest cost of the server layer under load (the
// tree's records, arrays of members and strings are allocated, written and freed per request).
// Here the record's own members are written directly; each field's value still comes from
// RecordModel's `FieldValue.webServicesJSON`, so the value formats stay defined in one place.
// The bytes are exactly those of `json.jsonBytes` (tested). An answer with an asset goes the
// JSONValue way, which adds download URLs.

import Cirrus
import RecordModel

/// One page of records/query: the records (or an error each) and the continuation marker.
struct RecordsPage: Sendable {
    var items: [(RecordID, Result<Record, CirrusError>)]
    var continuationMarker: String? = nil

    /// The answer as a JSON value (what tests and the asset path see).
    var json: JSONValue {
        var out: [(String, JSONValue)] = [("records", .array(items.map(WebServicesAPI.recordJSON)))]
        if let continuationMarker { out.append(("continuationMarker", .string(continuationMarker))) }
        return .object(out)
    }

    /// Whether a record of the page has an asset (its answer needs download URLs).
    var hasAssets: Bool {
        items.contains { item in
            guard case .success(let r) = item.1 else { return false }
            return r.fields.values.contains { v in
                switch v {
                case .asset: true
                case .list(let items): items.contains { if case .asset = $0 { true } else { false } }
                default: false
                }
            }
        }
    }

    /// The answer's JSON text as UTF-8 bytes: equal to `json.jsonBytes`.
    var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64 + items.count * 320)
        out += #"{"records":["#.utf8
        for (i, item) in items.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            switch item.1 {
            case .success(let r): Self.write(r, to: &out)
            case .failure: JSONValue.write(WebServicesAPI.recordJSON(item), to: &out)
            }
        }
        out.append(UInt8(ascii: "]"))
        if let continuationMarker {
            out += #","continuationMarker":"#.utf8
            JSONValue.writeString(continuationMarker, to: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// `r.webServicesJSON`, written (same members, same order).
    static func write(_ r: Record, to out: inout [UInt8]) {
        out += #"{"recordName":"#.utf8
        JSONValue.writeString(r.recordID.recordName, to: &out)
        out += #","recordType":"#.utf8
        JSONValue.writeString(r.recordType, to: &out)
        if let tag = r.recordChangeTag {
            out += #","recordChangeTag":"#.utf8
            JSONValue.writeString(tag, to: &out)
        }
        if r.recordID.zoneID != .default {
            out += #","zoneID":"#.utf8
            JSONValue.write(r.recordID.zoneID.webServicesJSON, to: &out)
        }
        if r.creationDate != nil || r.creatorUserRecordID != nil {
            out += #","created":"#.utf8
            writeStamp(r.creationDate, r.creatorUserRecordID, to: &out)
        }
        if r.modificationDate != nil || r.lastModifiedUserRecordID != nil {
            out += #","modified":"#.utf8
            writeStamp(r.modificationDate, r.lastModifiedUserRecordID, to: &out)
        }
        out += #","fields":{"#.utf8
        let names = r.fields.keys.sorted { compareUTF8($0, $1) < 0 }
        for (i, name) in names.enumerated() {
            guard let value = r.fields[name] else { continue }
            if i > 0 { out.append(UInt8(ascii: ",")) }
            JSONValue.writeString(name, to: &out)
            out.append(UInt8(ascii: ":"))
            writeField(value, to: &out)
        }
        out += "}}".utf8
    }

    /// `value.webServicesJSON`, written; the common scalars without building it.
    static func writeField(_ value: FieldValue, to out: inout [UInt8]) {
        switch value {
        case .string(let s):
            out += #"{"value":"#.utf8
            JSONValue.writeString(s, to: &out)
            out += #","type":"STRING"}"#.utf8
        case .int64(let i):
            out += #"{"value":"#.utf8
            JSONValue.writeInteger(i, to: &out)
            out += #","type":"INT64"}"#.utf8
        case .date(let t):
            out += #"{"value":"#.utf8
            JSONValue.writeInteger(t.millisecondsSince1970, to: &out)
            out += #","type":"TIMESTAMP"}"#.utf8
        default: JSONValue.write(value.webServicesJSON, to: &out)
        }
    }

    /// A `created` or `modified` object: `{"timestamp", "userRecordName", "userZoneID"?}`.
    static func writeStamp(_ t: Timestamp?, _ user: RecordID?, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        if let t {
            out += #""timestamp":"#.utf8
            JSONValue.writeInteger(t.millisecondsSince1970, to: &out)
        }
        if let u = user {
            if t != nil { out.append(UInt8(ascii: ",")) }
            out += #""userRecordName":"#.utf8
            JSONValue.writeString(u.recordName, to: &out)
            if u.zoneID != .default {
                out += #","userZoneID":"#.utf8
                JSONValue.write(u.zoneID.webServicesJSON, to: &out)
            }
        }
        out.append(UInt8(ascii: "}"))
    }
}

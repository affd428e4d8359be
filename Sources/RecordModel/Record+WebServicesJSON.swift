// The CloudKit Web Services JSON form of whole records (CKQUERY.md §5), one per line in
// `cirrus import`/`export` files:
//
//   {"recordName": "n1", "recordType": "Note", "recordChangeTag": "3",
//    "zoneID": {"zoneName": "Notes", "ownerRecordName": "_u1"},
//    "created": {"timestamp": 1700000000000, "userRecordName": "_u1"},
//    "modified": {"timestamp": 1700000000500, "userRecordName": "_u1"},
//    "fields": {"title": {"value": "Groceries", "type": "STRING"}}}
//
// Field values go through FieldValue+WebServicesJSON.swift. `zoneID`, `created`, `modified` and
// `recordChangeTag` are optional on input and written only when set (the default zone is not
// written). Field names are written sorted, so exports are stable.

extension Record {
    /// The Web Services JSON object of this record.
    public var webServicesJSON: JSONValue {
        var m: [(String, JSONValue)] = [
            ("recordName", .string(recordID.recordName)), ("recordType", .string(recordType)),
        ]
        if let tag = recordChangeTag { m.append(("recordChangeTag", .string(tag))) }
        if recordID.zoneID != .default { m.append(("zoneID", recordID.zoneID.webServicesJSON)) }
        if creationDate != nil || creatorUserRecordID != nil {
            m.append(("created", Record.stamp(creationDate, creatorUserRecordID)))
        }
        if modificationDate != nil || lastModifiedUserRecordID != nil {
            m.append(("modified", Record.stamp(modificationDate, lastModifiedUserRecordID)))
        }
        let names = fields.keys.sorted { compareUTF8($0, $1) < 0 }
        m.append(("fields", .object(names.compactMap { k in fields[k].map { (k, $0.webServicesJSON) } })))
        return .object(m)
    }

    static func stamp(_ t: Timestamp?, _ user: RecordID?) -> JSONValue {
        var m: [(String, JSONValue)] = []
        if let t { m.append(("timestamp", .integer(t.millisecondsSince1970))) }
        if let u = user {
            m.append(("userRecordName", .string(u.recordName)))
            if u.zoneID != .default { m.append(("userZoneID", u.zoneID.webServicesJSON)) }
        }
        return .object(m)
    }

    /// Reads a Web Services record object. Checks structure and value types; CloudKit's naming
    /// rules are `validate()`'s job.
    public init(webServicesJSON json: JSONValue) throws(WebServicesJSONError) {
        guard case .object = json else { throw WebServicesJSONError("a record is a JSON object, not \(json.kindName)") }
        guard let name = json["recordName"]?.stringValue else {
            throw WebServicesJSONError("missing string \"recordName\"")
        }
        guard let type = json["recordType"]?.stringValue else {
            throw WebServicesJSONError("missing string \"recordType\"")
        }
        var zone = ZoneID.default
        if let z = json["zoneID"] { zone = try ZoneID(webServicesJSON: z) }
        self.init(recordType: type, recordID: RecordID(recordName: name, zoneID: zone))
        if let tag = json["recordChangeTag"] {
            guard let s = tag.stringValue else { throw WebServicesJSONError("\"recordChangeTag\" must be a string") }
            recordChangeTag = s
        }
        if let c = json["created"] { (creationDate, creatorUserRecordID) = try Record.readStamp(c, "created") }
        if let m = json["modified"] {
            (modificationDate, lastModifiedUserRecordID) = try Record.readStamp(m, "modified")
        }
        guard let f = json["fields"] else { return }
        guard case .object(let members) = f else { throw WebServicesJSONError("\"fields\" must be an object") }
        var out: [RecordFields.Field] = []
        out.reserveCapacity(members.count)
        for (k, v) in members {
            do throws(WebServicesJSONError) {
                out.append(RecordFields.Field(k, try FieldValue(webServicesJSON: v)))
            } catch {
                throw WebServicesJSONError("field \"\(k)\": \(error.message)")
            }
        }
        fields = RecordFields(collecting: out)
    }

    static func readStamp(_ j: JSONValue, _ what: String) throws(WebServicesJSONError) -> (Timestamp?, RecordID?) {
        guard case .object = j else { throw WebServicesJSONError("\"\(what)\" must be an object") }
        var t: Timestamp?
        if let ts = j["timestamp"] {
            guard let ms = ts.int64Value else {
                throw WebServicesJSONError("\"\(what)\".timestamp must be an integer (ms)")
            }
            t = Timestamp(millisecondsSince1970: ms)
        }
        var user: RecordID?
        if let u = j["userRecordName"]?.stringValue {
            let zone =
                try j["userZoneID"].map { (z) throws(WebServicesJSONError) in try ZoneID(webServicesJSON: z) }
                ?? .default
            user = RecordID(recordName: u, zoneID: zone)
        }
        return (t, user)
    }
}

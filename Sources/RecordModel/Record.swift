// Record: a CloudKit record — type, identity, fields and the system fields the store maintains.

/// A CloudKit record.
///
/// ```swift
/// var note = Record(recordType: "Note", recordID: RecordID(recordName: "n1"))
/// note["title"] = "Groceries"
/// note["location"] = .location(Location(latitude: 37.33, longitude: -122.03))
/// ```
public struct Record: Sendable, Hashable {
    /// The record type, e.g. `Note`.
    public var recordType: String
    /// The record's identity: name and zone.
    public var recordID: RecordID
    /// User fields by name. A field that is absent is "no value" (CloudKit's nil).
    public var fields: [String: FieldValue]

    /// Set by the store when the record is first saved.
    public var creationDate: Timestamp?
    /// Set by the store on every save.
    public var modificationDate: Timestamp?
    /// The user who created the record, set by the store.
    public var creatorUserRecordID: RecordID?
    /// The user who last saved the record, set by the store.
    public var lastModifiedUserRecordID: RecordID?
    /// An opaque version tag, changed by the store on every save.
    public var recordChangeTag: String?

    /// A record; system fields are normally left nil for the store to set.
    public init(
        recordType: String, recordID: RecordID, fields: [String: FieldValue] = [:],
        creationDate: Timestamp? = nil, modificationDate: Timestamp? = nil,
        creatorUserRecordID: RecordID? = nil, lastModifiedUserRecordID: RecordID? = nil,
        recordChangeTag: String? = nil
    ) {
        self.recordType = recordType
        self.recordID = recordID
        self.fields = fields
        self.creationDate = creationDate
        self.modificationDate = modificationDate
        self.creatorUserRecordID = creatorUserRecordID
        self.lastModifiedUserRecordID = lastModifiedUserRecordID
        self.recordChangeTag = recordChangeTag
    }

    /// Reads or writes a user field; assigning `nil` removes it.
    public subscript(field: String) -> FieldValue? {
        get { fields[field] }
        set { fields[field] = newValue }
    }
}

/// The system fields of every record, with their query names and Web Services index names.
public enum SystemField: String, Sendable, Hashable, Codable, CaseIterable {
    /// The record name (`___recordID` in the schema); compared as a reference to the record.
    case recordName
    /// When the record was first saved (`___createTime`).
    case creationDate
    /// When the record was last saved (`___modTime`).
    case modificationDate
    /// The user who created the record (`___createdBy`).
    case creatorUserRecordID
    /// The user who last saved the record (`___modifiedBy`).
    case lastModifiedUserRecordID
    /// The version tag (`___etag`).
    case recordChangeTag

    /// The index name CloudKit's schema language uses (`___recordID`, `___createTime`, …).
    public var schemaName: String {
        switch self {
        case .recordName: "___recordID"
        case .creationDate: "___createTime"
        case .modificationDate: "___modTime"
        case .creatorUserRecordID: "___createdBy"
        case .lastModifiedUserRecordID: "___modifiedBy"
        case .recordChangeTag: "___etag"
        }
    }

    /// The type a query compares the field as.
    public var fieldType: FieldType {
        switch self {
        case .recordName: .reference
        case .creationDate, .modificationDate: .date
        case .creatorUserRecordID, .lastModifiedUserRecordID: .reference
        case .recordChangeTag: .string
        }
    }

    /// Looks a system field up by its query name or its schema name.
    public init?(name: String) {
        if let f = SystemField(rawValue: name) {
            self = f
        } else if let f = SystemField.allCases.first(where: { $0.schemaName == name }) {
            self = f
        } else {
            return nil
        }
    }
}

// Record: a CloudKit record — type, identity, fields and the system fields the store maintains.

/// A CloudKit record.
///
/// ```swift
/// var note = Record(recordType: "Note", recordID: RecordID(recordName: "n1"))
/// note["title"] = "Groceries"
/// note["location"] = .location(Location(latitude: 37.33, longitude: -122.03))
/// ```
public struct Record: Sendable, Hashable {
    // The values live in one shared, copy-on-write box: copying a record (out of a cache, into a
    // page, into a result) retains one reference instead of every string and dictionary in it,
    // and a write copies the box only when another copy shares it. Equality and hashing are the
    // box's (its contents'), synthesized.
    @usableFromInline
    struct Contents: Hashable {
        @usableFromInline var recordType: String
        @usableFromInline var recordID: RecordID
        @usableFromInline var fields: RecordFields
        @usableFromInline var creationDate: Timestamp?
        @usableFromInline var modificationDate: Timestamp?
        @usableFromInline var creatorUserRecordID: RecordID?
        @usableFromInline var lastModifiedUserRecordID: RecordID?
        @usableFromInline var recordChangeTag: String?
    }

    @usableFromInline var box: CopyOnWriteBox<Contents>

    /// The box, copied first when another record shares it.
    @inlinable @inline(__always)
    mutating func unique() -> CopyOnWriteBox<Contents> { CopyOnWriteBox.unique(&box) }

    /// The record type, e.g. `Note`.
    @inlinable public var recordType: String {
        get { box.contents.recordType }
        _modify { yield &unique().contents.recordType }
    }
    /// The record's identity: name and zone.
    @inlinable public var recordID: RecordID {
        get { box.contents.recordID }
        _modify { yield &unique().contents.recordID }
    }
    /// User fields by name, in name order. A field that is absent is "no value" (CloudKit's nil).
    @inlinable public var fields: RecordFields {
        get { box.contents.fields }
        _modify { yield &unique().contents.fields }
    }

    /// Set by the store when the record is first saved.
    @inlinable public var creationDate: Timestamp? {
        get { box.contents.creationDate }
        _modify { yield &unique().contents.creationDate }
    }
    /// Set by the store on every save.
    @inlinable public var modificationDate: Timestamp? {
        get { box.contents.modificationDate }
        _modify { yield &unique().contents.modificationDate }
    }
    /// The user who created the record, set by the store.
    @inlinable public var creatorUserRecordID: RecordID? {
        get { box.contents.creatorUserRecordID }
        _modify { yield &unique().contents.creatorUserRecordID }
    }
    /// The user who last saved the record, set by the store.
    @inlinable public var lastModifiedUserRecordID: RecordID? {
        get { box.contents.lastModifiedUserRecordID }
        _modify { yield &unique().contents.lastModifiedUserRecordID }
    }
    /// An opaque version tag, changed by the store on every save.
    @inlinable public var recordChangeTag: String? {
        get { box.contents.recordChangeTag }
        _modify { yield &unique().contents.recordChangeTag }
    }

    /// A record; system fields are normally left nil for the store to set.
    public init(
        recordType: String, recordID: RecordID, fields: RecordFields = [:],
        creationDate: Timestamp? = nil, modificationDate: Timestamp? = nil,
        creatorUserRecordID: RecordID? = nil, lastModifiedUserRecordID: RecordID? = nil,
        recordChangeTag: String? = nil
    ) {
        box = CopyOnWriteBox(
            Contents(
                recordType: recordType, recordID: recordID, fields: fields, creationDate: creationDate,
                modificationDate: modificationDate, creatorUserRecordID: creatorUserRecordID,
                lastModifiedUserRecordID: lastModifiedUserRecordID, recordChangeTag: recordChangeTag))
    }

    /// Reads or writes a user field; assigning `nil` removes it.
    @inlinable public subscript(field: String) -> FieldValue? {
        get { box.contents.fields[field] }
        _modify { yield &unique().contents.fields[field] }
    }

    /// The record with only the user fields named in `keys` (a fetch's or query's desired keys):
    /// nil keeps every field, `[]` none. System fields are always kept.
    public func projected(to keys: [String]?) -> Record {
        guard let keys else { return self }
        var p = self
        p.fields = fields.keeping(Set(keys))  // fields held encoded: only these are decoded
        return p
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

    /// The system field whose query name is `name`, nil for any other name: `init(rawValue:)`
    /// behind a check of the name's length, which turns most user field names away without a
    /// string comparison (the generated initializer compares the name with each case in turn,
    /// and planning and executing a query ask it several times per filter).
    @inlinable
    public static func named(_ name: String) -> SystemField? {
        switch name.utf8.count {
        case 10, 12, 15, 16, 19, 24: SystemField(rawValue: name)
        default: nil
        }
    }

    /// Looks a system field up by its query name or its schema name.
    public init?(name: String) {
        if let f = SystemField.named(name) {
            self = f
        } else if let f = SystemField.allCases.first(where: { $0.schemaName == name }) {
            self = f
        } else {
            return nil
        }
    }
}

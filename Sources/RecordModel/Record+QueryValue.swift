// The value a query sees for a field of a record: user fields by name, system fields by their
// query names (recordName and the user ids compare as references, dates as dates).

extension Record {
    /// The value of `field` as queries and indexes see it, or nil when the record has none.
    public func queryValue(_ field: String) -> FieldValue? {
        if let v = fields[field] { return v }
        guard let s = SystemField.named(field) else { return nil }
        return queryValue(s)
    }

    /// The value of a system field as queries and indexes see it.
    public func queryValue(_ field: SystemField) -> FieldValue? {
        switch field {
        case .recordName: return .reference(Reference(recordID: recordID))
        case .creationDate: return creationDate.map { .date($0) }
        case .modificationDate: return modificationDate.map { .date($0) }
        case .creatorUserRecordID: return creatorUserRecordID.map { .reference(Reference(recordID: $0)) }
        case .lastModifiedUserRecordID: return lastModifiedUserRecordID.map { .reference(Reference(recordID: $0)) }
        case .recordChangeTag: return recordChangeTag.map { .string($0) }
        }
    }
}

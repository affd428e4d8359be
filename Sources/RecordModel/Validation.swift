// Validation: CloudKit's rules for names, values and record size, with errors that say what is
// wrong and where.
//
// Owns the rules only. Decoding a stored record never validates (a rule may change after a
// record was written); the store validates on save and import validates each line. The size
// limit is measured on a canonical byte size (`Record.encodedDataSize`) that mirrors the log
// codec's encoding without depending on it: assets count as their hash and size, never their
// content, as in CloudKit.

/// A record, name or value that CloudKit would refuse.
///
/// ```swift
/// do { try record.validate() } catch let e as RecordValidationError { print(e) }
/// // record "n1": field "1st": a field name starts with a letter …
/// ```
public struct RecordValidationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What rule was broken.
    public enum Kind: Sendable, Hashable {
        /// Not `[A-Za-z][A-Za-z0-9_]*` of at most 255 characters.
        case invalidFieldName
        /// A system field name, or one starting with `___`.
        case reservedFieldName
        /// Not `[A-Za-z][A-Za-z0-9_]*` of at most 255 characters.
        case invalidRecordTypeName
        /// Starts with `___`.
        case reservedRecordTypeName
        /// Not 1…255 printable ASCII characters without spaces.
        case invalidRecordName
        /// Not 1…255 printable ASCII characters without spaces.
        case invalidZoneName
        /// A list holding values of more than one type.
        case mixedList
        /// A list inside a list.
        case nestedList
        /// A NaN or infinite `DOUBLE`.
        case nonFiniteDouble
        /// Coordinates out of range, or a non-finite altitude, accuracy, course or speed.
        case invalidLocation
        /// A hash that is not 64 lower-case hex digits, or a negative size.
        case invalidAsset
        /// Record data over the size limit (assets excluded).
        case recordTooLarge
    }

    /// The rule that was broken.
    public var kind: Kind
    /// The record concerned, when known.
    public var recordID: RecordID?
    /// The field concerned, when the rule is about one field.
    public var field: String?
    /// A sentence saying what is wrong and what is allowed.
    public var message: String

    /// An error of `kind` about `recordID` and `field`, when known.
    public init(_ kind: Kind, recordID: RecordID? = nil, field: String? = nil, _ message: String) {
        self.kind = kind
        self.recordID = recordID
        self.field = field
        self.message = message
    }

    /// `record "<name>" [in zone "<zone>"]: field "<field>": <message>`, leaving out what is not known.
    public var description: String {
        var s = ""
        // An invalid record name already names itself.
        if let r = recordID, !(kind == .invalidRecordName && field == nil) {
            s +=
                "record \"\(r.recordName)\"" + (r.zoneID.isDefaultZone ? "" : " in zone \"\(r.zoneID.zoneName)\"")
                + ": "
        }
        if let f = field { s += "field \"\(f)\": " }
        return s + message
    }
}

/// CloudKit's limits, in one place.
public enum RecordLimits {
    /// Longest field, record type or record name, in characters (UTF-8 bytes for record names).
    public static let maximumNameLength = 255
    /// Largest record data, excluding asset content: 1 MB.
    public static let maximumRecordDataSize = 1_048_576
}

/// Name and value rules.
public enum Validation {
    /// Checks a field name: `[A-Za-z][A-Za-z0-9_]*`, at most 255 characters, not a system
    /// field name, not starting with `___` (CloudKit's reserved prefix).
    public static func validateFieldName(_ name: String) throws(RecordValidationError) {
        guard isIdentifier(name) else {
            throw RecordValidationError(
                .invalidFieldName, field: name,
                "a field name starts with a letter, continues with letters, digits or '_' and has at most 255 "
                    + "characters"
            )
        }
        if isSystemFieldName(name) || name.hasPrefix("___") {
            throw RecordValidationError(.reservedFieldName, field: name, "\"\(name)\" is a reserved system field name")
        }
    }

    /// Checks a record type name: same shape as a field name; `___` prefixes are reserved.
    public static func validateRecordTypeName(_ name: String) throws(RecordValidationError) {
        guard isIdentifier(name) else {
            throw RecordValidationError(
                .invalidRecordTypeName,
                "record type \"\(name)\": a type name starts with a letter, continues with letters, digits or '_' "
                    + "and has at most 255 characters"
            )
        }
        if name.hasPrefix("___") {
            throw RecordValidationError(.reservedRecordTypeName, "record type \"\(name)\" is reserved")
        }
    }

    /// Checks a record name: 1…255 printable ASCII characters (0x21…0x7E; no spaces).
    public static func validateRecordName(_ name: String) throws(RecordValidationError) {
        let u = name.utf8
        guard !u.isEmpty, u.count <= RecordLimits.maximumNameLength, u.allSatisfy({ $0 >= 0x21 && $0 <= 0x7E }) else {
            throw RecordValidationError(
                .invalidRecordName,
                "record name \"\(name)\": a record name is 1 to 255 printable ASCII characters without spaces")
        }
    }

    /// Checks a zone name: same shape as a record name.
    public static func validateZoneID(_ zone: ZoneID) throws(RecordValidationError) {
        if zone.isDefaultZone { return }
        let u = zone.zoneName.utf8
        guard !u.isEmpty, u.count <= RecordLimits.maximumNameLength, u.allSatisfy({ $0 >= 0x21 && $0 <= 0x7E }) else {
            throw RecordValidationError(
                .invalidZoneName,
                "zone name \"\(zone.zoneName)\": a zone name is 1 to 255 printable ASCII characters without spaces")
        }
    }

    /// Checks one field value: lists hold one scalar type and do not nest, doubles are
    /// finite, locations have valid coordinates, assets have a 64-hex-digit hash and a size ≥ 0.
    public static func validateValue(_ value: FieldValue, field: String? = nil) throws(RecordValidationError) {
        switch value {
        case .list(let items):
            let first = items.first?.scalarType
            for item in items {
                if case .list = item {
                    throw RecordValidationError(.nestedList, field: field, "lists cannot contain lists")
                }
                if item.scalarType != first {
                    throw RecordValidationError(
                        .mixedList, field: field,
                        "a list holds one type; found \(item.typeName) in a \(first?.webServicesName ?? "?") list")
                }
                try validateScalar(item, field: field)
            }
        default:
            try validateScalar(value, field: field)
        }
    }

    private static func validateScalar(_ value: FieldValue, field: String?) throws(RecordValidationError) {
        switch value {
        case .double(let d) where !d.isFinite:
            throw RecordValidationError(
                .nonFiniteDouble, field: field, "DOUBLE values must be finite (no NaN or infinity)")
        case .location(let l):
            guard l.hasValidCoordinates else {
                throw RecordValidationError(
                    .invalidLocation, field: field, "latitude must be in -90...90 and longitude in -180...180")
            }
            guard l.altitude.isFinite, l.horizontalAccuracy.isFinite, l.verticalAccuracy.isFinite, l.course.isFinite,
                l.speed.isFinite
            else {
                throw RecordValidationError(
                    .invalidLocation, field: field, "location altitude, accuracies, course and speed must be finite")
            }
        case .reference(let r):
            try validateRecordName(r.recordID.recordName)
        case .asset(let a):
            let h = Array(a.contentHash.utf8)
            let hex = h.count == 64 && h.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
            guard hex, a.size >= 0 else {
                throw RecordValidationError(
                    .invalidAsset, field: field, "an asset is a lower-case hex SHA-256 (64 digits) and a size ≥ 0")
            }
        default:
            break
        }
    }

    /// Whether `name` is a system field's query name (lengths first: this runs per field per save).
    static func isSystemFieldName(_ name: String) -> Bool { SystemField.named(name) != nil }

    static func isIdentifier(_ name: String) -> Bool {
        let u = name.utf8
        guard let f = u.first, u.count <= RecordLimits.maximumNameLength, isLetter(f) else { return false }
        return u.allSatisfy { isLetter($0) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F }
    }

    static func isLetter(_ c: UInt8) -> Bool { (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) }
}

extension Record {
    /// Checks every CloudKit rule for this record: type name, record and zone names, field
    /// names, values and the 1 MB data limit (assets excluded).
    public func validate() throws(RecordValidationError) {
        try validateContent()
        let size = encodedDataSize
        if size > RecordLimits.maximumRecordDataSize {
            throw RecordValidationError(
                .recordTooLarge, recordID: recordID,
                "record data is \(size) bytes; the limit is \(RecordLimits.maximumRecordDataSize) bytes excluding "
                    + "assets"
            )
        }
    }

    /// Every rule but the size limit (a store that has just encoded the record checks the size
    /// on its encoding instead of computing `encodedDataSize`).
    public func validateContent() throws(RecordValidationError) {
        do {
            try Validation.validateRecordTypeName(recordType)
            try Validation.validateRecordName(recordID.recordName)
            try Validation.validateZoneID(recordID.zoneID)
            for (name, value) in fields {
                try Validation.validateFieldName(name)
                try Validation.validateValue(value, field: name)
            }
        } catch {
            var e = error
            e.recordID = recordID
            throw e
        }
    }

    /// The size of the record's data as CloudKit counts it against the 1 MB limit: names and
    /// values in a compact binary form (the log codec's), asset content excluded.
    public var encodedDataSize: Int {
        var n = recordType.utf8.count + recordID.recordName.utf8.count + 8
        for (name, value) in fields { n += name.utf8.count + 2 + Record.valueSize(value) }
        return n
    }

    static func valueSize(_ v: FieldValue) -> Int {
        switch v {
        case .string(let s): return s.utf8.count + 2
        case .int64, .double, .date: return 8
        case .bytes(let b): return b.count + 2
        case .location: return 64
        case .reference(let r): return r.recordID.recordName.utf8.count + r.recordID.zoneID.zoneName.utf8.count + 3
        case .asset(let a): return a.contentHash.utf8.count + 8
        case .list(let items): return items.reduce(2) { $0 + valueSize($1) }
        }
    }
}

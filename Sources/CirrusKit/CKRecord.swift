// CKRecord: a record as CloudKit's Swift API has it — a class whose fields are set and read
// with subscripts, which remembers which keys changed, and whose system fields are the server's.
// It is `@unchecked Sendable` (as Apple's is): every mutable part is behind one lock, so records
// may be shared between tasks; a read sees a whole assignment or none of it.

import RecordModel

/// A CloudKit record.
///
/// ```swift
/// let note = CKRecord(recordType: "Note")
/// note["title"] = "Groceries"
/// note["done"] = false
/// let saved = try await CKContainer.default().privateCloudDatabase.save(note)
/// let title = saved["title"] as? String
/// ```
open class CKRecord: NSObject, NSSecureCoding, NSCopying, @unchecked Sendable {
    /// A record type's name.
    public typealias RecordType = String
    /// A field's name.
    public typealias FieldKey = String
    /// A record's identity (`CKRecordID`).
    public typealias ID = CKRecordID
    /// A reference to a record (`CKReference`).
    public typealias Reference = CKReference
    /// What a reference does when its target is deleted.
    public typealias ReferenceAction = CKRecord_Reference_Action

    /// Everything that changes, behind `lock`.
    struct State {
        var fields: [String: any CKRecordValueProtocol] = [:]
        var changed: [String] = []
        var creationDate: Date?
        var modificationDate: Date?
        var creatorUserRecordID: CKRecordID?
        var lastModifiedUserRecordID: CKRecordID?
        var recordChangeTag: String?
        var parent: CKReference?
    }

    private let lock = NSLock()
    private var state = State()

    /// The record's type.
    public let recordType: RecordType
    /// The record's identity.
    public let recordID: ID

    /// A new record of `recordType` with `recordID` (by default a UUID in the default zone).
    public init(recordType: RecordType, recordID: ID = ID()) {
        self.recordType = recordType
        self.recordID = recordID
        super.init()
    }

    /// A new record of `recordType` in `zoneID`, named by a UUID.
    public convenience init(recordType: RecordType, zoneID: CKRecordZoneID) {
        self.init(recordType: recordType, recordID: ID(recordName: UUID().uuidString, zoneID: zoneID))
    }

    func withState<T>(_ body: (inout State) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&state)
    }

    /// When the record was first saved (nil until then).
    public var creationDate: Date? { withState { $0.creationDate } }
    /// When the record was last saved (nil until then).
    public var modificationDate: Date? { withState { $0.modificationDate } }
    /// The user who created the record.
    public var creatorUserRecordID: ID? { withState { $0.creatorUserRecordID } }
    /// The user who last saved the record.
    public var lastModifiedUserRecordID: ID? { withState { $0.lastModifiedUserRecordID } }
    /// The server's version tag of the record (nil until saved).
    public var recordChangeTag: String? { withState { $0.recordChangeTag } }

    /// The record's parent (for sharing hierarchies). Kept on this object only: Cirrus does not
    /// store parents (docs/cirruskit.md).
    public var parent: Reference? {
        get { withState { $0.parent } }
        set { withState { $0.parent = newValue } }
    }

    /// Sets `parent` to a reference to `parentRecord` (nil: none).
    public func setParent(_ parentRecord: CKRecord?) {
        parent = parentRecord.map { Reference(recordID: $0.recordID, action: .none) }
    }

    /// Sets `parent` to a reference to the record with `parentRecordID` (nil: none).
    public func setParent(_ parentRecordID: ID?) {
        parent = parentRecordID.map { Reference(recordID: $0, action: .none) }
    }

    /// The share of the record: always nil (Cirrus does not model sharing).
    public var share: Reference? { nil }

    /// The names of the fields that have a value.
    public func allKeys() -> [FieldKey] { withState { $0.fields.keys.sorted() } }

    /// The fields set or removed since the record was made, fetched or saved.
    public func changedKeys() -> [FieldKey] { withState { $0.changed } }

    /// Whether a changed key was removed (set to nil).
    var hasRemovedKeys: Bool { withState { s in s.changed.contains { s.fields[$0] == nil } } }

    /// The value of a field, nil when it has none.
    public func object(forKey key: FieldKey) -> (any CKRecordValueProtocol)? { withState { $0.fields[key] } }

    /// Sets (or, with nil, removes) a field.
    public func setObject(_ object: (any CKRecordValueProtocol)?, forKey key: FieldKey) {
        let value = object.map { RecordValues.normalize($0) }
        withState { s in
            s.fields[key] = value
            if !s.changed.contains(key) { s.changed.append(key) }
        }
    }

    /// The value of a field (key-value coding's spelling of `object(forKey:)`).
    public func value(forKey key: String) -> Any? { object(forKey: key) }

    /// Sets a field (key-value coding's spelling of `setObject(_:forKey:)`). A value that is not
    /// a `CKRecordValueProtocol` is kept as given and fails the save with invalidArguments.
    public func setValue(_ value: Any?, forKey key: String) {
        switch value {
        case nil: setObject(nil, forKey: key)
        case let v as any CKRecordValueProtocol: setObject(v, forKey: key)
        case let other?: setObject(UnsupportedValue(value: other), forKey: key)
        }
    }

    /// Reads or writes a field: `record["title"] = "Groceries"`, `record["title"] as? String`.
    public subscript(key: FieldKey) -> (any CKRecordValueProtocol)? {
        get { object(forKey: key) }
        set { setObject(newValue, forKey: key) }
    }

    /// Reads or writes a field as a given type: `let n: Int? = record["count"]`.
    public subscript<T: CKRecordValueProtocol>(key: FieldKey) -> T? {
        get {
            guard let v = object(forKey: key) else { return nil }
            if let t = v as? T { return t }
            if T.self == Bool.self, let n = v as? NSNumber { return (n.int64Value != 0) as? T }
            return nil
        }
        set { setObject(newValue, forKey: key) }
    }

    /// A copy with the same identity, fields, system fields and changed keys.
    open func copy(with zone: NSZone? = nil) -> Any {
        let r = CKRecord(recordType: recordType, recordID: recordID)
        let s = withState { $0 }
        r.withState { $0 = s }
        return r
    }

    /// `<CKRecord: recordType=Note, recordID=…, recordChangeTag=…, values={…}>`.
    open override var description: String {
        let s = withState { $0 }
        let values = s.fields.keys.sorted().map { "\($0)=\(s.fields[$0].map { "\($0)" } ?? "nil")" }
        return "<CKRecord: recordType=\(recordType), recordID=\(recordID.recordName), "
            + "recordChangeTag=\(s.recordChangeTag ?? "nil"), values={\(values.joined(separator: ", "))}>"
    }

    // MARK: conversion with the façade's Record

    /// A record from the store's, with its system fields; assets through `asset`.
    convenience init(_ r: Record, asset: (Asset) -> CKAsset) {
        self.init(recordType: r.recordType, recordID: CKRecordID(r.recordID))
        adopt(r, asset: asset)
    }

    /// Takes the server's version: system fields and fields; no key is changed afterwards.
    func adopt(_ r: Record, asset: (Asset) -> CKAsset) {
        var fields: [String: any CKRecordValueProtocol] = [:]
        for (k, v) in r.fields { fields[k] = RecordValues.present(v, asset: asset) }
        withState { s in
            s.fields = fields
            s.changed = []
            s.creationDate = r.creationDate?.date
            s.modificationDate = r.modificationDate?.date
            s.creatorUserRecordID = r.creatorUserRecordID.map { CKRecordID($0) }
            s.lastModifiedUserRecordID = r.lastModifiedUserRecordID.map { CKRecordID($0) }
            s.recordChangeTag = r.recordChangeTag
        }
    }

    /// The store's form of this record: all fields, or only the changed ones that have a value
    /// (`onlyChanged`). invalidArguments names a field whose value CloudKit cannot store;
    /// `asset` gives a stored asset for each CKAsset (it uploads or stores the file).
    func cirrusRecord(
        onlyChanged: Bool = false, asset: (CKAsset) throws(CKError) -> Asset
    ) throws(CKError) -> Record {
        let s = withState { $0 }
        var r = Record(
            recordType: recordType, recordID: recordID.cirrus, creationDate: s.creationDate.map { Timestamp($0) },
            modificationDate: s.modificationDate.map { Timestamp($0) },
            creatorUserRecordID: s.creatorUserRecordID?.cirrus,
            lastModifiedUserRecordID: s.lastModifiedUserRecordID?.cirrus,
            recordChangeTag: s.recordChangeTag)
        let keys = onlyChanged ? s.changed : Array(s.fields.keys)
        for key in keys {
            guard let value = s.fields[key] else { continue }
            var failure: CKError?
            let f = RecordValues.field(value) { a in
                if let stored = a.stored { return stored }
                do throws(CKError) { return try asset(a) } catch {
                    failure = error
                    return nil
                }
            }
            if let failure { throw failure }
            guard let f else {
                throw CKError(
                    .invalidArguments,
                    "field \"\(key)\" of record \"\(recordID.recordName)\": a value of type "
                        + "\((value as? UnsupportedValue).map { "\(type(of: $0.value))" } ?? "\(type(of: value))") "
                        + "is not one CloudKit stores (strings, numbers, dates, data, locations, references, "
                        + "assets, and arrays of one of them)")
            }
            r[key] = f
        }
        return r
    }

    /// The assets not yet stored among the fields to save, with their fields (for a backend to
    /// store them first).
    func assetsToSave(onlyChanged: Bool) -> [(String, CKAsset)] {
        let s = withState { $0 }
        let keys = onlyChanged ? s.changed : Array(s.fields.keys)
        var out: [(String, CKAsset)] = []
        for k in keys.sorted() {
            if let a = s.fields[k] as? CKAsset, a.stored == nil { out.append((k, a)) }
            if let list = s.fields[k] as? [CKAsset] { out += list.filter { $0.stored == nil }.map { (k, $0) } }
        }
        return out
    }

    // MARK: archiving

    /// Records archive securely.
    public class var supportsSecureCoding: Bool { true }

    /// Archives the record's identity and system fields only, for keeping beside local data
    /// and making a record to save changes with later (`CKRecord(coder:)`).
    public func encodeSystemFields(with coder: NSCoder) {
        let s = withState { $0 }
        coder.encode(recordType as NSString, forKey: "recordType")
        coder.encode(recordID, forKey: "recordID")
        if let tag = s.recordChangeTag { coder.encode(tag as NSString, forKey: "recordChangeTag") }
        if let d = s.creationDate { coder.encode(d.timeIntervalSince1970, forKey: "creationDate") }
        if let d = s.modificationDate { coder.encode(d.timeIntervalSince1970, forKey: "modificationDate") }
        if let u = s.creatorUserRecordID { coder.encode(u, forKey: "creatorUserRecordID") }
        if let u = s.lastModifiedUserRecordID { coder.encode(u, forKey: "lastModifiedUserRecordID") }
    }

    /// Archives the system fields and every field (as Web Services JSON; an asset keeps its
    /// stored content's name, not its file).
    open func encode(with coder: NSCoder) {
        encodeSystemFields(with: coder)
        let json =
            (try? cirrusRecord(asset: { (a) throws(CKError) in
                throw CKError(.assetFileNotFound, "asset not stored: \(a)")
            }))?.webServicesJSON
        if case .object(let members)? = json, let fields = members.first(where: { $0.0 == "fields" })?.1 {
            coder.encode(fields.jsonText as NSString, forKey: "fields")
        }
    }

    /// A record from an archive made by `encodeSystemFields(with:)` or `encode(with:)`; nil
    /// when the archive is not one.
    public required init?(coder: NSCoder) {
        guard let type = coder.cirrusObject(of: NSString.self, forKey: "recordType"),
            let id = coder.cirrusObject(of: CKRecordID.self, forKey: "recordID")
        else { return nil }
        recordType = type as String
        recordID = id
        super.init()
        var s = State()
        s.recordChangeTag = coder.cirrusObject(of: NSString.self, forKey: "recordChangeTag") as String?
        if coder.containsValue(forKey: "creationDate") {
            s.creationDate = Date(timeIntervalSince1970: coder.decodeDouble(forKey: "creationDate"))
        }
        if coder.containsValue(forKey: "modificationDate") {
            s.modificationDate = Date(timeIntervalSince1970: coder.decodeDouble(forKey: "modificationDate"))
        }
        s.creatorUserRecordID = coder.cirrusObject(of: CKRecordID.self, forKey: "creatorUserRecordID")
        s.lastModifiedUserRecordID = coder.cirrusObject(of: CKRecordID.self, forKey: "lastModifiedUserRecordID")
        if let text = coder.cirrusObject(of: NSString.self, forKey: "fields") as String?,
            let json = try? JSONValue.parse(text), case .object(let members) = json
        {
            for (k, v) in members {
                guard let f = try? FieldValue(webServicesJSON: v) else { return nil }
                s.fields[k] = RecordValues.present(f, asset: { CKAsset(stored: $0, file: nil) })
            }
        }
        state = s
    }
}

/// A value set with `setValue(_:forKey:)` that CloudKit cannot store, kept so that the save
/// fails naming its field.
struct UnsupportedValue: CKRecordValueProtocol {
    let value: Any
}

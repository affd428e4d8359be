// MirroredObject: a mirrored record read back as the Core Data object it stands for — its entity
// (`CD_entityName`) and its attribute and to-one relationship values by Core Data name.
//
// Mirroring moves a String, Binary Data or Transformable value too large for the record into the
// companion asset field (`CD_body_ckAsset`) and leaves `CD_body` out, so the reader takes `CD_x`
// when the record has it and otherwise the content of `CD_x_ckAsset`, decoded by the attribute's
// type (UTF-8 text for String, the bytes for Binary Data and Transformable). Loading an asset's
// content is the caller's (it owns the database).

import RecordModel

/// A value of a mirrored object, and where the record kept it.
public enum MirroredValue: Sendable, Hashable {
    /// Stored in the record's `CD_` field.
    case field(FieldValue)
    /// Stored in the `_ckAsset` companion: the asset and its content as the attribute's value.
    case asset(Asset, FieldValue)

    /// The value, wherever it was stored.
    public var value: FieldValue {
        switch self {
        case .field(let v), .asset(_, let v): v
        }
    }
}

/// A mirrored record read as a Core Data object.
///
/// ```swift
/// let post = try await CloudKitMirror.read(record, model: model) { asset in
///     try await db.assetData(asset, of: record.recordID)
/// }
/// post.entity                    // "ImagePost"
/// post.values["body"]?.value     // the text, from CD_body or CD_body_ckAsset
/// ```
public struct MirroredObject: Sendable, Hashable {
    /// The record it was read from.
    public var recordID: RecordID
    /// The entity of the object (`CD_entityName`; the root entity when the record has none).
    public var entity: String
    /// The attributes and to-one relationships the record has a value for, by Core Data name.
    public var values: [String: MirroredValue]
    /// The names of the entity's stored attributes and to-one relationships in model order
    /// (ancestors' first), with or without a value.
    public var members: [String]
}

extension CloudKitMirror {
    /// Reads `record`, a record of a mirrored type of `model`, as the object it stands for;
    /// `assetData` loads the content of a `_ckAsset` companion when `CD_x` is absent.
    public static func read(
        _ record: Record, model: CoreDataModel, assetData: (Asset) async throws -> [UInt8]
    ) async throws -> MirroredObject {
        guard record.recordType.hasPrefix(prefix),
            let root = model.entities.first(where: {
                $0.parent == nil && recordType(forRoot: $0.name) == record.recordType
            })?.name
        else {
            throw MirroredQueryError(
                message: "\(record.recordType) is not a record type of the model's mirroring", range: .none)
        }
        var entity = root
        if let named = record.fields[entityNameField] {
            guard case .string(let n) = named, model.root(of: n) == root else {
                throw MirroredQueryError(
                    message: "record \(record.recordID.recordName): \(entityNameField) \(named) is not an entity "
                        + "stored in \(record.recordType)", range: .none)
            }
            entity = n
        }
        var chain: [CoreDataEntity] = []
        var current: String? = entity
        while let n = current, let e = model.entity(n), !chain.contains(where: { $0.name == n }) {
            chain.insert(e, at: 0)
            current = e.parent
        }
        var values: [String: MirroredValue] = [:]
        var members: [String] = []
        for e in chain {
            for a in e.attributes where !a.isTransient {
                guard let kind = a.kind, fieldType(kind) != nil else { continue }
                members.append(a.name)
                if let v = record.fields[prefix + a.name] {
                    values[a.name] = .field(v)
                } else if hasAssetCompanion(kind),
                    case .asset(let asset)? = record.fields[prefix + a.name + assetSuffix]
                {
                    let bytes = try await assetData(asset)
                    values[a.name] = .asset(asset, try decode(bytes, kind, record, a.name))
                }
            }
            for r in e.relationships where !r.isToMany {
                members.append(r.name)
                if let v = record.fields[prefix + r.name] { values[r.name] = .field(v) }
            }
        }
        return MirroredObject(recordID: record.recordID, entity: entity, values: values, members: members)
    }

    /// An asset's content as the value of an attribute of `kind`.
    static func decode(
        _ bytes: [UInt8], _ kind: CoreDataAttribute.Kind, _ record: Record, _ name: String
    ) throws(MirroredQueryError) -> FieldValue {
        guard kind == .string else { return .bytes(bytes) }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw MirroredQueryError(
                message: "record \(record.recordID.recordName): \(prefix + name + assetSuffix) of a String "
                    + "attribute is not UTF-8 text", range: .none)
        }
        return .string(text)
    }
}

// CloudKitMirror: the CloudKit schema that Core Data's CloudKit mirroring
// (NSPersistentCloudKitContainer) produces for a model, and the model rules it enforces.
// Every rule and every decision where Apple's text is unclear: docs/coredata.md.
//
//   entity (root) Post, sub-entity ImagePost  → record type CD_Post with the fields of both and
//                                                CD_entityName ("Post" / "ImagePost")
//   attribute title: String                   → CD_title STRING, CD_title_ckAsset ASSETID
//   to-one relationship author                → CD_author STRING (the related record's name)
//   many-to-many Post.tags ↔ Tag.posts        → record type CDMR (CD_entityNames, CD_recordNames,
//                                                CD_relationships)

import RecordModel

/// One way a model breaks CloudKit mirroring's rules: which rule, where (entity, attribute or
/// relationship, line of the model file) and the message, in Apple's words where Apple has them.
public struct MirrorProblem: Sendable, Hashable, CustomStringConvertible {
    /// The mirroring rules (docs/coredata.md, "Rules"), and `unknownEntity` for a parent or
    /// destination the model does not have.
    public enum Rule: String, Sendable, Hashable, CaseIterable {
        case uniqueConstraint, unsupportedAttributeType, nonOptionalRelationship, missingInverse, denyDeleteRule
        case orderedRelationship, nonOptionalAttributeWithoutDefault, crossConfigurationRelationship
        case unknownEntity
    }

    /// The rule broken.
    public var rule: Rule
    /// The entity it is about.
    public var entity: String
    /// The attribute or relationship, when the problem is one of them.
    public var member: String?
    /// The line of the element in the model file.
    public var line: Int
    /// What is wrong, in Apple's words where Apple has them.
    public var message: String

    /// `line 10: Author.agent: CloudKit integration requires …`.
    public var description: String {
        "line \(line): \(entity)\(member.map { "." + $0 } ?? ""): \(message)"
    }
}

/// The CloudKit schema of a Core Data model under CloudKit mirroring.
public enum CloudKitMirror {
    /// The prefix of every mirrored record type and field.
    public static let prefix = "CD_"
    /// The record type of many-to-many relationship rows.
    public static let manyToManyRecordType = "CDMR"
    /// The field naming the entity of a record (root entities share one record type).
    public static let entityNameField = "CD_entityName"
    /// The suffix of the asset field that holds a value too large for the record.
    public static let assetSuffix = "_ckAsset"

    /// The record type of an entity: `CD_` + its root entity's name.
    public static func recordType(forRoot root: String) -> String { prefix + root }

    /// The CloudKit type of an attribute; nil for a type mirroring does not store.
    public static func fieldType(_ kind: CoreDataAttribute.Kind) -> FieldType? {
        switch kind {
        case .integer16, .integer32, .integer64, .boolean: .int64
        case .double, .float: .double
        case .date: .date
        case .string, .uuid, .uri, .decimal: .string
        case .binary, .transformable: .bytes
        case .undefined, .objectID, .composite: nil
        }
    }

    /// Whether an attribute of this kind has a `_ckAsset` companion for large values.
    public static func hasAssetCompanion(_ kind: CoreDataAttribute.Kind) -> Bool {
        kind == .string || kind == .binary || kind == .transformable
    }

    /// Whether a relationship is many-to-many (both it and its inverse are to-many).
    static func isManyToMany(_ r: CoreDataRelationship, in model: CoreDataModel) -> Bool {
        guard r.isToMany, let inverse = r.inverseName,
            let back = model.entity(r.destination)?.relationships.first(where: { $0.name == inverse })
        else { return false }
        return back.isToMany
    }

    // MARK: schema

    /// The schema mirroring creates for `model` (in development: every field with the options
    /// CloudKit gives a new field). Attributes and relationships that break a rule are mapped as
    /// far as they can be; check `problems(in:)` first.
    public static func schema(for model: CoreDataModel, environment: Environment = .development) -> Schema {
        var types: [String: RecordTypeSchema] = [:]
        var needsCDMR = false
        for root in model.entities where root.parent == nil {
            var fields: [FieldSchema] = [field(entityNameField, .string)]
            for e in model.family(of: root.name) {
                for a in e.attributes where !a.isTransient {
                    guard let kind = a.kind, let type = fieldType(kind) else { continue }
                    fields.append(field(prefix + a.name, type))
                    if hasAssetCompanion(kind) { fields.append(field(prefix + a.name + assetSuffix, .asset)) }
                }
                for r in e.relationships {
                    if !r.isToMany {
                        fields.append(field(prefix + r.name, .string))
                    } else if isManyToMany(r, in: model) {
                        needsCDMR = true
                    }
                }
            }
            let name = recordType(forRoot: root.name)
            var t = RecordTypeSchema(name: name)
            for f in fields where t.fields[f.name] == nil { t.fields[f.name] = f }
            types[name] = t
        }
        if needsCDMR {
            var t = RecordTypeSchema(name: manyToManyRecordType)
            for n in ["CD_entityNames", "CD_recordNames", "CD_relationships"] { t.fields[n] = field(n, .string) }
            types[manyToManyRecordType] = t
        }
        return Schema(environment: environment, recordTypes: Array(types.values))
    }

    static func field(_ name: String, _ type: FieldType) -> FieldSchema {
        FieldSchema(name: name, type: type, options: .automatic(for: type))
    }

    // MARK: rules

    /// Every rule `model` breaks, in file order (all of them, not the first).
    public static func problems(in model: CoreDataModel) -> [MirrorProblem] {
        var out: [MirrorProblem] = []
        for e in model.entities {
            if let p = e.parent, model.entity(p) == nil {
                out.append(
                    MirrorProblem(
                        rule: .unknownEntity, entity: e.name, line: e.line,
                        message: "the parent entity \"\(p)\" is not in the model"))
            }
            for c in e.uniquenessConstraints {
                out.append(
                    MirrorProblem(
                        rule: .uniqueConstraint, entity: e.name, member: c.joined(separator: ","), line: e.line,
                        message: "CloudKit integration does not support unique constraints."))
            }
            for a in e.attributes { out += attributeProblems(a, entity: e) }
            for r in e.relationships { out += relationshipProblems(r, entity: e, model: model) }
        }
        return out.sorted { ($0.line, $0.entity) < ($1.line, $1.entity) }
    }

    static func attributeProblems(_ a: CoreDataAttribute, entity e: CoreDataEntity) -> [MirrorProblem] {
        var out: [MirrorProblem] = []
        func problem(_ rule: MirrorProblem.Rule, _ message: String) {
            out.append(MirrorProblem(rule: rule, entity: e.name, member: a.name, line: a.line, message: message))
        }
        switch a.kind {
        case .undefined?, .objectID?:
            problem(
                .unsupportedAttributeType,
                "CloudKit integration does not support attributes of type "
                    + "\(a.typeName == "ObjectID" ? "Object ID" : a.typeName)."
            )
        case .composite?:
            problem(
                .unsupportedAttributeType,
                "composite attributes are not mapped by Cirrus (store their parts as attributes).")
        case nil:
            problem(.unsupportedAttributeType, "unknown attribute type \"\(a.typeName)\".")
        default:
            break
        }
        if !a.isOptional && a.defaultValue == nil && !a.isTransient {
            problem(
                .nonOptionalAttributeWithoutDefault,
                "CloudKit integration requires that all attributes be optional, or have a default value set.")
        }
        return out
    }

    static func relationshipProblems(
        _ r: CoreDataRelationship, entity e: CoreDataEntity, model: CoreDataModel
    ) -> [MirrorProblem] {
        var out: [MirrorProblem] = []
        func problem(_ rule: MirrorProblem.Rule, _ message: String) {
            out.append(MirrorProblem(rule: rule, entity: e.name, member: r.name, line: r.line, message: message))
        }
        if !r.isOptional {
            problem(.nonOptionalRelationship, "CloudKit integration requires that all relationships be optional.")
        }
        if r.isOrdered { problem(.orderedRelationship, "CloudKit integration does not support ordered relationships.") }
        if r.deleteRule == "Deny" {
            problem(.denyDeleteRule, "CloudKit integration does not support the Deny deletion rule for relationships.")
        }
        guard let destination = model.entity(r.destination) else {
            problem(.unknownEntity, "the destination entity \"\(r.destination)\" is not in the model.")
            return out
        }
        if let inverse = r.inverseName {
            if !destination.relationships.contains(where: { $0.name == inverse }) {
                problem(.missingInverse, "the inverse \"\(inverse)\" is not a relationship of \(r.destination).")
            }
        } else {
            problem(.missingInverse, "CloudKit integration requires that all relationships have an inverse.")
        }
        for c in model.configurations where c.entities.contains(e.name) && !c.entities.contains(r.destination) {
            problem(
                .crossConfigurationRelationship,
                "CloudKit integration does not support relationships to entities in other configurations "
                    + "(\(r.destination) is not in configuration \(c.name)).")
        }
        return out
    }
}

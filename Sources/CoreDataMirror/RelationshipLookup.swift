// RelationshipLookup: a to-many relationship test of a mirrored query, answered by a query of
// other records first (docs/coredata.md, "To-many relationships").
//
// CloudKit cannot test a to-many relationship on the entity's own records: mirroring stores it
// as CDMR rows (many-to-many) or as the to-one field of the other side (one-to-many). So
//
//   entity Post, "tags CONTAINS 'swift'"
//
// becomes the main query `recordName IN $CD_tags_1` on CD_Post, and the lookup
//
//   $CD_tags_1 = CDMR WHERE CD_entityNames == 'Post:Tag' AND CD_relationships == 'tags:posts'
//
// whose rows (`CD_recordNames` = `post:tag`) give the posts related to tag `swift`. For a
// one-to-many (Post.attachments ↔ Attachment.post) the lookup is
// `CD_Attachment WHERE recordName IN {'a1'}` and the posts are the values of `CD_post`.
// Running the lookup is the caller's (it owns the database); `recordIDs(from:)` reads its rows.

import PredicateSyntax
import RecordModel

/// One to-many relationship test of a mirrored query, answered by a lookup query whose records
/// give the entity's record names that pass it; they are bound to `variable` in the main query.
///
/// ```swift
/// let q = try CloudKitMirror.rewrite(PredicateParser.parse("tags CONTAINS 'swift'"), entity: "Post", model: m)
/// let lookup = q.lookups[0]       // CDMR WHERE CD_entityNames == 'Post:Tag' AND …
/// let posts = try lookup.recordIDs(from: cdmrRecords)
/// ```
public struct RelationshipLookup: Sendable, Hashable, CustomStringConvertible {
    /// Whether a record must be related to any or to all of `relatedNames`.
    public enum Quantifier: Sendable, Hashable {
        /// `tags CONTAINS 'a'`, `ANY tags == 'a'`, `'a' IN tags`, `ANY tags IN {'a', 'b'}`.
        case any
        /// `ALL {'a', 'b'} IN tags`.
        case all
    }

    /// Where the lookup's records say which objects are related.
    public enum Source: Sendable, Hashable {
        /// CDMR rows: `CD_recordNames` holds two record names separated by `:`; this entity's is
        /// the one at index `own` (0 or 1), the related object's the other.
        case manyToMany(own: Int)
        /// Records of the related entity: their to-one field `field` holds this entity's record
        /// name (the inverse of a one-to-many).
        case inverseToOne(field: String)
    }

    /// The `$variable` of the main query that the record names are bound to (`CD_tags_1`).
    public var variable: String
    /// The entity the query is written against.
    public var entity: String
    /// The to-many relationship tested (`tags`).
    public var relationship: String
    /// The record names of the related objects the predicate names.
    public var relatedNames: [String]
    /// Any or all of `relatedNames`.
    public var quantifier: Quantifier
    /// The record type the lookup queries (`CDMR` or the related entity's `CD_` type).
    public var recordType: String
    /// The lookup's predicate on `recordType`.
    public var predicate: PredicateSyntax.Predicate
    /// How the lookup's records are read.
    public var source: Source

    /// `$CD_tags_1 = Post records whose tags include 'swift': CDMR WHERE …`.
    public var description: String {
        let names = relatedNames.map { "'\($0)'" }
        let what =
            names.count == 1
            ? names[0] : (quantifier == .all ? "all of " : "any of ") + "{" + names.joined(separator: ", ") + "}"
        return "$\(variable) = \(entity) records whose \(relationship) include \(what): "
            + "\(recordType) WHERE \(predicate.formatString)"
    }

    /// The record IDs of this entity's objects that pass the test, sorted, from the records the
    /// lookup query returned (all of its pages). An object is in the zone of the lookup record
    /// that names it (mirroring keeps an object, its CDMR rows and its related objects in one zone).
    public func recordIDs(from records: [Record]) throws(MirroredQueryError) -> [RecordID] {
        let wanted = Set(relatedNames)
        var related: [RecordID: Set<String>] = [:]  // own record → the related names it has among `wanted`
        for r in records {
            switch source {
            case .manyToMany(let own):
                guard case .string(let pair)? = r.fields[CloudKitMirror.recordNamesField] else {
                    throw MirroredQueryError(
                        message:
                            "CDMR record \(r.recordID.recordName) has no STRING \(CloudKitMirror.recordNamesField)",
                        range: .none)
                }
                let parts = pair.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
                guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                    throw MirroredQueryError(
                        message: "CDMR record \(r.recordID.recordName): \(CloudKitMirror.recordNamesField) "
                            + "\"\(pair)\" is not two record names separated by ':'", range: .none)
                }
                let other = parts[1 - own]
                if wanted.contains(other) {
                    related[RecordID(recordName: parts[own], zoneID: r.recordID.zoneID), default: []].insert(other)
                }
            case .inverseToOne(let field):
                let name = r.recordID.recordName
                guard wanted.contains(name), case .string(let owner)? = r.fields[field], !owner.isEmpty else {
                    continue
                }
                related[RecordID(recordName: owner, zoneID: r.recordID.zoneID), default: []].insert(name)
            }
        }
        let passing = related.filter { quantifier == .any || $0.value.count == wanted.count }.keys
        return passing.sorted()
    }
}

extension Array where Element == RelationshipLookup {
    /// The `$variables` of a mirrored query's predicate, bound: each lookup's records (as
    /// references, `recordIDs(from:)`). `run` executes one lookup query and returns all its records.
    ///
    /// ```swift
    /// let variables = try await query.lookups.bindings { l in try await allRecords(l.recordType, l.predicate) }
    /// ```
    public func bindings(
        run: (RelationshipLookup) async throws -> [Record]
    ) async throws -> [String: PredicateArgument] {
        var out: [String: PredicateArgument] = [:]
        for l in self {
            let ids = try l.recordIDs(from: try await run(l))
            out[l.variable] = .value(.list(ids.map { .reference(Reference(recordID: $0)) }))
        }
        return out
    }
}

extension CloudKitMirror {
    /// The CDMR field naming the two entities (`Post:Tag`).
    public static let entityNamesField = "CD_entityNames"
    /// The CDMR field holding the two objects' record names (`p1:t1`).
    public static let recordNamesField = "CD_recordNames"
    /// The CDMR field naming the relationship on each side (`tags:posts`).
    public static let relationshipsField = "CD_relationships"

    /// The order of the two sides of a many-to-many relationship in CDMR values: entities
    /// alphabetically; for a relationship of an entity with itself, the relationship names.
    /// Returns whether the side (`entity`, `relationship`) comes first.
    static func comesFirst(_ entity: String, _ relationship: String, before other: String, _ inverse: String) -> Bool {
        entity != other ? entity < other : relationship <= inverse
    }

    /// The lookup that answers a to-many test of relationship `r` of `entity`.
    static func lookup(
        for r: CoreDataRelationship, entity: String, model: CoreDataModel, values: [String],
        quantifier: RelationshipLookup.Quantifier, variable: String, range: SourceRange
    ) throws(MirroredQueryError) -> RelationshipLookup {
        guard let inverseName = r.inverseName, let destination = model.entity(r.destination),
            let inverse = destination.relationships.first(where: { $0.name == inverseName }),
            let destinationRoot = model.root(of: r.destination)
        else {
            throw MirroredQueryError(
                message: "\"\(r.name)\" has no inverse in the model, so mirroring stores nothing to query it by",
                range: range)
        }
        func string(_ s: String) -> Expression { Expression(.constant(.string(s))) }
        func compare(_ field: String, _ op: ComparisonOperator, _ value: Expression) -> PredicateSyntax.Predicate {
            PredicateSyntax.Predicate(
                .comparison(Comparison(left: Expression(.key(field)), op: op, right: value)))
        }
        if inverse.isToMany {
            let first = comesFirst(entity, r.name, before: r.destination, inverseName)
            let entities = first ? "\(entity):\(r.destination)" : "\(r.destination):\(entity)"
            let relationships = first ? "\(r.name):\(inverseName)" : "\(inverseName):\(r.name)"
            var p = PredicateSyntax.Predicate(
                .and(
                    compare(entityNamesField, .equal, string(entities)),
                    compare(relationshipsField, .equal, string(relationships))))
            // With one related object on the first side, its rows share a prefix CloudKit can seek.
            if values.count == 1, !first {
                p = PredicateSyntax.Predicate(.and(p, compare(recordNamesField, .beginsWith, string(values[0] + ":"))))
            }
            return RelationshipLookup(
                variable: variable, entity: entity, relationship: r.name, relatedNames: values,
                quantifier: quantifier, recordType: manyToManyRecordType, predicate: p,
                source: .manyToMany(own: first ? 0 : 1))
        }
        let p = compare(
            SystemField.recordName.rawValue, .in, Expression(.aggregate(values.map { string($0) })))
        return RelationshipLookup(
            variable: variable, entity: entity, relationship: r.name, relatedNames: values,
            quantifier: quantifier, recordType: recordType(forRoot: destinationRoot), predicate: p,
            source: .inverseToOne(field: prefix + inverseName))
    }
}

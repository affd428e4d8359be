// MirroredQuery: a predicate written against a Core Data entity, rewritten onto the records that
// CloudKit mirroring stores (docs/coredata.md, "Querying"):
//
//   entity ImagePost, "title BEGINSWITH 'A' AND version <= 3"
//     → type CD_Post, "CD_title BEGINSWITH 'A' AND CD_version <= 3 AND CD_entityName == 'ImagePost'"
//
// Keys naming an attribute or a to-one relationship of the entity (or of an ancestor) become
// their CD_ fields; a to-one relationship is compared with the related object's record name.
// A root entity's query includes its sub-entities, as a Core Data fetch does; a sub-entity's
// adds `CD_entityName` (== for one entity, IN for one with sub-entities of its own). CloudKit's
// own keys (self, recordName, creationDate, …) stay as they are. The rewrite works on the syntax
// tree, so the result goes through the same checker and planner as any query.

import PredicateSyntax
import RecordModel

/// A query on mirrored records: the record type and the rewritten predicate.
public struct MirroredQuery: Sendable, Hashable {
    public var entity: String
    public var recordType: String
    public var predicate: PredicateSyntax.Predicate

    /// The rewritten predicate as a format string.
    public var formatString: String { predicate.formatString }
}

/// Why a predicate cannot be rewritten: the message and where in the predicate text.
public struct MirroredQueryError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    public var range: SourceRange

    public var description: String { message }
}

extension CloudKitMirror {
    /// The keys CloudKit itself answers on every record; they are not renamed.
    static let cloudKitKeys: Set<String> = [
        "recordName", "recordID", "creationDate", "modificationDate", "creatorUserRecordID",
        "lastModifiedUserRecordID", "recordChangeTag", "___recordID", "___createTime", "___modTime",
        "___createdBy", "___modifiedBy",
    ]

    /// Rewrites `predicate`, written against `entity` of `model`, onto the mirrored records.
    public static func rewrite(
        _ predicate: PredicateSyntax.Predicate, entity: String, model: CoreDataModel
    ) throws(MirroredQueryError) -> MirroredQuery {
        guard model.entity(entity) != nil, let root = model.root(of: entity) else {
            throw MirroredQueryError(message: "the model has no entity \"\(entity)\"", range: .none)
        }
        let names = memberNames(of: entity, model: model)
        var p = try rewrite(predicate, names)
        if entity != root {
            let family = model.entities.filter { isDescendant($0.name, of: entity, model) }.map(\.name).sorted()
            let field = Expression(.key(entityNameField))
            let filter: PredicateSyntax.Predicate
            if family.count == 1 {
                filter = PredicateSyntax.Predicate(
                    .comparison(Comparison(left: field, op: .equal, right: Expression(.constant(.string(entity))))))
            } else {
                let values = family.map { Expression(.constant(.string($0))) }
                filter = PredicateSyntax.Predicate(
                    .comparison(Comparison(left: field, op: .in, right: Expression(.aggregate(values)))))
            }
            p = p.kind == .truePredicate ? filter : PredicateSyntax.Predicate(.and(p, filter))
        }
        return MirroredQuery(entity: entity, recordType: recordType(forRoot: root), predicate: p)
    }

    /// Renames a sort or desiredKeys field of `entity`: its CD_ field, or the name unchanged when
    /// it is one of CloudKit's own keys; nil when the entity has no such attribute.
    public static func fieldName(_ name: String, entity: String, model: CoreDataModel) -> String? {
        switch memberNames(of: entity, model: model)[name] {
        case .stored?: return prefix + name
        case .toMany?: return nil
        case nil: return cloudKitKeys.contains(name) ? name : nil
        }
    }

    enum Member { case stored, toMany }

    /// The attributes and relationships `entity` has, its own and inherited.
    static func memberNames(of entity: String, model: CoreDataModel) -> [String: Member] {
        var out: [String: Member] = [:]
        var current: String? = entity
        var seen: Set<String> = []
        while let name = current, seen.insert(name).inserted, let e = model.entity(name) {
            for a in e.attributes where !a.isTransient && out[a.name] == nil { out[a.name] = .stored }
            for r in e.relationships where out[r.name] == nil { out[r.name] = r.isToMany ? .toMany : .stored }
            current = e.parent
        }
        return out
    }

    static func isDescendant(_ name: String, of ancestor: String, _ model: CoreDataModel) -> Bool {
        var current: String? = name
        var seen: Set<String> = []
        while let n = current, seen.insert(n).inserted {
            if n == ancestor { return true }
            current = model.entity(n)?.parent
        }
        return false
    }

    static func rewrite(
        _ p: PredicateSyntax.Predicate, _ names: [String: Member]
    ) throws(MirroredQueryError) -> PredicateSyntax.Predicate {
        var out = p
        switch p.kind {
        case .truePredicate, .falsePredicate: break
        case .not(let a): out.kind = .not(try rewrite(a, names))
        case .and(let a, let b): out.kind = .and(try rewrite(a, names), try rewrite(b, names))
        case .or(let a, let b): out.kind = .or(try rewrite(a, names), try rewrite(b, names))
        case .comparison(var c):
            c.left = try rewrite(c.left, names)
            c.right = try rewrite(c.right, names)
            out.kind = .comparison(c)
        }
        return out
    }

    static func rewrite(_ e: Expression, _ names: [String: Member]) throws(MirroredQueryError) -> Expression {
        var out = e
        switch e.kind {
        case .key(let name):
            switch names[name] {
            case .stored?: out.kind = .key(prefix + name)
            case .toMany?:
                throw MirroredQueryError(
                    message:
                        "\"\(name)\" is a to-many relationship: CloudKit stores it as CDMR records or on the other side, "
                        + "which a query of this entity cannot test (query the related entity instead)",
                    range: e.range)
            case nil:
                guard cloudKitKeys.contains(name) else {
                    throw MirroredQueryError(
                        message: "the entity has no attribute or relationship \"\(name)\"", range: e.range)
                }
            }
        case .member:
            throw MirroredQueryError(
                message: "key paths through relationships cannot be queried in CloudKit; compare the relationship "
                    + "with the related object's record name", range: e.range)
        case .aggregate(let items):
            var rewritten: [Expression] = []
            for i in items { rewritten.append(try rewrite(i, names)) }
            out.kind = .aggregate(rewritten)
        case .function(let name, let arguments):
            var rewritten: [Expression] = []
            for a in arguments { rewritten.append(try rewrite(a, names)) }
            out.kind = .function(name: name, arguments: rewritten)
        default:
            break
        }
        return out
    }
}

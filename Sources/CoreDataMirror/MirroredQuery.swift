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
// own keys (self, recordName, creationDate, …) stay as they are. A to-many relationship test
// (`tags CONTAINS 't1'`) becomes `recordName IN $CD_tags_1` plus a RelationshipLookup the caller
// runs first (RelationshipLookup.swift). The rewrite works on the syntax tree, so the result goes
// through the same checker and planner as any query.

import PredicateSyntax
import RecordModel

/// A query on mirrored records: the record type, the rewritten predicate and the relationship
/// lookups that bind its `$CD_…` variables.
public struct MirroredQuery: Sendable, Hashable {
    /// The entity the predicate was written against.
    public var entity: String
    /// The record type holding the entity's objects (`CD_` + its root entity).
    public var recordType: String
    /// The predicate on `recordType`; a to-many test is `recordName IN $CD_rel_N`, bound by a lookup.
    public var predicate: PredicateSyntax.Predicate
    /// The to-many relationship tests, each answered by a query of other records first, in order.
    public var lookups: [RelationshipLookup] = []

    /// The rewritten predicate as a format string.
    public var formatString: String { predicate.formatString }
}

/// Why a predicate cannot be rewritten: the message and where in the predicate text.
public struct MirroredQueryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, in one sentence.
    public var message: String
    /// The part of the predicate text it is about (`.none` when it is about no part).
    public var range: SourceRange

    /// Makes an error.
    public init(message: String, range: SourceRange) {
        self.message = message
        self.range = range
    }

    /// The message.
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
    /// `variables` give the record names of a to-many test written with a `$variable` (a string,
    /// a reference, or a list of them); other variables are left for the checker.
    public static func rewrite(
        _ predicate: PredicateSyntax.Predicate, entity: String, model: CoreDataModel,
        variables: [String: PredicateArgument] = [:]
    ) throws(MirroredQueryError) -> MirroredQuery {
        guard model.entity(entity) != nil, let root = model.root(of: entity) else {
            throw MirroredQueryError(message: "the model has no entity \"\(entity)\"", range: .none)
        }
        var rewriter = Rewriter(
            entity: entity, model: model, names: memberNames(of: entity, model: model), variables: variables)
        var p = try rewriter.rewrite(predicate)
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
        return MirroredQuery(
            entity: entity, recordType: recordType(forRoot: root), predicate: p, lookups: rewriter.lookups)
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

    /// Whether entity `name` is `ancestor` or one of its sub-entities (at any depth).
    public static func isDescendant(_ name: String, of ancestor: String, _ model: CoreDataModel) -> Bool {
        var current: String? = name
        var seen: Set<String> = []
        while let n = current, seen.insert(n).inserted {
            if n == ancestor { return true }
            current = model.entity(n)?.parent
        }
        return false
    }

}

/// One rewrite: the entity's member names, and the lookups the to-many tests need.
struct Rewriter {
    let entity: String
    let model: CoreDataModel
    let names: [String: CloudKitMirror.Member]
    let variables: [String: PredicateArgument]
    var lookups: [RelationshipLookup] = []

    mutating func rewrite(_ p: PredicateSyntax.Predicate) throws(MirroredQueryError) -> PredicateSyntax.Predicate {
        var out = p
        switch p.kind {
        case .truePredicate, .falsePredicate: break
        case .not(let a): out.kind = .not(try rewrite(a))
        case .and(let a, let b): out.kind = .and(try rewrite(a), try rewrite(b))
        case .or(let a, let b): out.kind = .or(try rewrite(a), try rewrite(b))
        case .comparison(var c):
            if let test = try toManyTest(c) {
                out.kind = .comparison(test)
                return out
            }
            c.left = try rewrite(c.left)
            c.right = try rewrite(c.right)
            out.kind = .comparison(c)
        }
        return out
    }

    /// A comparison testing a to-many relationship — `rel CONTAINS 'n'`, `'n' IN rel`,
    /// `ANY rel == 'n'`, `ANY rel IN {…}`, `ALL {…} IN rel` with the related objects' record
    /// names — becomes `recordName IN $CD_rel_N` and a lookup; nil when `c` names no to-many
    /// relationship.
    mutating func toManyTest(_ c: Comparison) throws(MirroredQueryError) -> Comparison? {
        func relationship(_ e: Expression) -> String? {
            if case .key(let k) = e.kind, names[k] == .toMany { return k }
            return nil
        }
        guard let name = relationship(c.left) ?? relationship(c.right) else { return nil }
        let keySide = relationship(c.left) != nil ? c.left : c.right
        let valueSide = relationship(c.left) != nil ? c.right : c.left
        let shape: RelationshipLookup.Quantifier?
        switch (c.modifier, c.op, relationship(c.left) != nil) {
        case (.direct, .contains, true), (.direct, .in, false), (.any, .equal, _): shape = .any
        case (.any, .in, true): shape = .any
        case (.all, .in, false): shape = .all
        default: shape = nil
        }
        guard let quantifier = shape, c.options.isEmpty else {
            throw MirroredQueryError(
                message: "\"\(name)\" is a to-many relationship: test it with \(name) CONTAINS 'recordName', "
                    + "ANY \(name) IN {…} or ALL {…} IN \(name) (the related objects' record names)",
                range: c.operatorRange == .none ? keySide.range : c.operatorRange)
        }
        let list = (c.modifier == .any && c.op == .in) || c.modifier == .all
        let values = try recordNames(valueSide, list: list)
        guard let r = relationshipNamed(name) else { return nil }
        let variable = CloudKitMirror.prefix + name + "_\(lookups.count + 1)"
        lookups.append(
            try CloudKitMirror.lookup(
                for: r, entity: owner(of: name), model: model, values: values, quantifier: quantifier,
                variable: variable, range: keySide.range))
        return Comparison(
            left: Expression(.key(SystemField.recordName.rawValue), range: keySide.range), op: .in,
            right: Expression(.variable(variable), range: valueSide.range), operatorRange: c.operatorRange)
    }

    /// The related record names a to-many test names: a string, or (`list`) an aggregate of strings.
    func recordNames(_ e: Expression, list: Bool) throws(MirroredQueryError) -> [String] {
        switch e.kind {
        case .constant(.string(let s)) where !s.isEmpty && !list:
            return [s]
        case .variable(let v):
            guard case .value(let value)? = variables[v] else {
                throw MirroredQueryError(message: "$\(v) is not bound to a record name", range: e.range)
            }
            func name(_ x: FieldValue) -> String? {
                switch x {
                case .string(let s) where !s.isEmpty: s
                case .reference(let r): r.recordID.recordName
                default: nil
                }
            }
            if !list, let n = name(value) { return [n] }
            if list, case .list(let items) = value, !items.isEmpty {
                var out: [String] = []
                for i in items {
                    guard let n = name(i) else { throw notNames(e, list: true) }
                    if !out.contains(n) { out.append(n) }
                }
                return out
            }
            throw notNames(e, list: list)
        case .placeholder:
            throw MirroredQueryError(
                message: "a to-many test takes its record names as strings or a $variable; placeholders are not "
                    + "substituted before the rewrite", range: e.range)
        case .aggregate(let items) where !items.isEmpty && list:
            var out: [String] = []
            for i in items {
                guard case .constant(.string(let s)) = i.kind, !s.isEmpty else {
                    throw notNames(i, list: false)
                }
                if !out.contains(s) { out.append(s) }
            }
            return out
        default:
            throw notNames(e, list: list)
        }
    }

    func notNames(_ e: Expression, list: Bool) -> MirroredQueryError {
        MirroredQueryError(
            message: "a to-many relationship is tested with the related objects' record names, written as "
                + (list ? "a collection of strings ({'p1', 'p2'})" : "a string ('p1')")
                + " or a $variable bound to " + (list ? "a list of them" : "one"), range: e.range)
    }

    /// The relationship `name` of the entity or of its nearest ancestor declaring it.
    func relationshipNamed(_ name: String) -> CoreDataRelationship? {
        model.entity(owner(of: name))?.relationships.first { $0.name == name }
    }

    /// The entity (the queried one or an ancestor) that declares member `name`.
    func owner(of name: String) -> String {
        var current: String? = entity
        var seen: Set<String> = []
        while let n = current, seen.insert(n).inserted, let e = model.entity(n) {
            if e.relationships.contains(where: { $0.name == name }) { return n }
            current = e.parent
        }
        return entity
    }

    func rewrite(_ e: Expression) throws(MirroredQueryError) -> Expression {
        var out = e
        switch e.kind {
        case .key(let name):
            switch names[name] {
            case .stored?: out.kind = .key(CloudKitMirror.prefix + name)
            case .toMany?:
                throw MirroredQueryError(
                    message: "\"\(name)\" is a to-many relationship: test it with \(name) CONTAINS 'recordName', "
                        + "ANY \(name) IN {…} or ALL {…} IN \(name) (the related objects' record names)",
                    range: e.range)
            case nil:
                guard CloudKitMirror.cloudKitKeys.contains(name) else {
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
            for i in items { rewritten.append(try rewrite(i)) }
            out.kind = .aggregate(rewritten)
        case .function(let name, let arguments):
            var rewritten: [Expression] = []
            for a in arguments { rewritten.append(try rewrite(a)) }
            out.kind = .function(name: name, arguments: rewritten)
        default:
            break
        }
        return out
    }
}

// Predicates written against Core Data entities, rewritten onto the mirrored records: keys become
// CD_ fields, a sub-entity adds CD_entityName, a to-one relationship is a record name, and what
// CloudKit cannot answer (to-many, key paths, unknown keys) is an error that says where.

import Foundation
import PredicateSyntax
import RecordModel
import Testing

@testable import CoreDataMirror

private let models = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Models").path

@Suite struct MirroredQueryTests {
    let model: CoreDataModel

    init() throws { model = try CoreDataModel.read(path: models + "/Blog.xcdatamodeld") }

    private func rewrite(_ text: String, _ entity: String) throws -> MirroredQuery {
        try CloudKitMirror.rewrite(try PredicateParser.parse(text), entity: entity, model: model)
    }

    /// The rewrite must equal the predicate written by hand against the CD_ records.
    private func expectRewrite(_ text: String, _ entity: String, _ type: String, _ expected: String) throws {
        let q = try rewrite(text, entity)
        #expect(q.recordType == type)
        #expect(q.predicate == (try PredicateParser.parse(expected)), "\(q.formatString)")
    }

    @Test func attributesBecomeTheirFieldsOnTheRootType() throws {
        try expectRewrite(
            "title BEGINSWITH 'A' AND version <= 3", "Post", "CD_Post", "CD_title BEGINSWITH 'A' AND CD_version <= 3")
        try expectRewrite(
            "NOT (archived == 1) OR rating > 2.5", "Post", "CD_Post", "NOT (CD_archived == 1) OR CD_rating > 2.5")
        try expectRewrite("title IN {'a', 'b'}", "Post", "CD_Post", "CD_title IN {'a', 'b'}")
        // CloudKit's own keys and token searches are left as they are.
        try expectRewrite(
            "self CONTAINS 'swift' AND creationDate > %@", "Post", "CD_Post",
            "self CONTAINS 'swift' AND creationDate > %@")
    }

    @Test func aSubEntityIsItsRootTypeFilteredByEntityName() throws {
        try expectRewrite(
            "caption == 'x' AND title == 'y'", "ImagePost", "CD_Post",
            "CD_caption == 'x' AND CD_title == 'y' AND CD_entityName == 'ImagePost'")
        try expectRewrite("TRUEPREDICATE", "ImagePost", "CD_Post", "CD_entityName == 'ImagePost'")
        // A root entity includes its sub-entities, as a Core Data fetch does.
        try expectRewrite("TRUEPREDICATE", "Post", "CD_Post", "TRUEPREDICATE")
    }

    @Test func aToOneRelationshipIsComparedWithARecordName() throws {
        try expectRewrite("post == 'p1'", "Attachment", "CD_Attachment", "CD_post == 'p1'")
        #expect(CloudKitMirror.fieldName("fileName", entity: "Attachment", model: model) == "CD_fileName")
        #expect(CloudKitMirror.fieldName("modificationDate", entity: "Attachment", model: model) == "modificationDate")
        #expect(CloudKitMirror.fieldName("nope", entity: "Attachment", model: model) == nil)
    }

    @Test func whatCloudKitCannotAnswerIsAnErrorWithItsPlace() throws {
        func error(_ text: String, _ entity: String) -> MirroredQueryError? {
            do {
                _ = try rewrite(text, entity)
                return nil
            } catch let e as MirroredQueryError {
                return e
            } catch {
                return nil
            }
        }
        // A to-many relationship is tested for membership, with record names.
        let toMany = try #require(error("title == 'a' AND tags == 'x'", "Post"))
        #expect(toMany.message.contains("\"tags\" is a to-many relationship: test it with tags CONTAINS"))
        #expect(toMany.range == SourceRange(22, 24))  // the operator
        #expect(error("tags CONTAINS 5", "Post")?.message.contains("written as a string ('p1')") == true)
        #expect(error("tags CONTAINS 5", "Post")?.range == SourceRange(14, 15))
        #expect(error("ANY tags IN {'a', 2}", "Post")?.range == SourceRange(18, 19))
        #expect(error("ALL 'a' IN tags", "Post")?.message.contains("a collection of strings") == true)
        #expect(error("tags CONTAINS[c] 'x'", "Post") != nil)
        #expect(error("tags.@count > 1", "Post") != nil)
        let unknown = try #require(error("nope == 1", "Post"))
        #expect(unknown.message == "the entity has no attribute or relationship \"nope\"")
        #expect(error("caption == 'x'", "Post") != nil)  // a sub-entity's attribute is not the root's
        #expect(error("post.title == 'x'", "Attachment")?.message.contains("key paths") == true)
        #expect(error("TRUEPREDICATE", "Nope")?.message == "the model has no entity \"Nope\"")
    }

    @Test func aToManyTestIsRecordNameInTheLookupsAnswer() throws {
        // Many-to-many (Post.tags ↔ Tag.posts): CDMR rows, Post first in their values.
        var q = try rewrite("title == 'a' AND tags CONTAINS 't1'", "Post")
        #expect(q.predicate == (try PredicateParser.parse("CD_title == 'a' AND recordName IN $CD_tags_1")))
        var l = try #require(q.lookups.first)
        #expect(l.recordType == "CDMR")
        #expect(
            l.predicate
                == (try PredicateParser.parse("CD_entityNames == 'Post:Tag' AND CD_relationships == 'tags:posts'")))
        #expect(l.source == .manyToMany(own: 0))
        #expect(l.relatedNames == ["t1"] && l.quantifier == .any)
        // From the Tag side the known post comes first, so its rows share a prefix.
        q = try rewrite("posts CONTAINS 'p1'", "Tag")
        l = try #require(q.lookups.first)
        #expect(
            l.predicate
                == (try PredicateParser.parse(
                    "CD_entityNames == 'Post:Tag' AND CD_relationships == 'tags:posts' AND CD_recordNames BEGINSWITH 'p1:'"
                )))
        #expect(l.source == .manyToMany(own: 1))
        // Every spelling of membership; ALL needs every name.
        for text in ["'t1' IN tags", "ANY tags == 't1'", "ANY 't1' == tags"] {
            #expect(try rewrite(text, "Post").lookups.map(\.relatedNames) == [["t1"]], "\(text)")
        }
        q = try rewrite("ALL {'t1', 't2'} IN tags AND NOT (ANY tags IN {'t3'})", "ImagePost")
        #expect(
            q.predicate
                == (try PredicateParser.parse(
                    "recordName IN $CD_tags_1 AND NOT (recordName IN $CD_tags_2) AND CD_entityName == 'ImagePost'")))
        #expect(q.lookups.map(\.quantifier) == [.all, .any])
        // One-to-many (Post.attachments ↔ Attachment.post): the attachments' CD_post.
        q = try rewrite("attachments CONTAINS 'a1'", "Post")
        l = try #require(q.lookups.first)
        #expect(l.recordType == "CD_Attachment")
        #expect(l.predicate == (try PredicateParser.parse("recordName IN {'a1'}")))
        #expect(l.source == .inverseToOne(field: "CD_post"))
        #expect(l.description.hasPrefix("$CD_attachments_1 = Post records whose attachments include 'a1': "))
    }

    @Test func aToManyTestTakesItsNamesFromAVariable() throws {
        let ref = FieldValue.reference(Reference(recordID: RecordID(recordName: "t2")))
        let vars: [String: PredicateArgument] = [
            "t": .value("t1"), "r": .value(ref), "ts": .value(.list(["t1", ref])), "n": .value(5),
        ]
        func lookups(_ text: String) throws -> [[String]] {
            try CloudKitMirror.rewrite(PredicateParser.parse(text), entity: "Post", model: model, variables: vars)
                .lookups.map(\.relatedNames)
        }
        #expect(try lookups("tags CONTAINS $t") == [["t1"]])
        #expect(try lookups("$r IN tags AND title == $t") == [["t2"]])
        #expect(try lookups("ANY tags IN $ts") == [["t1", "t2"]])
        #expect(throws: MirroredQueryError.self) { try lookups("tags CONTAINS $n") }
        #expect(throws: MirroredQueryError.self) { try lookups("tags CONTAINS $nope") }
        #expect(throws: MirroredQueryError.self) { try lookups("ANY tags IN $t") }
        #expect(throws: MirroredQueryError.self) { try lookups("tags CONTAINS %@") }
        // A variable outside a to-many test is left to the checker.
        let q = try CloudKitMirror.rewrite(
            PredicateParser.parse("title == $t"), entity: "Post", model: model, variables: vars)
        #expect(q.predicate == (try PredicateParser.parse("CD_title == $t")))
    }

    @Test func aLookupReadsItsRowsAndRefusesMalformedOnes() throws {
        let l = try #require(try rewrite("ALL {'t1', 't2'} IN tags", "Post").lookups.first)
        let zone = ZoneID(zoneName: "Z")
        func cdmr(_ n: String, _ names: FieldValue?) -> Record {
            Record(
                recordType: "CDMR", recordID: RecordID(recordName: n, zoneID: zone),
                fields: names.map { ["CD_recordNames": $0] } ?? [:])
        }
        let rows = [cdmr("1", "p1:t1"), cdmr("2", "p1:t2"), cdmr("3", "p2:t1"), cdmr("4", "p3:t9")]
        #expect(try l.recordIDs(from: rows) == [RecordID(recordName: "p1", zoneID: zone)])
        var any = l
        any.quantifier = .any
        #expect(try any.recordIDs(from: rows).map(\.recordName) == ["p1", "p2"])
        #expect(throws: MirroredQueryError.self) { try l.recordIDs(from: [cdmr("5", "p1")]) }
        #expect(throws: MirroredQueryError.self) { try l.recordIDs(from: [cdmr("6", "p1:t1:x")]) }
        #expect(throws: MirroredQueryError.self) { try l.recordIDs(from: [cdmr("7", nil)]) }
    }
}

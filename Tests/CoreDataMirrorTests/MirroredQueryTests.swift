// Predicates written against Core Data entities, rewritten onto the mirrored records: keys become
// CD_ fields, a sub-entity adds CD_entityName, a to-one relationship is a record name, and what
// CloudKit cannot answer (to-many, key paths, unknown keys) is an error that says where.

import Foundation
import PredicateSyntax
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
        let toMany = try #require(error("title == 'a' AND tags CONTAINS 'x'", "Post"))
        #expect(toMany.message.contains("\"tags\" is a to-many relationship"))
        #expect(toMany.range == SourceRange(17, 21))
        let unknown = try #require(error("nope == 1", "Post"))
        #expect(unknown.message == "the entity has no attribute or relationship \"nope\"")
        #expect(error("caption == 'x'", "Post") != nil)  // a sub-entity's attribute is not the root's
        #expect(error("post.title == 'x'", "Attachment")?.message.contains("key paths") == true)
        #expect(error("TRUEPREDICATE", "Nope")?.message == "the model has no entity \"Nope\"")
    }
}

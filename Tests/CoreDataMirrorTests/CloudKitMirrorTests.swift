// Core Data → CloudKit mirroring: the model reader (versions, lines, malformed XML), the schema
// mapping against a schema derived by hand from the rules in docs/coredata.md, the round trip
// through CloudKit's schema language, and every validation rule with its line.

import Foundation
import RecordModel
import Testing

@testable import CoreDataMirror

private let models = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Models").path

@Suite struct CloudKitMirrorTests {
    @Test func theCurrentVersionOfAnXcdatamodeldIsRead() throws {
        let m = try CoreDataModel.read(path: models + "/Blog.xcdatamodeld")
        #expect(m.path.hasSuffix("Blog 2.xcdatamodel/contents"))
        #expect(m.entities.map(\.name) == ["Attachment", "ImageData", "ImagePost", "Post", "Tag"])
        let post = try #require(m.entity("Post"))
        #expect(post.line == 17)
        #expect(post.attributes.first { $0.name == "version" }?.defaultValue == "1")
        #expect(m.root(of: "ImagePost") == "Post")
        #expect(m.family(of: "Post").map(\.name) == ["Post", "ImagePost"])
    }

    @Test func theMirroredSchemaIsTheOneTheRulesGive() throws {
        let m = try CoreDataModel.read(path: models + "/Blog.xcdatamodeld")
        #expect(CloudKitMirror.problems(in: m).isEmpty)
        let schema = CloudKitMirror.schema(for: m)
        let s = FieldType.string
        let asset = FieldType.asset
        // Derived by hand from docs/coredata.md: roots only, CD_ names, CD_entityName everywhere,
        // _ckAsset beside String/Binary/Transformable, to-one relationships as STRING, the
        // one-to-many's to-many side and transient attributes not stored, CDMR for Post.tags ↔ Tag.posts.
        let expected: [String: [String: FieldType]] = [
            "CD_Attachment": [
                "CD_entityName": s, "CD_fileName": s, "CD_fileName_ckAsset": asset, "CD_size": .int64,
                "CD_imageData": s, "CD_post": s,
            ],
            "CD_ImageData": ["CD_entityName": s, "CD_data": .bytes, "CD_data_ckAsset": asset, "CD_attachment": s],
            "CD_Post": [
                "CD_entityName": s, "CD_archived": .int64, "CD_body": s, "CD_body_ckAsset": asset, "CD_id": s,
                "CD_link": s, "CD_price": s, "CD_published": .date, "CD_rating": .double, "CD_settings": .bytes,
                "CD_settings_ckAsset": asset, "CD_title": s, "CD_title_ckAsset": asset, "CD_version": .int64,
                "CD_caption": s, "CD_caption_ckAsset": asset, "CD_width": .double,
            ],
            "CD_Tag": ["CD_entityName": s, "CD_name": s, "CD_name_ckAsset": asset],
            "CDMR": ["CD_entityNames": s, "CD_recordNames": s, "CD_relationships": s],
        ]
        let got = schema.recordTypes.mapValues { t in t.fields.mapValues(\.type) }
        #expect(got == expected)
        // Development options, as CloudKit gives new fields: strings queryable, sortable, searchable.
        #expect(schema.recordTypes["CD_Post"]?.fields["CD_title"]?.options == .automatic(for: .string))
    }

    @Test func theSchemaRoundTripsThroughCloudKitsSchemaLanguage() throws {
        let m = try CoreDataModel.read(path: models + "/Blog.xcdatamodeld")
        let schema = CloudKitMirror.schema(for: m)
        let text = schema.schemaLanguage
        #expect(text.contains("RECORD TYPE CD_Post ("))
        let back = try Schema(schemaLanguage: text, environment: .development)
        #expect(back == schema)
    }

    /// The exact text `cirrus coredata schema --dry-run` prints for Blog (Models/Blog.golden-schema,
    /// reviewed against the hand-derived types above and the development index options).
    @Test func theSchemaTextIsTheGoldenOne() throws {
        let m = try CoreDataModel.read(path: models + "/Blog.xcdatamodeld")
        let golden = try String(contentsOfFile: models + "/Blog.golden-schema", encoding: .utf8)
        #expect(CloudKitMirror.schema(for: m).schemaLanguage == golden)
    }

    @Test func everyRuleIsReportedWithItsLineAllAtOnce() throws {
        let m = try CoreDataModel.read(path: models + "/Invalid.xcdatamodel")
        let problems = CloudKitMirror.problems(in: m)
        let got = Set(problems.map { "\($0.line) \($0.entity).\($0.member ?? "") \($0.rule.rawValue)" })
        let expected: Set<String> = [
            "3 Author.handle uniqueConstraint",
            "4 Author.email nonOptionalAttributeWithoutDefault",
            "6 Author.legacy unsupportedAttributeType",
            "7 Author.ref unsupportedAttributeType",
            "9 Author.books orderedRelationship",
            "9 Author.books denyDeleteRule",
            "10 Author.agent nonOptionalRelationship",
            "10 Author.agent missingInverse",
            "10 Author.agent crossConfigurationRelationship",
            "22 Agent.client crossConfigurationRelationship",
        ]
        #expect(got == expected)
        #expect(problems.count == expected.count)
        // A transient attribute is not stored: being non-optional without a default is fine.
        #expect(!problems.contains { $0.member == "cache" })
        let inverse = try #require(problems.first { $0.rule == .missingInverse })
        #expect(inverse.message == "CloudKit integration requires that all relationships have an inverse.")
        #expect(
            inverse.description
                == "line 10: Author.agent: CloudKit integration requires that all relationships have an inverse.")
    }

    @Test func badModelFilesAreErrorsThatSayWhere() throws {
        #expect(throws: CoreDataModelError.self) { try CoreDataModel.read(path: models + "/Nope.xcdatamodeld") }
        do {
            _ = try CoreDataModel.read(path: models + "/Malformed.xcdatamodel")
            Issue.record("malformed XML was accepted")
        } catch {
            #expect(error.description.contains("Malformed.xcdatamodel:"))
            #expect(error.description.contains("not well-formed XML"))
        }
        do {
            _ = try CoreDataModel.parse(Data("<plist/>".utf8), path: "x")
            Issue.record("a file without <model> was accepted")
        } catch {
            #expect(error.message.contains("no <model> element"))
        }
    }

    @Test func aModelWithSeveralVersionsAndNoCurrentVersionIsRefused() throws {
        let dir = NSTemporaryDirectory() + "cirrus-coredata-\(UInt32.random(in: 0...UInt32.max)).xcdatamodeld"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for v in ["A.xcdatamodel", "B.xcdatamodel"] {
            try FileManager.default.createDirectory(atPath: dir + "/" + v, withIntermediateDirectories: true)
            try Data("<model/>".utf8).write(to: URL(fileURLWithPath: dir + "/" + v + "/contents"))
        }
        do {
            _ = try CoreDataModel.read(path: dir)
            Issue.record("two versions without .xccurrentversion were accepted")
        } catch {
            #expect(error.message.contains("2 versions and no .xccurrentversion"))
        }
        try FileManager.default.removeItem(atPath: dir + "/B.xcdatamodel")
        #expect(try CoreDataModel.read(path: dir).entities.isEmpty)
    }
}

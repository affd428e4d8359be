// Reading mirrored records back as Core Data objects: values by attribute name, the entity from
// CD_entityName, inherited attributes, and the fallback from CD_x to the CD_x_ckAsset companion
// for values mirroring moved into an asset.

import Foundation
import RecordModel
import Testing

@testable import CoreDataMirror

private let models = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Models").path

@Suite struct MirroredObjectTests {
    let model: CoreDataModel
    init() throws { model = try CoreDataModel.read(path: models + "/Blog.xcdatamodeld") }

    /// Asset contents by hash, and the hashes asked for.
    final class Assets: @unchecked Sendable {
        var content: [String: [UInt8]] = [:]
        var asked: [String] = []
        func load(_ a: Asset) throws -> [UInt8] {
            asked.append(a.contentHash)
            guard let c = content[a.contentHash] else { throw MirroredQueryError(message: "no asset", range: .none) }
            return c
        }
    }

    @Test func valuesComeFromTheFieldOrElseFromTheAssetCompanion() async throws {
        let assets = Assets()
        let longBody = String(repeating: "A long body. ", count: 100)
        assets.content["b0d7"] = Array(longBody.utf8)
        assets.content["da7a"] = [0xFF, 0xD8, 0xFF]
        let post = Record(
            recordType: "CD_Post", recordID: RecordID(recordName: "p1"),
            fields: [
                "CD_entityName": "ImagePost", "CD_title": "Short", "CD_version": 2, "CD_caption": "c",
                "CD_body_ckAsset": .asset(Asset(contentHash: "b0d7", size: Int64(longBody.utf8.count))),
                // Both present: the field wins, the asset is not read.
                "CD_settings": .bytes([1]), "CD_settings_ckAsset": .asset(Asset(contentHash: "5e77", size: 9)),
            ])
        let o = try await CloudKitMirror.read(post, model: model) { try assets.load($0) }
        #expect(o.entity == "ImagePost")
        #expect(o.values["title"] == .field("Short"))
        #expect(
            o.values["body"] == .asset(Asset(contentHash: "b0d7", size: Int64(longBody.utf8.count)), .string(longBody)))
        #expect(o.values["settings"]?.value == .bytes([1]))
        #expect(o.values["caption"]?.value == "c")
        #expect(o.values["link"] == nil)
        #expect(assets.asked == ["b0d7"])
        // Inherited attributes first, then the sub-entity's; transient ones are not members.
        #expect(o.members.first == "archived" && o.members.suffix(2) == ["caption", "width"])
        #expect(!o.members.contains("searchText") && !o.members.contains("tags"))

        let image = Record(
            recordType: "CD_ImageData", recordID: RecordID(recordName: "i1"),
            fields: ["CD_data_ckAsset": .asset(Asset(contentHash: "da7a", size: 3)), "CD_attachment": "a1"])
        let i = try await CloudKitMirror.read(image, model: model) { try assets.load($0) }
        #expect(i.entity == "ImageData")  // no CD_entityName: the root entity
        #expect(i.values["data"]?.value == .bytes([0xFF, 0xD8, 0xFF]))
        #expect(i.values["attachment"] == .field("a1"))
    }

    @Test func recordsThatAreNotTheModelsAreErrors() async throws {
        func fails(_ r: Record, _ content: [UInt8] = []) async -> String? {
            do {
                _ = try await CloudKitMirror.read(r, model: model) { _ in content }
                return nil
            } catch {
                return "\(error)"
            }
        }
        #expect(await fails(Record(recordType: "Note", recordID: RecordID(recordName: "n"))) != nil)
        #expect(await fails(Record(recordType: "CD_Nope", recordID: RecordID(recordName: "n"))) != nil)
        let wrongEntity = Record(
            recordType: "CD_Post", recordID: RecordID(recordName: "p"), fields: ["CD_entityName": "Tag"])
        #expect(await fails(wrongEntity)?.contains("is not an entity stored in CD_Post") == true)
        let badText = Record(
            recordType: "CD_Post", recordID: RecordID(recordName: "p"),
            fields: ["CD_title_ckAsset": .asset(Asset(contentHash: "ff", size: 2))])
        #expect(await fails(badText, [0xC3, 0x28])?.contains("is not UTF-8 text") == true)
    }
}

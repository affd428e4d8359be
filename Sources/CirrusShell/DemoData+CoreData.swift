// DemoData+CoreData: the demo's Core Data–mirrored database — a small blog model (Post, Tag,
// Attachment, ImageData) shipped with the demo as `Blog.xcdatamodeld`, and the records
// NSPersistentCloudKitContainer would store for a handful of its objects, in the private
// database of the demo user, zone `com.apple.coredata.cloudkit.zone`, as mirroring does.
//
// The model has each kind of relationship: Attachment.imageData ↔ ImageData.attachment
// (one-to-one: a CD_ field on both sides), Post.attachments ↔ Attachment.post (one-to-many: the
// field on the attachment), Post.tags ↔ Tag.posts (many-to-many: CDMR records), and a large
// binary attribute (ImageData.data) whose big value is stored in its `_ckAsset` companion.

import CoreDataMirror
import RecordModel

extension DemoData {
    /// The zone Core Data's mirroring stores records in.
    public static let coreDataZone = ZoneID(zoneName: "com.apple.coredata.cloudkit.zone")
    /// Where the model is written inside the demo directory.
    public static let blogModelPath = "Blog.xcdatamodeld/Blog.xcdatamodel/contents"

    /// The blog model, as Xcode writes an `.xcdatamodel/contents` file.
    public static let blogModelXML = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" usedWithCloudKit="YES">
            <entity name="Attachment" representedClassName="Attachment" syncable="YES">
                <attribute name="fileName" optional="YES" attributeType="String"/>
                <attribute name="size" attributeType="Integer 64" defaultValueString="0" usesScalarValueType="YES"/>
                <relationship name="imageData" optional="YES" maxCount="1" deletionRule="Cascade" destinationEntity="ImageData" inverseName="attachment" inverseEntity="ImageData"/>
                <relationship name="post" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Post" inverseName="attachments" inverseEntity="Post"/>
            </entity>
            <entity name="ImageData" representedClassName="ImageData" syncable="YES">
                <attribute name="data" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/>
                <relationship name="attachment" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Attachment" inverseName="imageData" inverseEntity="Attachment"/>
            </entity>
            <entity name="Post" representedClassName="Post" syncable="YES">
                <attribute name="body" optional="YES" attributeType="String"/>
                <attribute name="published" optional="YES" attributeType="Date" usesScalarValueType="NO"/>
                <attribute name="title" optional="YES" attributeType="String"/>
                <attribute name="views" attributeType="Integer 64" defaultValueString="0" usesScalarValueType="YES"/>
                <relationship name="attachments" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Attachment" inverseName="post" inverseEntity="Attachment"/>
                <relationship name="tags" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="posts" inverseEntity="Post"/>
            </entity>
            <entity name="Tag" representedClassName="Tag" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
                <relationship name="posts" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Post" inverseName="tags" inverseEntity="Post"/>
            </entity>
        </model>

        """

    /// The blog's posts: record name, title, published (day of 2025-11), views, tags, and whether
    /// the body is long enough to be stored in `CD_body_ckAsset`.
    static let blogPosts: [(name: String, title: String, day: Int, views: Int64, tags: [String], long: Bool)] = [
        ("post-1", "Hello, Cirrus", 2, 120, ["swift", "cloudkit"], false),
        ("post-2", "Mirroring Core Data to CloudKit", 9, 860, ["cloudkit", "coredata"], true),
        ("post-3", "Predicates on Linux", 16, 45, ["swift", "linux"], false),
        ("post-4", "Charts of a million places", 23, 310, ["performance", "swift", "cloudkit"], false),
        ("post-5", "Draft: tokens and stop words", 30, 0, [], false),
    ]
    static let blogTags = ["cloudkit", "coredata", "linux", "performance", "swift"]
    /// Attachments: record name, file name, post, image (nil: none), whether the image is large.
    static let blogAttachments: [(name: String, file: String, post: String?, image: String?, large: Bool)] = [
        ("att-1", "diagram.pgm", "post-1", "img-1", false),
        ("att-2", "photo.pgm", "post-2", "img-2", true),
        ("att-3", "notes.txt", "post-2", nil, false),
        ("att-4", "chart.pgm", "post-4", "img-3", false),
        ("att-5", "orphan.txt", nil, nil, false),
    ]

    /// A deterministic grey image: a 512×512 PGM (262 KB) when `large`, else 16×16.
    public static func blogImage(_ id: String, large: Bool) -> [UInt8] {
        guard large else { return imageBytes(id) }
        var r = DemoRandom(seed: 0x1A46_E000)
        return Array("P5 512 512 255\n".utf8) + (0..<(512 * 512)).map { _ in UInt8(truncatingIfNeeded: r.next()) }
    }

    /// The long body of a post, stored in its `_ckAsset` companion.
    static func longBody(_ title: String) -> String {
        let paragraph =
            "NSPersistentCloudKitContainer mirrors every object into a CKRecord whose fields carry the CD_ "
            + "prefix; a value too large for the record moves into the _ckAsset companion field. "
        return title + "\n\n" + String(repeating: paragraph, count: 60)
    }

    /// The mirrored records of the blog in `coreDataZone`; `asset` stores bytes as an asset.
    public static func blogRecords(asset: ([UInt8]) async throws -> Asset) async throws -> [Record] {
        func id(_ n: String) -> RecordID { RecordID(recordName: n, zoneID: coreDataZone) }
        let prefix = CloudKitMirror.prefix
        var out: [Record] = []
        for p in blogPosts {
            var f: RecordFields = [
                CloudKitMirror.entityNameField: "Post", prefix + "title": .string(p.title),
                prefix + "views": .int64(p.views),
                prefix + "published": .date(
                    Timestamp(millisecondsSince1970: 1_761_955_200_000 + Int64(p.day - 1) * 86_400_000)),
            ]
            if p.long {
                f[prefix + "body" + CloudKitMirror.assetSuffix] = .asset(try await asset(Array(longBody(p.title).utf8)))
            } else {
                f[prefix + "body"] = .string("A short post: \(p.title.lowercased()).")
            }
            out.append(Record(recordType: "CD_Post", recordID: id(p.name), fields: f))
            for t in p.tags {
                // Post before Tag (alphabetical): the post's record name comes first.
                out.append(
                    Record(
                        recordType: CloudKitMirror.manyToManyRecordType, recordID: id("cdmr-\(p.name)-tag-\(t)"),
                        fields: [
                            CloudKitMirror.entityNamesField: "Post:Tag",
                            CloudKitMirror.recordNamesField: .string("\(p.name):tag-\(t)"),
                            CloudKitMirror.relationshipsField: "tags:posts",
                        ]))
            }
        }
        for t in blogTags {
            out.append(
                Record(
                    recordType: "CD_Tag", recordID: id("tag-\(t)"),
                    fields: [CloudKitMirror.entityNameField: "Tag", prefix + "name": .string(t)]))
        }
        for a in blogAttachments {
            var f: RecordFields = [
                CloudKitMirror.entityNameField: "Attachment", prefix + "fileName": .string(a.file),
            ]
            if let p = a.post { f[prefix + "post"] = .string(p) }
            if let image = a.image {
                f[prefix + "imageData"] = .string(image)
                let bytes = blogImage(image, large: a.large)
                f[prefix + "size"] = .int64(Int64(bytes.count))
                var g: RecordFields = [
                    CloudKitMirror.entityNameField: "ImageData", prefix + "attachment": .string(a.name),
                ]
                if a.large {
                    g[prefix + "data" + CloudKitMirror.assetSuffix] = .asset(try await asset(bytes))
                } else {
                    g[prefix + "data"] = .bytes(bytes)
                }
                out.append(Record(recordType: "CD_ImageData", recordID: id(image), fields: g))
            } else {
                f[prefix + "size"] = .int64(Int64(a.file.utf8.count * 100))
            }
            out.append(Record(recordType: "CD_Attachment", recordID: id(a.name), fields: f))
        }
        return out
    }
}

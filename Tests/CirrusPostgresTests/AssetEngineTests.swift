// Assets on both engines: stored by a signed-in user, read back through a record that holds
// them, refused to other users and anonymous callers, content-addressed (the same bytes give the
// same asset). On PostgreSQL also the sweep: an asset no record refers to goes once it is older
// than the retention, a referenced one stays until its record is deleted.

import Cirrus
import CirrusPostgres
import CirrusTestSupport
import Crypto
import RecordModel
import Testing

@Suite(.serialized) struct AssetEngineTests {
    @Test(arguments: Engine.available)
    func assetsAreReadThroughTheRecordsThatHoldThem(_ engine: Engine) async throws {
        let f = try await EngineFixture(engine)
        let db = try await f.database(.private(owner: "_alice"), as: .user("_alice"))
        let bytes = (0..<5000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let asset = try await db.storeAsset(bytes)
        #expect(asset.size == 5000)
        #expect(asset.contentHash == SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined())
        #expect(try await db.storeAsset(bytes) == asset, "the same bytes, the same asset")
        let other = try await db.storeAsset([1, 2, 3])
        let id = RecordID(recordName: "photo")
        _ = try await db.save(
            Record(recordType: "Photo", recordID: id, fields: ["image": .asset(asset), "title": "Lyon"]))
        #expect(try await db.assetData(asset, of: id) == bytes)
        // Only through a record that holds it, and only for who may read that record.
        #expect(await code { try await db.assetData(other, of: id) } == .unknownItem)
        #expect(await code { try await db.assetData(asset, of: RecordID(recordName: "nope")) } == .unknownItem)
        let bob = try await f.database(.private(owner: "_alice"), as: .user("_bob"))
        #expect(await code { try await bob.assetData(asset, of: id) } == .permissionFailure)
        #expect(await code { try await bob.storeAsset([9]) } == .permissionFailure)
        let anonymous = try await f.database(.public, as: .anonymous)
        #expect(await code { try await anonymous.storeAsset([9]) } == .notAuthenticated)
        // A record cannot hold an asset that was not stored.
        let never = Asset(contentHash: String(repeating: "ab", count: 32), size: 3)
        #expect(
            await code {
                try await db.save(
                    Record(recordType: "Photo", recordID: RecordID(recordName: "x"), fields: ["image": .asset(never)]))
            } == .invalidArguments)
        // Assets in lists are found too.
        let list = RecordID(recordName: "album")
        _ = try await db.save(
            Record(recordType: "Album", recordID: list, fields: ["images": .list([.asset(other), .asset(asset)])]))
        #expect(try await db.assetData(other, of: list) == [1, 2, 3])
        try await f.close()
    }

    @Test(.enabled(if: PG.available, PG.disabledReason))
    func unreferencedAssetsAreSweptAfterTheRetention() async throws {
        let f = try await EngineFixture(.postgres)
        let db = try await f.database(.private(owner: "_alice"), as: .user("_alice"))
        let kept = try await db.storeAsset([1, 1, 1])
        let loose = try await db.storeAsset([2, 2, 2])
        let id = RecordID(recordName: "doc")
        _ = try await db.save(Record(recordType: "Doc", recordID: id, fields: ["file": .asset(kept)]))
        let containerID = try #require(f.container.postgres?.containerID)
        let store = try await PostgresStore.connect(
            url: PG.url!,
            tenant: PostgresTenant(
                containerID: containerID, environment: .development, database: .private(owner: "_alice")))
        // Within the retention nothing goes; past it, only the asset no record holds.
        #expect(try await store.sweepAssets(force: true) == 0)
        #expect(try await store.sweepAssets(force: true, retention: .zero) == 1)
        #expect(try await store.assetBytes(kept.contentHash) == [1, 1, 1])
        await #expect(throws: CirrusError.self) { try await store.assetBytes(loose.contentHash) }
        #expect(try await db.assetData(kept, of: id) == [1, 1, 1])
        // Once its record is deleted, the other goes too.
        try await db.deleteRecord(withID: id)
        #expect(try await store.sweepAssets(force: true, retention: .zero) == 1)
        await #expect(throws: CirrusError.self) { try await store.assetBytes(kept.contentHash) }
        await store.close()
        try await f.close()
    }
}

// The asset race (issue "One of each, nothing swallowed"): `storeAsset` runs outside the write
// lock, so a removal of unreferenced asset files can run between it and the save that uses the
// asset. The interleaving is played here in order: Bob stores bytes that Alice's only record
// also uses, Alice deletes that record and the removal runs, then Bob saves.

import CirrusTestSupport
import RecordModel
import Testing

@testable import CirrusEmbedded
@testable import CirrusFacade

@Suite struct AssetRaceTests {
    @Test func aRemovalBesideStoreAssetLeavesTheAssetForTheSaveThatUsesIt() async throws {
        let env = TestEnv()
        let c = try env.open()
        let alice = c.privateDatabase(for: "_alice")
        let bob = c.privateDatabase(for: "_bob")
        let bytes = Array("the same photo".utf8)
        let a = try await alice.storeAsset(bytes)
        try await alice.save(rec("photo", "Photo", ["file": .asset(a)]))

        let b = try await bob.storeAsset(bytes)  // same content: the same file
        #expect(b.contentHash == a.contentHash)
        try await alice.deleteRecord(withID: rid("photo"))
        try c.sync()  // removes files no live record refers to (the deletion is durable now)

        try await bob.save(rec("photo", "Photo", ["file": .asset(b)]))
        #expect(try await bob.assetData(b, of: rid("photo")) == bytes)
        try c.close()
        let reopened = try env.open()
        #expect(try await reopened.privateDatabase(for: "_bob").assetData(b, of: rid("photo")) == bytes)
        try reopened.close()
    }

    @Test func anAssetNoRecordUsesIsStillRemoved() async throws {
        let env = TestEnv()
        let c = try env.open()
        let alice = c.privateDatabase(for: "_alice")
        let a = try await alice.storeAsset(Array("kept while in use".utf8))
        try await alice.save(rec("p", "Photo", ["file": .asset(a)]))
        try await alice.deleteRecord(withID: rid("p"))
        try c.sync()
        #expect(!env.fs.exists(c.embedded!.store.assetPath(a.contentHash)))
        try c.close()
    }
}

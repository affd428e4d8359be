// SHA-256 test vectors and content-addressed asset files.

import CirrusIO
import Foundation
import RecordModel
import Testing

@testable import RecordLog

@Suite struct AssetTests {
    @Test func sha256Vectors() {
        #expect(ContentHash.sha256Hex([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            ContentHash.sha256Hex(Array("abc".utf8))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            ContentHash.sha256Hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(
            ContentHash.sha256Hex([UInt8](repeating: 0x61, count: 1_000_000))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func assetsAreStoredByHashAndSurviveACrash() throws {
        let fs = InMemoryFileSystem()
        let s = try openStore(fs)
        let content = Array("hello asset".utf8)
        let a = try s.storeAsset(content)
        #expect(a.size == 11)
        var r = note("withAsset")
        r["file"] = .asset(a)
        try s.save(r)
        fs.crash()
        let again = try openStore(fs)
        let back = try #require(again.record(r.recordID)?.record["file"])
        guard case .asset(let a2) = back else { Issue.record("not an asset"); return }
        #expect(try again.assetData(a2) == content)
        fs.flipBit(again.assetPath(a2.contentHash), atByte: 0)
        #expect(throws: LogError.self) { try again.assetData(a2) }
    }
}

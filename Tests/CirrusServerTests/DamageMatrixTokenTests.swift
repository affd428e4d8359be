// The damage matrix's row for the server's tokens and keys (`DIR/web-services.json`; the other
// rows: Tests/CirrusTests/DamageMatrixTests): truncated, one byte flipped, a zero-filled page →
// `cirrus serve` refuses to start naming the file, and `cirrus repair` (`Credentials.repair`)
// keeps every token and key that still reads; deleted → no credentials (every request refused
// until tokens are created again); an unknown extra file → ignored.

import Cirrus
import CirrusIO
import CirrusServer
import Crypto
import Foundation
import RecordLog
import RecordModel
import Testing

@Suite struct DamageMatrixTokenTests {
    static let file = "/c/" + Credentials.fileName

    /// Twelve API tokens, four web auth tokens and a server key; their digests.
    func populated(_ fs: InMemoryFileSystem) throws -> Credentials {
        try fs.createDirectory("/c")
        for i in 0..<12 {
            _ = try CredentialCommands.createToken(directory: "/c", user: nil, label: "t\(i)", fileSystem: fs)
        }
        for u in ["_a", "_b", "_c", "_d"] {
            _ = try CredentialCommands.createToken(directory: "/c", user: u, fileSystem: fs)
        }
        _ = try CredentialCommands.addKey(
            directory: "/c", pem: P256.Signing.PrivateKey().publicKey.pemRepresentation, user: "_s", fileSystem: fs)
        return try Credentials.load(directory: "/c", fileSystem: fs)
    }

    /// A damaged file: loading fails naming it; repair keeps a subset of what was there, exactly,
    /// says how many entries it lost, keeps the damaged file, and the result loads.
    func checkDamaged(_ damage: (InMemoryFileSystem, [UInt8]) -> Void) throws {
        let fs = InMemoryFileSystem()
        let before = try populated(fs)
        damage(fs, try #require(fs.contents(Self.file)))
        #expect {
            _ = try Credentials.load(directory: "/c", fileSystem: fs)
        } throws: { "\($0)".contains(Self.file) }
        let repaired = try #require(try Credentials.repair(directory: "/c", options: ContainerOptions(fileSystem: fs)))
        #expect(repaired.path == Self.file && fs.exists(repaired.keptIn + "/" + Credentials.fileName))
        let after = try Credentials.load(directory: "/c", fileSystem: fs)
        let kept = after.apiTokens.count + after.webAuthTokens.count + after.serverKeys.count
        let total = before.apiTokens.count + before.webAuthTokens.count + before.serverKeys.count
        #expect(after.apiTokens.allSatisfy { before.apiTokens.contains($0) })
        #expect(after.webAuthTokens.allSatisfy { before.webAuthTokens.contains($0) })
        #expect(after.serverKeys.allSatisfy { before.serverKeys.contains($0) })
        #expect(repaired.kept == kept && kept < total, "\(repaired)")
        // Entries cut off with the damaged text cannot be counted; entries that parsed but do not
        // read as tokens can.
        #expect(repaired.lost.map { kept + $0 == total } ?? true, "\(repaired)")
        #expect(kept > 0, "nothing read back")
    }

    /// The first quote, bracket or colon after the middle (a damaged letter inside a string would
    /// leave valid JSON: the file has no checksum, so that damage cannot be seen).
    func middle(_ b: [UInt8]) -> Int {
        (b.count / 2..<b.count).first { Set("{}[]\":,".utf8).contains(b[$0]) } ?? b.count / 2
    }

    @Test func tokensTruncated() throws {
        try checkDamaged { fs, b in fs.damageTruncate(Self.file, to: b.count * 6 / 10) }
    }

    @Test func tokensFlippedByte() throws {
        try checkDamaged { fs, b in fs.flipBit(Self.file, atByte: middle(b), bit: 1) }
    }

    @Test func tokensZeroPage() throws {
        try checkDamaged { fs, b in
            var z = b
            let start = middle(b) / 4096 * 4096
            for i in start..<min(start + 4096, z.count) where i >= middle(b) { z[i] = 0 }
            fs.overwrite(Self.file, with: z)
        }
    }

    @Test func tokensDeleted() throws {
        let fs = InMemoryFileSystem()
        _ = try populated(fs)
        try fs.remove(Self.file)
        let after = try Credentials.load(directory: "/c", fileSystem: fs)
        #expect(after.apiTokens.isEmpty && after.webAuthTokens.isEmpty && after.serverKeys.isEmpty)
        #expect(try Credentials.repair(directory: "/c", options: ContainerOptions(fileSystem: fs)) == nil)
    }

    @Test func tokensExtraFile() throws {
        let fs = InMemoryFileSystem()
        let before = try populated(fs)
        fs.overwrite("/c/web-services.json.bak", with: Array("junk".utf8))
        #expect(try Credentials.load(directory: "/c", fileSystem: fs) == before)
        #expect(try Credentials.repair(directory: "/c", options: ContainerOptions(fileSystem: fs)) == nil)
    }
}

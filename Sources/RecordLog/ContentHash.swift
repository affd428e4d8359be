// ContentHash: the SHA-256 (swift-crypto) name of an asset file, in lower-case hex.

import CirrusIO
import Crypto

/// Content hashes of asset files.
///
/// ```swift
/// ContentHash.sha256Hex([])   // "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
/// ```
public enum ContentHash {
    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// The SHA-256 of `bytes` as 64 lower-case hex digits.
    public static func sha256Hex(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        for b in SHA256.hash(data: bytes) {
            out.append(hexDigits[Int(b >> 4)])
            out.append(hexDigits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

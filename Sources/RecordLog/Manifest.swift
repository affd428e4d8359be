// Manifest: the `CURRENT` file naming the live segments, and segment file names.
//
//   cirrus-log 1
//   segments 2 3
//   crc 1a2b3c4d        CRC-32C (hex) of the bytes before this line
//
// Replaced only by write-tmp → fsync → rename → fsync(dir) (FileSystem.writeAtomically), so a
// crash leaves the old or the new list, never a mix.

import Foundation

/// The list of live segments.
public struct Manifest: Sendable, Hashable {
    /// File name of the manifest.                                              never change
    public static let fileName = "CURRENT"
    public var segments: [UInt64]

    public init(segments: [UInt64]) { self.segments = segments }

    /// `seg-<16 hex digits>.log`.                                              never change
    public static func segmentFileName(_ n: UInt64) -> String {
        let h = String(n, radix: 16)
        return "seg-" + String(repeating: "0", count: max(0, 16 - h.count)) + h + ".log"
    }

    /// The segment number of a segment file name, or nil.
    public static func segmentNumber(fileName: String) -> UInt64? {
        guard fileName.hasPrefix("seg-"), fileName.hasSuffix(".log"), fileName.utf8.count == 24 else { return nil }
        return UInt64(fileName.dropFirst(4).dropLast(4), radix: 16)
    }

    /// The file's bytes.
    public var encoded: [UInt8] {
        var body = "cirrus-log 1\nsegments"
        for s in segments { body += " \(s)" }
        body += "\n"
        let crc = CRC32C.checksum(Array(body.utf8))
        return Array((body + "crc " + String(crc, radix: 16) + "\n").utf8)
    }

    /// Parses the file; the reason when it is damaged.
    public static func decode(_ bytes: [UInt8]) -> Result<Manifest, CodecError> {
        guard let text = String(validating: bytes, as: UTF8.self) else { return .failure(CodecError("not UTF-8", offset: 0)) }
        guard let crcRange = text.range(of: "crc ") else { return .failure(CodecError("no crc line", offset: 0)) }
        let body = String(text[..<crcRange.lowerBound])
        let crcText = String(text[crcRange.upperBound...].filter { !$0.isWhitespace })
        guard let crc = UInt32(crcText, radix: 16), crc == CRC32C.checksum(Array(body.utf8)) else {
            return .failure(CodecError("checksum mismatch", offset: 0))
        }
        let lines = body.split(separator: "\n")
        guard lines.count == 2, lines[0] == "cirrus-log 1", lines[1].hasPrefix("segments") else {
            return .failure(CodecError("unknown manifest version or layout", offset: 0))
        }
        var segs: [UInt64] = []
        for part in lines[1].split(separator: " ").dropFirst() {
            guard let n = UInt64(part) else { return .failure(CodecError("bad segment number \(part)", offset: 0)) }
            segs.append(n)
        }
        guard !segs.isEmpty, segs == segs.sorted() else { return .failure(CodecError("segment list empty or out of order", offset: 0)) }
        return .success(Manifest(segments: segs))
    }
}

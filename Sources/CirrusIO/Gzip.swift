// Gzip: decompression of gzip (and zlib) streams through the system zlib, for imports.
// Foundation on Linux has no gzip API, hence the CZlib system-library target.

import CZlib

/// A gzip stream that could not be decompressed.
public struct GzipError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What failed, e.g. `truncated stream after 4096 bytes`.
    public var message: String
    /// `gzip: <message>`.
    public var description: String { "gzip: \(message)" }
}

/// gzip helpers.
public enum Gzip {
    /// Whether `bytes` start with the gzip magic (1F 8B).
    public static func isGzip(_ bytes: [UInt8]) -> Bool { bytes.count >= 2 && bytes[0] == 0x1F && bytes[1] == 0x8B }

    /// Decompresses a gzip or zlib stream (concatenated gzip members included).
    public static func decompress(_ input: [UInt8]) throws(GzipError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(input.count * 4)
        var stream = z_stream()
        // 15 window bits + 32: detect gzip or zlib header automatically.
        guard inflateInit2_(&stream, 15 + 32, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw GzipError(message: "inflateInit failed")
        }
        defer { inflateEnd(&stream) }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var status: Int32 = Z_OK
        let failure: GzipError? = input.withUnsafeBytes { (inp: UnsafeRawBufferPointer) -> GzipError? in
            guard let base = inp.baseAddress else { return nil }
            stream.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
            stream.avail_in = uInt(inp.count)
            while true {
                let produced: Int = chunk.withUnsafeMutableBytes { c in
                    stream.next_out = c.baseAddress?.assumingMemoryBound(to: Bytef.self)
                    stream.avail_out = uInt(c.count)
                    status = inflate(&stream, Z_NO_FLUSH)
                    return c.count - Int(stream.avail_out)
                }
                out.append(contentsOf: chunk[0..<produced])
                if status == Z_STREAM_END {
                    if stream.avail_in > 0 {
                        // Another gzip member follows.
                        guard inflateReset(&stream) == Z_OK else { return GzipError(message: "inflateReset failed") }
                        continue
                    }
                    return nil
                }
                if status == Z_BUF_ERROR && stream.avail_in == 0 {
                    return GzipError(message: "truncated stream after \(out.count) bytes")
                }
                guard status == Z_OK || status == Z_BUF_ERROR else {
                    return GzipError(message: "corrupt data (zlib status \(status)) after \(out.count) bytes")
                }
            }
        }
        if let failure { throw failure }
        return out
    }
}

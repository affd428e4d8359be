// CRC-32C check values.

import Testing

@testable import CirrusIO
@testable import RecordLog

@Suite struct CRC32CTests {
    @Test func checkValue() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        #expect(CRC32C.checksum([]) == 0)
        #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
    }

    @Test func incrementalEqualsWhole() {
        let data = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        for split in [0, 1, 7, 8, 9, 500, 999, 1000] {
            let a = data.withUnsafeBytes { b in
                CRC32C.finalize(
                    CRC32C.update(
                        CRC32C.update(CRC32C.start, UnsafeRawBufferPointer(rebasing: b[0..<split])),
                        UnsafeRawBufferPointer(rebasing: b[split...])))
            }
            #expect(a == CRC32C.checksum(data))
        }
    }

    /// The three streams' shift table, built from the images of single bits, is the map it
    /// stands for: every entry is a running value fed the stream's length of zero bytes.
    @Test func shiftTableFeedsZeros() {
        let zeros = [UInt8](repeating: 0, count: CRC32C.streamLength)
        zeros.withUnsafeBytes { z in
            for k in 0..<4 {
                for b in 0..<256 {
                    let fed = CRC32C.tableUpdate(UInt32(b) << (8 * UInt32(k)), z)
                    #expect(CRC32C.shift[256 * k + b] == fed, "entry \(256 * k + b)")
                }
            }
        }
    }

    /// The CPU's instruction and the tables give the same running value for every length and
    /// alignment, and mixed mid-stream.
    @Test func instructionAgreesWithTables() {
        #if arch(x86_64)
            #expect(CRC32C.hardware, "x86-64 machines this project runs on have SSE 4.2")
        #endif
        var g = SystemRandomNumberGenerator()
        let data = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &g) }
        data.withUnsafeBytes { b in
            for start in 0..<9 {
                for count in [0, 1, 3, 7, 8, 9, 15, 16, 17, 63, 64, 65, 383, 384, 385, 500, 767, 768, 1153, 4000] {
                    let piece = UnsafeRawBufferPointer(rebasing: b[start..<start + count])
                    let seed = UInt32.random(in: 0...UInt32.max, using: &g)
                    #expect(CRC32C.update(seed, piece) == CRC32C.tableUpdate(seed, piece))
                    let half = count / 2
                    let mixed = CRC32C.tableUpdate(
                        CRC32C.update(seed, UnsafeRawBufferPointer(rebasing: piece[0..<half])),
                        UnsafeRawBufferPointer(rebasing: piece[half...]))
                    #expect(mixed == CRC32C.tableUpdate(seed, piece))
                }
            }
        }
    }
}

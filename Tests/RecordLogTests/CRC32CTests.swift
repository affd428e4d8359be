// CRC-32C check values.

import CirrusIO
import Testing

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
}

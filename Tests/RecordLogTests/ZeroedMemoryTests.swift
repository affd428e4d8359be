import CirrusIO
import Testing

/// `ZeroedMemory`: every size, below a page (calloc) and above (an anonymous mapping), reads as
/// zeros everywhere, keeps what is written, and blocks do not overlap.
@Suite struct ZeroedMemoryTests {
    @Test(arguments: [0, 1, 8, 4_095, 4_096, 4_097, 131_072, 1_250_000])
    func isZeroedWritableAndItsOwn(byteCount: Int) throws {
        let a = try #require(ZeroedMemory(byteCount: byteCount))
        let b = try #require(ZeroedMemory(byteCount: byteCount))
        #expect(a.byteCount == max(byteCount, 1))
        let bytes = UnsafeMutableRawBufferPointer(start: a.base, count: a.byteCount)
        #expect(bytes.allSatisfy { $0 == 0 })
        // Write at both ends and in the middle: the bytes stay, the other block stays zero.
        let spots = Set([0, a.byteCount / 2, a.byteCount - 1])
        for (k, i) in spots.sorted().enumerated() { bytes[i] = UInt8(k + 1) }
        for (k, i) in spots.sorted().enumerated() { #expect(bytes[i] == UInt8(k + 1)) }
        #expect(bytes.reduce(0) { $0 + Int($1) } == (1...spots.count).reduce(0, +))
        let other = UnsafeRawBufferPointer(start: b.base, count: b.byteCount)
        #expect(other.allSatisfy { $0 == 0 })
        #expect(a.base != b.base)
    }
}

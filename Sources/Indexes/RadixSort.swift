// RadixSort: a stable least-significant-digit radix sort of any elements by an unsigned key,
// for the index builds' and the queries' long sorts (postings rows, the R-tree's STR order).
//
// Invariants: stable (equal keys keep their order — callers rely on it for byte-identical
// sections); a pass runs only for a digit in which some keys differ (the bits every key shares
// are found first), so rows of one region, or coordinates of one hemisphere, take fewer passes.

enum RadixSort {
    /// Sorts `a` by `key` (its low `keyBits` bits), stably, with `digitBits`-bit digits.
    @inline(__always)
    static func sort<E>(_ a: inout [E], keyBits: Int, digitBits: Int, key: (E) -> UInt64) {
        guard a.count > 1 else { return }
        var all: UInt64 = 0
        var any: UInt64 = ~0
        for e in a {
            let k = key(e)
            all |= k
            any &= k
        }
        let differ = all ^ any  // the bits in which some keys differ
        let mask = UInt64(1) << UInt64(digitBits) - 1
        var tmp = a
        var counts = [Int](repeating: 0, count: 1 << digitBits)
        for shift in stride(from: UInt64(0), to: UInt64(keyBits), by: digitBits) where (differ >> shift) & mask != 0 {
            a.withUnsafeMutableBufferPointer { src in
                tmp.withUnsafeMutableBufferPointer { dst in
                    counts.withUnsafeMutableBufferPointer { c in
                        c.update(repeating: 0)
                        for e in src { c[Int((key(e) >> shift) & mask)] &+= 1 }
                        var sum = 0
                        for i in c.indices {
                            let n = c[i]
                            c[i] = sum
                            sum &+= n
                        }
                        for e in src {
                            let d = Int((key(e) >> shift) & mask)
                            dst[c[d]] = e
                            c[d] &+= 1
                        }
                    }
                }
            }
            swap(&a, &tmp)
        }
    }
}

// ZeroedMemory: zero-filled memory whose pages are touched only where it is used — an anonymous
// mmap(2) for a page or more (the kernel hands out zero pages on first touch), calloc below.
//
// Per-process bookkeeping sized by a table — a bit a row, a cache's sets — is allocated at open
// but mostly read and written sparsely. calloc below glibc's mmap threshold (128 KiB, raised at
// run time after large frees) takes heap memory and clears it: a memset of the whole block and a
// page fault per page at open, for bits most processes never set.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Zero-filled memory of a fixed size, released with the object; pages come in when touched.
public final class ZeroedMemory: @unchecked Sendable {
    // @unchecked: the object only owns the block; who writes through `base` synchronizes.
    /// The first byte; valid, and `byteCount` bytes long, for the life of this object.
    public let base: UnsafeMutableRawPointer
    /// The size asked for, in bytes (at least 1).
    public let byteCount: Int
    /// The mapped length, nil for a calloc block.
    private let mappedLength: Int?

    /// `byteCount` zero bytes (at least 1); nil when the memory cannot be had.
    public init?(byteCount: Int) {
        let n = max(byteCount, 1)
        let page = MappedFile.pageSize
        if n >= page {
            let length = (n + page - 1) / page * page
            guard let p = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
                p != MAP_FAILED
            else { return nil }
            base = p
            mappedLength = length
        } else {
            guard let p = calloc(n, 1) else { return nil }
            base = p
            mappedLength = nil
        }
        self.byteCount = n
    }

    deinit {
        if let length = mappedLength { munmap(base, length) } else { free(base) }
    }
}

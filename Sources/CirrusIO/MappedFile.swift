// MappedFile: read-only bytes of a whole file that stay valid while the object lives — an
// mmap(2) of the file on POSIX (pages come in on demand and the kernel may drop clean pages
// under memory pressure, so resident memory follows what queries touch), a private heap copy
// for file systems that cannot map (the in-memory fake).
//
// Data segments are immutable once named by a manifest, so the bytes never change under a
// reader; that is what makes sharing one mapping between threads sound.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Immutable bytes of one file, mapped or copied; unmapped or freed when released.
public final class MappedFile: @unchecked Sendable {
    // @unchecked: the bytes are never written after construction and are released only in
    // deinit, when no reference (and so no reader) is left.
    /// The file's bytes. Valid for the life of this object.
    public let bytes: UnsafeRawBufferPointer
    /// The path it was read from (for error messages).
    public let path: String
    /// Where the bytes came from: an mmap of `mappedLength` bytes, or a heap allocation.
    private let base: UnsafeMutableRawPointer
    private let mappedLength: Int?

    /// A private copy of `data` (file systems that cannot map).
    public init(path: String, copying data: [UInt8]) {
        let p = UnsafeMutableRawPointer.allocate(byteCount: max(data.count, 1), alignment: 16)
        data.withUnsafeBytes { src in
            if let s = src.baseAddress { p.copyMemory(from: s, byteCount: src.count) }
        }
        self.path = path
        base = p
        mappedLength = nil
        bytes = UnsafeRawBufferPointer(start: p, count: data.count)
    }

    private init(path: String, mapped: UnsafeMutableRawPointer, count: Int) {
        self.path = path
        base = mapped
        mappedLength = count
        bytes = UnsafeRawBufferPointer(start: mapped, count: count)
    }

    deinit {
        if let n = mappedLength { munmap(base, n) } else { base.deallocate() }
    }

    /// Takes this mapping's resident pages out of the process (`madvise(MADV_DONTNEED)`): the
    /// bytes stay valid and the same — a later read faults them back in from the page cache — but
    /// a file read through once (the runs a checkpoint merged, the rows an index was just built
    /// from) no longer counts in the resident set while it stays mapped. Nothing for a heap copy.
    /// A hint: readers may use the bytes meanwhile.
    public func releaseResidentPages() {
        guard let n = mappedLength else { return }
        _ = madvise(base, n, MADV_DONTNEED)
    }

    /// ``releaseResidentPages()`` for the whole pages inside `range` (byte offsets into
    /// ``bytes``; a page the range only partly covers is kept): what a long sequential read has
    /// passed, so that reading a file larger than memory never holds it all resident.
    public func releaseResidentPages(_ range: Range<Int>) {
        guard mappedLength != nil, !range.isEmpty else { return }
        let page = Self.pageSize
        let lo = (range.lowerBound + page - 1) / page * page
        let hi = min(range.upperBound, bytes.count) / page * page
        guard lo < hi else { return }
        _ = madvise(base + lo, hi - lo, MADV_DONTNEED)
    }

    /// The system's page size (bytes).
    static let pageSize = max(4096, Int(sysconf(Int32(_SC_PAGESIZE))))

    /// Maps `path` read-only (POSIX). An empty file maps to an empty buffer.
    static func map(path: String) throws -> MappedFile {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw POSIXFileSystem.error("open", path) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw POSIXFileSystem.error("fstat", path) }
        let n = Int(st.st_size)
        if n == 0 { return MappedFile(path: path, copying: []) }
        guard let p = mmap(nil, n, PROT_READ, MAP_SHARED, fd, 0), p != MAP_FAILED else {
            throw POSIXFileSystem.error("mmap", path)
        }
        return MappedFile(path: path, mapped: p, count: n)
    }
}

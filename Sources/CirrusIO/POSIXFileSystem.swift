// POSIXFileSystem: the real file system through Glibc calls (open/write/fsync/rename/…), with
// errno in every error. fsync of a directory is an open(O_RDONLY|O_DIRECTORY) + fsync.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The operating system's file system.
public struct POSIXFileSystem: FileSystem {
    /// The file system of the process.
    public init() {}

    static func error(_ op: String, _ path: String) -> FileSystemError {
        let e = errno
        return FileSystemError(op, path: path, code: e, message: String(cString: strerror(e)))
    }

    /// `mkdir` of each component in turn (mode 755); existing components are fine.
    public func createDirectory(_ path: String) throws {
        var partial = path.hasPrefix("/") ? "" : "."
        for comp in path.split(separator: "/") {
            partial += "/" + comp
            if mkdir(partial, 0o755) != 0 && errno != EEXIST { throw Self.error("mkdir", partial) }
        }
    }

    /// `readdir`, without `.` and `..`, sorted by name.
    public func list(_ directory: String) throws -> [String] {
        guard let d = opendir(directory) else { throw Self.error("opendir", directory) }
        defer { closedir(d) }
        var names: [String] = []
        while let e = readdir(d) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// `access(path, F_OK)`.
    public func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// `mmap` of the whole file, read-only.
    public func map(_ path: String) throws -> MappedFile { try MappedFile.map(path: path) }

    /// `stat`.
    public func size(_ path: String) throws -> Int {
        var st = stat()
        guard stat(path, &st) == 0 else { throw Self.error("stat", path) }
        return Int(st.st_size)
    }

    /// The whole file by `read`, retried on `EINTR`; shorter if the file shrank while being read.
    public func read(_ path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Self.error("open", path) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw Self.error("fstat", path) }
        let n = Int(st.st_size)
        var out = [UInt8](repeating: 0, count: n)
        var done = 0
        try out.withUnsafeMutableBytes { buf in
            guard let base = buf.baseAddress else { return }
            while done < n {
                let r = Glibc.read(fd, base + done, n - done)
                if r < 0 {
                    if errno == EINTR { continue }
                    throw Self.error("read", path)
                }
                if r == 0 { break }
                done += r
            }
        }
        if done < n { out.removeLast(n - done) }
        return out
    }

    /// `open` with `O_APPEND` (and `O_CREAT`, mode 644, when `create`).
    public func openForAppend(_ path: String, create: Bool) throws -> any AppendableFile {
        let flags = O_WRONLY | O_APPEND | O_CLOEXEC | (create ? O_CREAT : 0)
        let fd = open(path, flags, 0o644)
        guard fd >= 0 else { throw Self.error("open", path) }
        return POSIXFile(fd: fd, path: path)
    }

    /// `truncate(2)`.
    public func truncate(_ path: String, to length: Int) throws {
        guard Glibc.truncate(path, off_t(length)) == 0 else { throw Self.error("truncate", path) }
    }

    /// `rename(2)`: atomic replacement of `to`.
    public func rename(_ from: String, to: String) throws {
        guard Glibc.rename(from, to) == 0 else { throw Self.error("rename", from) }
    }

    /// `link(2)`.
    public func link(_ from: String, to: String) throws {
        guard Glibc.link(from, to) == 0 else { throw Self.error("link", to) }
    }

    /// `rmdir(2)`.
    public func removeDirectory(_ path: String) throws {
        guard rmdir(path) == 0 else { throw Self.error("rmdir", path) }
    }

    /// `unlink`.
    public func remove(_ path: String) throws {
        guard unlink(path) == 0 else { throw Self.error("unlink", path) }
    }

    /// `flock(LOCK_EX | LOCK_NB)` on `path`, created if missing; throws at once when another holder has it.
    public func lockFile(_ path: String) throws -> any FileLock {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Self.error("open", path) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let e = Self.error("flock", path)
            close(fd)
            throw FileSystemError(
                "lock", path: path, code: e.code, message: "held by another process or store (\(e.message))")
        }
        return POSIXLock(fd: fd)
    }

    /// `fsync` of the directory opened `O_RDONLY | O_DIRECTORY`.
    public func syncDirectory(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw Self.error("open", path) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw Self.error("fsync", path) }
    }
}

/// A file descriptor open with O_APPEND.
final class POSIXFile: AppendableFile {
    var fd: Int32
    let path: String

    init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    deinit { if fd >= 0 { Glibc.close(fd) } }

    func append(_ bytes: UnsafeRawBufferPointer) throws {
        guard fd >= 0 else { throw FileSystemError("append", path: path, message: "file is closed") }
        guard let base = bytes.baseAddress else { return }
        var done = 0
        while done < bytes.count {
            let r = write(fd, base + done, bytes.count - done)
            if r < 0 {
                if errno == EINTR { continue }
                throw POSIXFileSystem.error("write", path)
            }
            done += r
        }
    }

    func sync() throws {
        guard fd >= 0 else { throw FileSystemError("fsync", path: path, message: "file is closed") }
        guard fdatasync(fd) == 0 else { throw POSIXFileSystem.error("fdatasync", path) }
    }

    func close() throws {
        guard fd >= 0 else { return }
        let r = Glibc.close(fd)
        fd = -1
        if r != 0 { throw POSIXFileSystem.error("close", path) }
    }
}

/// A flock(2) lock; the kernel releases it when the descriptor closes or the process dies.
final class POSIXLock: FileLock {
    var fd: Int32
    init(fd: Int32) { self.fd = fd }
    func unlock() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }
    deinit { unlock() }
}

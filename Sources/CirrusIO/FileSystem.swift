// FileSystem: the seam through which the log touches files, so tests can substitute a fake that
// tears writes, flips bits and "crashes" (InMemoryFileSystem), and the store runs on POSIX
// otherwise (POSIXFileSystem).
//
// The protocol is only what an append-only log needs: whole-file reads, appends, fsync of files
// and directories, truncate, rename, remove, list. Paths are plain strings joined with "/".

/// A failed file-system operation.
public struct FileSystemError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was being done: "open", "append", "fsync", …
    public var operation: String
    /// The file or directory it was done to.
    public var path: String
    /// `errno` when the operation came from the OS, else 0.
    public var code: Int32
    /// What went wrong, e.g. the `strerror` text.
    public var message: String

    /// An error of `operation` on `path`, with `errno` (0 when not from the OS).
    public init(_ operation: String, path: String, code: Int32 = 0, message: String) {
        self.operation = operation
        self.path = path
        self.code = code
        self.message = message
    }

    /// `<operation> <path>: <message>`.
    public var description: String { "\(operation) \(path): \(message)" }
}

/// A file open for appending. Used by one thread at a time (the log's writer).
public protocol AppendableFile: AnyObject {
    /// Appends bytes at the end of the file.
    func append(_ bytes: UnsafeRawBufferPointer) throws
    /// Makes everything appended so far durable (fsync / fdatasync).
    func sync() throws
    /// Closes the file; later calls fail.
    func close() throws
}

extension AppendableFile {
    /// Appends an array.
    public func append(_ bytes: [UInt8]) throws { try bytes.withUnsafeBytes { try append($0) } }
}

/// An exclusive lock on a file, held until `unlock()` or deinit (or the process dies).
public protocol FileLock: AnyObject {
    func unlock()
}

/// The operations the record log performs on files.
public protocol FileSystem: Sendable {
    /// Creates a directory and its parents; no error if it exists.
    func createDirectory(_ path: String) throws
    /// The names (not paths) in a directory.
    func list(_ directory: String) throws -> [String]
    /// Whether a file or directory exists.
    func exists(_ path: String) -> Bool
    /// The size of a file in bytes.
    func size(_ path: String) throws -> Int
    /// The whole content of a file.
    func read(_ path: String) throws -> [UInt8]
    /// Opens a file for appending, creating it (empty) if `create` and it does not exist.
    func openForAppend(_ path: String, create: Bool) throws -> any AppendableFile
    /// Cuts a file to `length` bytes (does not sync).
    func truncate(_ path: String, to length: Int) throws
    /// Atomically replaces `to` with `from` (durable after `syncDirectory`); `from` may be a
    /// directory, moved with everything under it (then `to` must not exist).
    func rename(_ from: String, to: String) throws
    /// Gives the file at `from` a second name `to` (which must not exist), durable after
    /// `syncDirectory` of `to`'s directory: both names then hold the same bytes. Where damaged
    /// files are kept before the names that used them are switched (`cirrus repair`).
    func link(_ from: String, to: String) throws
    /// Removes a file.
    func remove(_ path: String) throws
    /// Removes an empty directory (durable after `syncDirectory` of its parent).
    func removeDirectory(_ path: String) throws
    /// Makes the directory's entries (creations, renames, removals) durable.
    func syncDirectory(_ path: String) throws
    /// Takes an exclusive lock on `path` (created if missing) without waiting; throws if another
    /// holder has it. One writable store per directory.
    func lockFile(_ path: String) throws -> any FileLock
    /// The whole content of an immutable file, mapped where the file system can (POSIX mmap),
    /// else copied. Used for data segments, which are never written after they are named.
    func map(_ path: String) throws -> MappedFile
}

extension FileSystem {
    /// Default: a private copy of the file's bytes.
    public func map(_ path: String) throws -> MappedFile { MappedFile(path: path, copying: try read(path)) }

    /// Writes a whole file durably: write `path.tmp`, fsync, rename over `path`, fsync the directory.
    public func writeAtomically(_ path: String, _ bytes: [UInt8]) throws {
        let tmp = path + ".tmp"
        if exists(tmp) { try remove(tmp) }
        let f = try openForAppend(tmp, create: true)
        do {
            try f.append(bytes)
            try f.sync()
            try f.close()
        } catch {
            try? f.close()  // the append or sync error is the one to report
            throw error
        }
        try rename(tmp, to: path)
        try syncDirectory(parentDirectory(of: path))
    }
}

/// The directory part of a path ("." when there is none).
public func parentDirectory(of path: String) -> String {
    guard let i = path.lastIndex(of: "/") else { return "." }
    return i == path.startIndex ? "/" : String(path[..<i])
}

/// Joins path components with "/".
public func joinPath(_ a: String, _ b: String) -> String { a.hasSuffix("/") ? a + b : a + "/" + b }

extension FileSystem {
    /// Removes `path` and everything under it, deepest first (a missing `path` is no error). Not
    /// atomic: callers make a tree unreachable first (rename it aside) and then remove it.
    public func removeTree(_ path: String) throws {
        guard exists(path) else { return }
        for name in try list(path) {
            let child = joinPath(path, name)
            if (try? remove(child)) == nil { try removeTree(child) }
        }
        try removeDirectory(path)
    }
}

// InMemoryFileSystem: a fake FileSystem for tests that models durability and injects faults.
//
// Each file has its current bytes and its durable bytes (what survives a crash); each directory
// entry is durable only after `syncDirectory` (strict POSIX: a new file's name can vanish in a
// crash until its directory is synced). `crash()` drops everything not durable — optionally
// keeping a random prefix of each file's unsynced appends, which is what a torn write looks
// like on disk. Faults: fail fsync, tear the next append, "power off" after N more mutating
// operations (every later operation fails until `crash()`), and direct damage (truncate, flip
// a bit, zero-fill) that hits current and durable bytes alike.

import Foundation

/// A fault-injecting in-memory file system. Thread-safe.
///
/// ```swift
/// let fs = InMemoryFileSystem()
/// let store = try RecordStore.open(directory: "/db", fileSystem: fs)
/// fs.powerOff(afterOperations: 3)           // three more mutating operations succeed, then all fail
/// _ = try? store.commit([.save(record)])
/// fs.crash()                                // everything not fsynced is gone
/// let reopened = try RecordStore.open(directory: "/db", fileSystem: fs)
/// ```
public final class InMemoryFileSystem: FileSystem, @unchecked Sendable {
    final class Node {
        var data: [UInt8] = []
        var durable: [UInt8] = []
    }

    let lock = NSLock()
    var entries: [String: Node] = [:]
    var durableEntries: [String: Node] = [:]
    var directories: Set<String> = ["/", "."]
    /// Directory renames not yet made durable by a sync of their parent: (from, to).
    var pendingDirectoryRenames: [(from: String, to: String)] = []
    var generation = 0
    var failSyncs = false
    var tearNext: Int?
    var mutationsUntilPowerOff: Int?
    var poweredOff = false
    var locks: [String: Int] = [:]
    var mutations = 0
    /// Pending injected failures: (kind, operations of that kind to let pass first, errno).
    var faults: [(kind: FaultKind, after: Int, code: Int32)] = []
    /// Operations performed so far, by kind.
    var counts: [FaultKind: Int] = [:]
    /// Total bytes the files may hold; appends past it fail with ENOSPC (nil: no limit).
    var capacity: Int?
    /// Mutating operations performed so far (appends, syncs, truncates, renames, removes).
    public var mutationCount: Int { lock.withLock { mutations } }

    /// An empty file system holding only the directories `/` and `.`.
    public init() {}

    // MARK: faults

    /// The kinds of mutating operation a fault can hit.
    public enum FaultKind: Sendable, Hashable, CaseIterable {
        /// Appending bytes to a file.
        case write
        /// fsync of a file or a directory.
        case fsync
        /// Renaming a file or directory.
        case rename
        /// Creating a file.
        case create
    }

    /// The operation of `kind` after the next `after` ones fails with `errno` (28 ENOSPC, 5 EIO,
    /// …) and does nothing — an append writes nothing of its bytes.
    public func fail(_ kind: FaultKind, errno code: Int32, after: Int = 0) {
        lock.withLock { faults.append((kind, after, code)) }
    }

    /// Forgets every pending injected failure.
    public func clearFaults() { lock.withLock { faults = [] } }

    /// How many operations of `kind` were performed (or failed) so far.
    public func count(_ kind: FaultKind) -> Int { lock.withLock { counts[kind] ?? 0 } }

    /// A full disk: the files together may hold at most `bytes` bytes; an append past it writes
    /// what fits and fails with ENOSPC (28). nil: no limit.
    public func setCapacity(_ bytes: Int?) { lock.withLock { capacity = bytes } }

    /// The bytes every file holds together.
    public var usedBytes: Int { lock.withLock { entries.values.reduce(0) { $0 + $1.data.count } } }

    /// `strerror` of the codes tests inject.
    static func message(_ code: Int32) -> String {
        switch code {
        case 28: "No space left on device"
        case 5: "Input/output error"
        case 122: "Disk quota exceeded"
        default: "injected error \(code)"
        }
    }

    /// Counts an operation of `kind` and throws the injected failure due now, if any.
    func fault(_ kind: FaultKind, _ op: String, _ path: String) throws {
        counts[kind, default: 0] += 1
        guard let i = faults.firstIndex(where: { $0.kind == kind }) else { return }
        if faults[i].after > 0 {
            faults[i].after -= 1
            return
        }
        let code = faults.remove(at: i).code
        throw FileSystemError(op, path: path, code: code, message: Self.message(code))
    }

    /// While true, every fsync (file or directory) fails with EIO and makes nothing durable.
    public func setFailSyncs(_ fail: Bool) { lock.withLock { failSyncs = fail } }

    /// The next append writes only its first `bytes` bytes, then fails.
    public func tearNextAppend(keeping bytes: Int) { lock.withLock { tearNext = bytes } }

    /// After `operations` more mutating operations succeed, the "power goes off": that one and
    /// every later operation fail until `crash()`.
    public func powerOff(afterOperations operations: Int) { lock.withLock { mutationsUntilPowerOff = operations } }

    /// Simulates a crash and restart: every file loses what was not synced (keeping a prefix of
    /// its unsynced appends chosen by `keepUnsynced(path, unsyncedCount)`, none by default),
    /// directory entries revert to their durable state, open files become invalid.
    public func crash(keepUnsynced: (String, Int) -> Int = { _, _ in 0 }) {
        lock.withLock {
            for (path, node) in durableEntries {
                if node.data.count > node.durable.count, node.data.starts(with: node.durable) {
                    let extra = node.data.count - node.durable.count
                    let keep = min(max(keepUnsynced(path, extra), 0), extra)
                    node.data = Array(node.data.prefix(node.durable.count + keep))
                } else {
                    node.data = node.durable
                }
                node.durable = node.data
            }
            entries = durableEntries
            // A directory rename not made durable is undone (directories themselves always survive).
            for r in pendingDirectoryRenames.reversed() {
                Self.moveTree(&directories, from: r.to, to: r.from)
            }
            pendingDirectoryRenames = []
            locks = [:]  // the "process" died
            generation += 1
            poweredOff = false
            mutationsUntilPowerOff = nil
            tearNext = nil
            failSyncs = false
        }
    }

    /// Damage: cut a file (current and durable) to `length` bytes.
    public func damageTruncate(_ path: String, to length: Int) {
        lock.withLock {
            guard let n = entries[path] else { return }
            n.data = Array(n.data.prefix(length))
            n.durable = Array(n.durable.prefix(length))
        }
    }

    /// Damage: flip one bit of a file (current and durable).
    public func flipBit(_ path: String, atByte offset: Int, bit: Int = 0) {
        lock.withLock {
            guard let n = entries[path], offset < n.data.count else { return }
            n.data[offset] ^= UInt8(1 << (bit & 7))
            if offset < n.durable.count { n.durable[offset] ^= UInt8(1 << (bit & 7)) }
        }
    }

    /// Damage: overwrite a file with zeros from `offset`, extending it to `length` bytes if longer.
    public func zeroFill(_ path: String, from offset: Int, through length: Int) {
        lock.withLock {
            guard let n = entries[path] else { return }
            let end = max(length, n.data.count)
            n.data = Array(n.data.prefix(offset)) + [UInt8](repeating: 0, count: max(0, end - offset))
            n.durable = n.data
        }
    }

    /// Damage: replace a file's content outright (current and durable).
    public func overwrite(_ path: String, with bytes: [UInt8]) {
        lock.withLock {
            let n = entries[path] ?? Node()
            n.data = bytes
            n.durable = bytes
            entries[path] = n
            durableEntries[path] = n
        }
    }

    /// The current content of a file (nil if absent), for assertions.
    public func contents(_ path: String) -> [UInt8]? { lock.withLock { entries[path]?.data } }

    // MARK: FileSystem

    /// Counts a mutating operation; throws when the power is off.
    func mutate(_ op: String, _ path: String) throws {
        if poweredOff { throw FileSystemError(op, path: path, code: 5, message: "power is off (simulated crash)") }
        if let n = mutationsUntilPowerOff {
            if n <= 0 {
                poweredOff = true
                throw FileSystemError(op, path: path, code: 5, message: "power is off (simulated crash)")
            }
            mutationsUntilPowerOff = n - 1
        }
        mutations += 1
    }

    /// Records the directory and its parents; a directory never needs syncing to survive a crash.
    public func createDirectory(_ path: String) throws {
        lock.withLock {
            var p = ""
            for c in path.split(separator: "/", omittingEmptySubsequences: false) {
                p = p.isEmpty && !path.hasPrefix("/") ? String(c) : (p == "/" ? "/" + c : p + "/" + c)
                if p.isEmpty { p = "/" }
                directories.insert(p)
            }
        }
    }

    /// The names directly under `directory`: files and directories, sorted (the directory need not exist).
    public func list(_ directory: String) throws -> [String] {
        lock.withLock {
            let prefix = directory.hasSuffix("/") ? directory : directory + "/"
            var names = Set<String>()
            for path in entries.keys where path.hasPrefix(prefix) {
                let rest = path.dropFirst(prefix.count)
                names.insert(String(rest.split(separator: "/").first ?? rest))
            }
            for d in directories where d.hasPrefix(prefix) && d.count > prefix.count {
                let rest = d.dropFirst(prefix.count)
                names.insert(String(rest.split(separator: "/").first ?? rest))
            }
            return names.sorted()
        }
    }

    /// Whether a file or a created directory is at `path`.
    public func exists(_ path: String) -> Bool { lock.withLock { entries[path] != nil || directories.contains(path) } }

    /// The current (not necessarily durable) size; ENOENT (2) when missing.
    public func size(_ path: String) throws -> Int {
        try lock.withLock {
            guard let n = entries[path] else {
                throw FileSystemError("stat", path: path, code: 2, message: "no such file")
            }
            return n.data.count
        }
    }

    /// The current bytes; fails while the power is off.
    public func read(_ path: String) throws -> [UInt8] {
        try lock.withLock {
            if poweredOff {
                throw FileSystemError("read", path: path, code: 5, message: "power is off (simulated crash)")
            }
            guard let n = entries[path] else {
                throw FileSystemError("open", path: path, code: 2, message: "no such file")
            }
            return n.data
        }
    }

    /// An append handle; creating the file is a mutating operation, and its name is durable only
    /// after ``syncDirectory(_:)``.
    public func openForAppend(_ path: String, create: Bool) throws -> any AppendableFile {
        try lock.withLock {
            if let n = entries[path] { return MemoryFile(fs: self, node: n, path: path, generation: generation) }
            guard create else { throw FileSystemError("open", path: path, code: 2, message: "no such file") }
            try mutate("create", path)
            try fault(.create, "open", path)
            let n = Node()
            entries[path] = n
            return MemoryFile(fs: self, node: n, path: path, generation: generation)
        }
    }

    /// Cuts the current bytes (not the durable ones) to `length`; a mutating operation.
    public func truncate(_ path: String, to length: Int) throws {
        try lock.withLock {
            try mutate("truncate", path)
            guard let n = entries[path] else {
                throw FileSystemError("truncate", path: path, code: 2, message: "no such file")
            }
            n.data = Array(n.data.prefix(length))
        }
    }

    /// Moves the entry — a file, or a directory with everything under it (`to` must not exist);
    /// durable only after ``syncDirectory(_:)`` of the parent. A mutating operation.
    public func rename(_ from: String, to: String) throws {
        try lock.withLock {
            try mutate("rename", from)
            try fault(.rename, "rename", from)
            if entries[from] == nil, directories.contains(from) {
                let prefix = from + "/"
                guard entries[to] == nil, !directories.contains(to), !to.hasPrefix(prefix) else {
                    throw FileSystemError("rename", path: to, code: 39, message: "destination exists")
                }
                for (p, n) in entries where p.hasPrefix(prefix) {
                    entries[p] = nil
                    entries[to + "/" + p.dropFirst(prefix.count)] = n
                }
                Self.moveTree(&directories, from: from, to: to)
                pendingDirectoryRenames.append((from, to))
                return
            }
            guard let n = entries[from] else {
                throw FileSystemError("rename", path: from, code: 2, message: "no such file")
            }
            entries[from] = nil
            entries[to] = n
        }
    }

    /// A second name for the file at `from`, sharing its bytes; durable only after
    /// ``syncDirectory(_:)`` of its directory. A mutating operation.
    public func link(_ from: String, to: String) throws {
        try lock.withLock {
            try mutate("link", to)
            guard let n = entries[from] else {
                throw FileSystemError("link", path: from, code: 2, message: "no such file")
            }
            guard entries[to] == nil, !directories.contains(to) else {
                throw FileSystemError("link", path: to, code: 17, message: "file exists")
            }
            entries[to] = n
        }
    }

    /// Removes the entry; durable only after ``syncDirectory(_:)``. A mutating operation.
    public func remove(_ path: String) throws {
        try lock.withLock {
            try mutate("remove", path)
            guard entries.removeValue(forKey: path) != nil else {
                throw FileSystemError("unlink", path: path, code: 2, message: "no such file")
            }
        }
    }

    /// Removes an empty directory (no file or directory under it); at once durable, as
    /// directories are in this model. A mutating operation.
    public func removeDirectory(_ path: String) throws {
        try lock.withLock {
            try mutate("rmdir", path)
            guard directories.contains(path) else {
                throw FileSystemError("rmdir", path: path, code: 2, message: "no such directory")
            }
            let prefix = path + "/"
            if entries.keys.contains(where: { $0.hasPrefix(prefix) })
                || directories.contains(where: { $0.hasPrefix(prefix) })
            {
                throw FileSystemError("rmdir", path: path, code: 39, message: "directory not empty")
            }
            directories.remove(path)
        }
    }

    /// `directories` with `from` and every directory under it renamed to `to`.
    static func moveTree(_ directories: inout Set<String>, from: String, to: String) {
        let prefix = from + "/"
        for d in directories where d == from || d.hasPrefix(prefix) {
            directories.remove(d)
            directories.insert(to + d.dropFirst(from.count))
        }
    }

    /// Makes the directory's current entries durable (not nested directories'), and the renames of
    /// directories in it with everything under them; fails with EIO (5) while syncs fail. A
    /// mutating operation.
    public func syncDirectory(_ path: String) throws {
        try lock.withLock {
            try mutate("fsync", path)
            try fault(.fsync, "fsync", path)
            if failSyncs { throw FileSystemError("fsync", path: path, code: 5, message: "injected fsync failure") }
            let trimmed = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
            pendingDirectoryRenames.removeAll { r in
                guard parentDirectory(of: r.from) == trimmed else { return false }
                let prefix = r.from + "/"
                for (p, n) in durableEntries where p.hasPrefix(prefix) {
                    durableEntries[p] = nil
                    durableEntries[r.to + "/" + p.dropFirst(prefix.count)] = n
                }
                return true
            }
            let prefix = path.hasSuffix("/") ? path : path + "/"
            func inDir(_ p: String) -> Bool { p.hasPrefix(prefix) && !p.dropFirst(prefix.count).contains("/") }
            for p in durableEntries.keys where inDir(p) && entries[p] == nil { durableEntries[p] = nil }
            for (p, n) in entries where inDir(p) { durableEntries[p] = n }
        }
    }

    /// Takes the lock at once or fails with EAGAIN (11); a ``crash(keepUnsynced:)`` releases every lock.
    public func lockFile(_ path: String) throws -> any FileLock {
        try lock.withLock {
            if locks[path] != nil {
                throw FileSystemError("lock", path: path, code: 11, message: "held by another store")
            }
            locks[path] = generation
            return MemoryLock(fs: self, path: path, generation: generation)
        }
    }

    fileprivate func unlock(_ path: String, _ gen: Int) {
        lock.withLock { if locks[path] == gen { locks[path] = nil } }
    }

    fileprivate func append(_ node: Node, _ path: String, _ gen: Int, _ bytes: UnsafeRawBufferPointer) throws {
        try lock.withLock {
            guard gen == generation else {
                throw FileSystemError("append", path: path, code: 9, message: "stale file handle")
            }
            try mutate("append", path)
            try fault(.write, "write", path)
            if let capacity {
                let used = entries.values.reduce(0) { $0 + $1.data.count }
                if used + bytes.count > capacity {
                    node.data.append(contentsOf: bytes.prefix(max(0, capacity - used)))
                    throw FileSystemError("write", path: path, code: 28, message: Self.message(28))
                }
            }
            if let keep = tearNext {
                tearNext = nil
                node.data.append(contentsOf: bytes.prefix(keep))
                throw FileSystemError("append", path: path, code: 5, message: "injected torn write")
            }
            node.data.append(contentsOf: bytes)
        }
    }

    fileprivate func sync(_ node: Node, _ path: String, _ gen: Int) throws {
        try lock.withLock {
            guard gen == generation else {
                throw FileSystemError("fsync", path: path, code: 9, message: "stale file handle")
            }
            try mutate("fsync", path)
            try fault(.fsync, "fsync", path)
            if failSyncs { throw FileSystemError("fsync", path: path, code: 5, message: "injected fsync failure") }
            node.durable = node.data
        }
    }
}

/// A handle on an in-memory file.
final class MemoryFile: AppendableFile {
    let fs: InMemoryFileSystem
    let node: InMemoryFileSystem.Node
    let path: String
    let generation: Int
    var closed = false

    init(fs: InMemoryFileSystem, node: InMemoryFileSystem.Node, path: String, generation: Int) {
        self.fs = fs
        self.node = node
        self.path = path
        self.generation = generation
    }

    func append(_ bytes: UnsafeRawBufferPointer) throws {
        if closed { throw FileSystemError("append", path: path, message: "file is closed") }
        try fs.append(node, path, generation, bytes)
    }

    func sync() throws {
        if closed { throw FileSystemError("fsync", path: path, message: "file is closed") }
        try fs.sync(node, path, generation)
    }

    func close() throws { closed = true }
}

/// A lock in the in-memory file system; a crash releases every lock.
final class MemoryLock: FileLock {
    let fs: InMemoryFileSystem
    let path: String
    let generation: Int
    var held = true

    init(fs: InMemoryFileSystem, path: String, generation: Int) {
        self.fs = fs
        self.path = path
        self.generation = generation
    }

    func unlock() {
        if held { fs.unlock(path, generation) }
        held = false
    }

    deinit { unlock() }
}

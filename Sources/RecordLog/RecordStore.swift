// RecordStore: the record log as a store — commit batches through one group-committing writer,
// read the live state as consistent snapshots.
//
// Concurrency: one NSCondition guards the state, the queue of pending batches and the
// "leader" token. A committing thread validates and encodes its batch (in parallel with
// others), queues it, and either waits or — if no write is in progress — becomes the leader:
// it takes every queued batch, assigns sequence numbers, writes them as one append and one
// fsync, applies them to the state under the lock, and wakes the waiters. File handles and
// write buffers are touched only by the token holder (leader, sync, close, compaction).
// Readers take the lock only to copy the state (copy-on-write), so they never see half a batch.
// Open/recovery: RecordStore+Open.swift; compaction: RecordStore+Compaction.swift.

import CirrusIO
import Foundation
import RecordModel

/// A crash-safe store of CloudKit records: an append-only log of record versions, deletions,
/// zone and schema changes (format: docs/log-format.md).
///
/// ```swift
/// let store = try RecordStore.open(directory: "/tmp/db")
/// var r = Record(recordType: "Note", recordID: RecordID(recordName: "n1"))
/// r["title"] = "Groceries"
/// let seq = try store.commit([.save(r)])
/// print(store.record(r.recordID)?.sequence == seq)   // true
/// ```
public final class RecordStore: @unchecked Sendable {
    /// The store's directory.
    public let directory: String
    /// The file system the store reads and writes through.
    public let fileSystem: any FileSystem
    /// The options the store was opened with.
    public let options: RecordStoreOptions
    /// What open found (torn tail, corruption salvaged, files removed).
    public internal(set) var openReport: OpenReport

    final class Batch {
        let entries: [LogEntry]
        let payload: [UInt8]
        let ranges: [Range<Int>]
        let crcs: [UInt32]
        let recordBytes: Int
        var firstSequence: UInt64 = 0
        var result: Result<UInt64, LogError>?

        init(entries: [LogEntry], payload: [UInt8], ranges: [Range<Int>], crcs: [UInt32], recordBytes: Int) {
            self.entries = entries
            self.payload = payload
            self.ranges = ranges
            self.crcs = crcs
            self.recordBytes = recordBytes
        }
    }

    let cond = NSCondition()
    // Guarded by `cond`:
    var state: StoreSnapshot
    var queue: [Batch] = []
    var tokenHeld = false
    var nextSequence: UInt64
    var failure: LogError?
    var closed = false
    var observers: [@Sendable ([CommittedEntry]) -> Void] = []
    var counters = (commits: 0, groups: 0, syncs: 0, recordBytes: 0)
    /// Written by the token holder under `cond`; read by the token holder freely, by others under `cond`.
    var segments: [UInt64]
    /// Data segments the manifest names, and the façade's checkpoint state (guarded by `cond`).
    var dataSegments: Set<UInt64> = []
    /// Data segments a checkpoint under way has written but not yet named, and the highest
    /// number handed out (so two writers never pick the same file).
    var pendingDataSegments: Set<UInt64> = []
    var lastDataSegment: UInt64 = 0
    /// Named data segments found damaged (derived data the open rebuilt): when a checkpoint stops
    /// naming one it is moved into `damaged/`, not removed. Number → what was wrong.
    var damagedDataSegments: [UInt64: String] = [:]
    var userState: [UInt8]?
    /// The manifest's checkpoint lines, carried over when the log rotates.
    var manifestCheckpoint: ManifestCheckpoint?
    /// The directory lock of a writable store (DIR/LOCK), released by close or deinit.
    var directoryLock: (any FileLock)?
    // Owned by the token holder:
    var file: (any AppendableFile)?
    var segmentSize: Int
    var writeBuffer: [UInt8] = []
    var unsyncedBytes = 0
    var lastSyncNanos: UInt64 = 0

    init(
        directory: String, fileSystem: any FileSystem, options: RecordStoreOptions, report: OpenReport,
        state: StoreSnapshot, segments: [UInt64], segmentSize: Int, file: (any AppendableFile)?
    ) {
        self.directory = directory
        self.fileSystem = fileSystem
        self.options = options
        self.openReport = report
        self.state = state
        self.nextSequence = state.lastSequence + 1
        self.segments = segments
        self.segmentSize = segmentSize
        self.file = file
        self.lastSyncNanos = options.clock.monotonicNanoseconds()
    }

    deinit { try? file?.close() }  // nothing to report to; close() reports its errors

    // MARK: reading

    /// A consistent snapshot of the live state: every batch committed before the call, whole.
    public func snapshot() -> StoreSnapshot { cond.withLock { state } }

    /// The live version of a record and the sequence number that wrote it; throws, naming the
    /// file and offset, when its stored bytes do not decode.
    public func record(_ id: RecordID) throws(LogError) -> StoredRecord? {
        let snap = snapshot()
        return try snap.record(id)
    }

    /// Whether `close()` has run.
    public var isClosed: Bool { cond.withLock { closed } }

    /// The highest committed sequence number.
    public var lastSequence: UInt64 { cond.withLock { state.lastSequence } }

    /// Calls `observer` with every committed batch, in commit order, while the store's lock is
    /// held (keep it short; do not call back into the store). The base for change feeds and
    /// incremental index maintenance.
    public func addCommitObserver(_ observer: @escaping @Sendable ([CommittedEntry]) -> Void) {
        cond.withLock { observers.append(observer) }
    }

    /// Counters and sizes.
    public func stats() -> StoreStats {
        // Read counts under the lock rather than copying the state: a copy held across the next
        // commit would make that commit copy-on-write a shard.
        let (records, zones, last, c, segs) = cond.withLock {
            (state.recordCount, state.zones.count, state.lastSequence, counters, segments)
        }
        // Statistics only: a segment whose size cannot be read counts 0 (open and verify report it).
        let bytes = segs.reduce(0) { $0 + ((try? fileSystem.size(segmentPath($1))) ?? 0) }
        return StoreStats(
            segments: segs.count, logBytes: bytes, liveRecords: records, zones: zones,
            lastSequence: last, commits: c.commits, groups: c.groups, syncs: c.syncs,
            recordPayloadBytes: c.recordBytes)
    }

    func segmentPath(_ n: UInt64) -> String { joinPath(directory, Manifest.segmentFileName(n)) }

    // MARK: writing

    /// Saves one record; returns its sequence number.
    @discardableResult
    public func save(_ record: Record) throws(LogError) -> UInt64 { try commit([.save(record)]) }

    /// Commits a batch atomically: after a crash, all of it or none of it is in the store. Returns
    /// the sequence number of its last entry (entry `i` has `result - count + 1 + i`). With
    /// `.everyCommit` durability it returns after the batch is fsynced. `validate` overrides
    /// `options.validateRecords` (an importer that already validated passes false).
    @discardableResult
    public func commit(_ operations: [LogOperation], validate: Bool? = nil) throws(LogError) -> UInt64 {
        if options.readOnly { throw .readOnly }
        if operations.isEmpty { return lastSequence }
        let batch = try prepare(operations, validate: validate ?? options.validateRecords)
        cond.lock()
        if let f = failure {
            cond.unlock()
            throw .failed(reason: "\(f)")
        }
        if closed {
            cond.unlock()
            throw .closed
        }
        queue.append(batch)
        while batch.result == nil && tokenHeld { cond.wait() }
        if let r = batch.result {
            cond.unlock()
            return try r.get()
        }
        if let f = failure {
            // An earlier group failed while this batch waited: fail everything still queued.
            for b in queue { b.result = .failure(.failed(reason: "\(f)")) }
            queue = []
            cond.broadcast()
            cond.unlock()
            throw .failed(reason: "\(f)")
        }
        tokenHeld = true
        let group = queue
        queue = []
        for b in group {
            b.firstSequence = nextSequence
            nextSequence += UInt64(b.entries.count)
        }
        cond.unlock()

        let written = writeGroup(group)

        cond.lock()
        switch written {
        case .success:
            var committed: [CommittedEntry] = []
            for b in group {
                for (i, e) in b.entries.enumerated() {
                    let seq = b.firstSequence + UInt64(i)
                    if case .recordVersion(let r) = e {
                        state.apply(
                            .record(r.recordID, recordType: r.recordType, payload: Array(b.payload[b.ranges[i]])),
                            sequence: seq)
                    } else {
                        state.apply(.other(e), sequence: seq)
                    }
                    if !observers.isEmpty { committed.append(CommittedEntry(sequence: seq, entry: e)) }
                }
                b.result = .success(b.firstSequence + UInt64(b.entries.count) - 1)
                counters.commits += 1
                counters.recordBytes += b.recordBytes
            }
            counters.groups += 1
            for o in observers { o(committed) }
        case .failure(let e):
            if case .failed = e { failure = e }  // the group could not be taken back: poisoned
            for b in group { b.result = .failure(e) }
        }
        tokenHeld = false
        cond.broadcast()
        let r = batch.result ?? .failure(.failed(reason: "batch lost"))
        cond.unlock()
        return try r.get()
    }

    /// Validates and encodes a batch in the caller's thread.
    func prepare(_ operations: [LogOperation], validate: Bool) throws(LogError) -> Batch {
        var w = ByteWriter(capacity: operations.count * 160)
        var ranges: [Range<Int>] = []
        var crcs: [UInt32] = []
        var entries: [LogEntry] = []
        var recordBytes = 0
        ranges.reserveCapacity(operations.count)
        entries.reserveCapacity(operations.count)
        for op in operations {
            if validate {
                do throws(RecordValidationError) {
                    switch op {
                    case .save(let r): try r.validateContent()
                    case .createZone(let z), .deleteZone(let z): try Validation.validateZoneID(z)
                    default: break
                    }
                } catch {
                    throw .invalidRecord(error)
                }
            }
            let e = op.entry
            let start = w.bytes.count
            do {
                try e.encodePayload(into: &w)
            } catch {
                throw .unencodable(reason: error.description)
            }
            let size = w.bytes.count - start
            if case .recordVersion(let r) = e, validate, size > RecordLimits.maximumRecordDataSize {
                throw .invalidRecord(
                    RecordValidationError(
                        .recordTooLarge, recordID: r.recordID,
                        "record data is \(size) bytes encoded; the limit is \(RecordLimits.maximumRecordDataSize) "
                            + "bytes excluding assets"
                    ))
            }
            guard size <= LogFormat.maximumPayload else {
                throw .invalidRecord(
                    RecordValidationError(.recordTooLarge, "an entry of \(size) bytes exceeds the frame limit"))
            }
            if case .recordVersion = e { recordBytes += w.bytes.count - start }
            ranges.append(start..<w.bytes.count)
            entries.append(e)
        }
        w.bytes.withUnsafeBytes { p in
            for r in ranges { crcs.append(CRC32C.update(CRC32C.start, UnsafeRawBufferPointer(rebasing: p[r]))) }
        }
        return Batch(entries: entries, payload: w.bytes, ranges: ranges, crcs: crcs, recordBytes: recordBytes)
    }

    /// Frames and writes a group (token held). A failure whose bytes can be taken back (a full
    /// disk, an I/O error on the append or its fsync, with nothing acknowledged unsynced) truncates
    /// the segment to where the group began and returns the cause: the store goes on. Any other
    /// failure is returned as `.failed` and poisons the store.
    func writeGroup(_ group: [Batch]) -> Result<Void, LogError> {
        var out: [UInt8] = []
        out.reserveCapacity(group.reduce(0) { $0 + $1.payload.count + $1.entries.count * LogFormat.frameHeaderSize })
        for b in group {
            b.payload.withUnsafeBytes { p in
                for (i, r) in b.ranges.enumerated() {
                    var flags: UInt8 = 0
                    if i == 0 { flags |= LogFormat.flagFirst }
                    if i == b.ranges.count - 1 { flags |= LogFormat.flagLast }
                    Frame.append(
                        kind: b.entries[i].kind, sequence: b.firstSequence + UInt64(i), flags: flags,
                        payload: UnsafeRawBufferPointer(rebasing: p[r]), payloadCRC: b.crcs[i], to: &out)
                }
            }
        }
        do {
            if segmentSize >= options.segmentSize { try rotate() }
        } catch let e as IntactFailure {
            return .failure(LogError.wrap(e))
        } catch {
            return .failure(.failed(reason: "\(LogError.wrap(error))"))
        }
        let start = segmentSize
        let unsyncedBefore = unsyncedBytes
        do {
            try appendDurably(out)
            return .success(())
        } catch {
            let cause = LogError.wrap(error)
            return takeBack(to: start, unsyncedBefore: unsyncedBefore)
                ? .failure(cause) : .failure(.failed(reason: "\(cause)"))
        }
    }

    /// After a failed append: cuts the segment back to `start` (where the failed group began) and
    /// fsyncs it, when nothing acknowledged is waiting for an fsync (`.everyCommit`, or
    /// `.batched` with everything before the group synced). True when the store can go on.
    func takeBack(to start: Int, unsyncedBefore: Int) -> Bool {
        segmentSize = start
        switch options.durability {
        case .none: return false  // the buffer holds acknowledged commits
        case .batched where unsyncedBefore > 0: return false
        default: break
        }
        guard let n = segments.last, let file else { return false }
        do {
            try fileSystem.truncate(segmentPath(n), to: start)
            try file.sync()
            unsyncedBytes = 0
            return true
        } catch {
            return false
        }
    }

    /// Appends framed bytes according to the durability (token held).
    func appendDurably(_ bytes: [UInt8]) throws {
        guard let file else { throw LogError.closed }
        segmentSize += bytes.count
        switch options.durability {
        case .none:
            writeBuffer.append(contentsOf: bytes)
            if writeBuffer.count >= 1 << 20 { try flushBuffer() }
        case .everyCommit:
            try file.append(bytes)
            try syncFile()
        case .batched(let ms, let maxBytes):
            try file.append(bytes)
            unsyncedBytes += bytes.count
            let now = options.clock.monotonicNanoseconds()
            if unsyncedBytes >= maxBytes || now &- lastSyncNanos >= UInt64(max(ms, 0)) * 1_000_000 { try syncFile() }
        }
    }

    func flushBuffer() throws {
        guard !writeBuffer.isEmpty, let file else { return }
        try file.append(writeBuffer)
        unsyncedBytes += writeBuffer.count
        writeBuffer.removeAll(keepingCapacity: true)
    }

    func syncFile() throws {
        guard let file else { return }
        try file.sync()
        unsyncedBytes = 0
        lastSyncNanos = options.clock.monotonicNanoseconds()
        cond.withLock { counters.syncs += 1 }
    }

    /// Starts a new segment: seal the current one, create the next, list it in the manifest.
    /// The new segment is created and named before the old one is let go: a failure to create or
    /// name it (a full disk) takes it back and leaves the store writing the old one
    /// (`IntactFailure`).
    func rotate() throws {
        try flushBuffer()
        try syncFile()
        let n = (segments.last ?? 0) + 1
        let newFile: any AppendableFile
        do {
            newFile = try createSegment(n, flags: 0)
        } catch {
            try? fileSystem.remove(segmentPath(n))
            throw IntactFailure(error)
        }
        let (list, cp) = cond.withLock { (segments + [n], manifestCheckpoint) }
        let manifest = Manifest(segments: list, checkpoint: cp).encoded
        let path = joinPath(directory, Manifest.fileName)
        do {
            try fileSystem.writeAtomically(path, manifest)
        } catch {
            // Renamed but perhaps not durable: which manifest a crash keeps is unknown (poison).
            if (try? fileSystem.read(path)) == manifest { throw error }
            try? newFile.close()
            try? fileSystem.remove(segmentPath(n))
            try? fileSystem.remove(path + ".tmp")
            throw IntactFailure(error)
        }
        try? file?.close()  // synced above; a close error adds nothing
        file = newFile
        cond.withLock { segments.append(n) }
        segmentSize = LogFormat.segmentHeaderSize
    }

    /// Creates a segment file with its header, fsynced, its name fsynced in the directory.
    func createSegment(_ n: UInt64, flags: UInt16) throws -> any AppendableFile {
        let path = segmentPath(n)
        if fileSystem.exists(path) { try fileSystem.remove(path) }
        let f = try fileSystem.openForAppend(path, create: true)
        try f.append(
            SegmentHeader(segmentNumber: n, createdMilliseconds: options.clock.wallMilliseconds(), flags: flags).encoded
        )
        try f.sync()
        try fileSystem.syncDirectory(directory)
        return f
    }

    // MARK: token

    /// Waits for and takes the writer token (for sync, close, compaction).
    func acquireToken() {
        cond.lock()
        while tokenHeld { cond.wait() }
        tokenHeld = true
        cond.unlock()
    }

    func releaseToken() {
        cond.lock()
        tokenHeld = false
        cond.broadcast()
        cond.unlock()
    }

    /// Runs `body` holding the writer token, on a store that has not failed (else `.failed`);
    /// an error from `body` marks the store failed, so later writes report it too — unless it is
    /// an `IntactFailure` (the store is as it was).
    func withWriterToken<T>(_ body: () throws -> T) throws(LogError) -> T {
        acquireToken()
        defer { releaseToken() }
        if let f = cond.withLock({ failure }) { throw .failed(reason: "\(f)") }
        do {
            return try body()
        } catch let e as IntactFailure {
            throw LogError.wrap(e)
        } catch {
            let e = LogError.wrap(error)
            cond.withLock { failure = e }
            throw e
        }
    }

    /// Makes every acknowledged commit durable (flushes the buffer of `.none`/`.batched`).
    public func sync() throws(LogError) {
        if options.readOnly { return }
        try withWriterToken {
            try flushBuffer()
            try syncFile()
        }
    }

    /// Syncs and closes the store. Later commits fail with `.closed`.
    public func close() throws(LogError) {
        acquireToken()
        defer { releaseToken() }
        if cond.withLock({ closed }) { return }
        var err: LogError?
        if !options.readOnly, cond.withLock({ failure }) == nil {
            do {
                try flushBuffer()
                try syncFile()
            } catch { err = LogError.wrap(error) }
        }
        try? file?.close()  // flushed and synced above (or `err` says why not); a close error adds nothing
        file = nil
        directoryLock?.unlock()
        directoryLock = nil
        cond.withLock { closed = true }
        if let err { throw err }
    }
}

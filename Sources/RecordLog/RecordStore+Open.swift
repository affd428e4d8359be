// RecordStore+Open: opening a store — manifest, cleanup of unlisted files, replay of every
// segment, torn-tail truncation, corruption handling and repair — and `verify`.
//
// Replay rules are SegmentScanner's (docs/log-format.md, "Reading rules"). A writable open
// truncates a torn tail and fsyncs the truncation before accepting writes; a read-only open
// changes nothing. Repair salvages, then compacts so the damaged bytes are gone.

import CirrusIO
import Foundation
import RecordModel

extension RecordStore {
    /// Opens (or creates) the store in `directory`.
    ///
    /// Throws `.corruption(segment:offset:reason:)` when a frame in the middle of the log is
    /// damaged, unless `options.repair` is set; a torn tail is truncated and reported in
    /// `openReport` instead.
    public static func open(
        directory: String, fileSystem: any FileSystem = POSIXFileSystem(), options: RecordStoreOptions = .init()
    ) throws(LogError) -> RecordStore {
        do {
            let store = try openUnchecked(directory: directory, fs: fileSystem, options: options)
            if options.repair && !options.readOnly && !store.openReport.corruptions.isEmpty {
                _ = try store.compact()
                store.openReport.repaired = true
            }
            return store
        } catch {
            throw LogError.wrap(error)
        }
    }

    /// Reads the store without changing anything and reports what is there and what is damaged.
    /// Throws only when the directory is not a store or cannot be read.
    public static func verify(
        directory: String, fileSystem: any FileSystem = POSIXFileSystem()
    ) throws(LogError) -> VerifyReport {
        let store = try openStore(
            directory: directory, fs: fileSystem, options: RecordStoreOptions(readOnly: true, repair: true), deep: true)
        let snap = store.snapshot()
        return VerifyReport(
            open: store.openReport, liveRecords: snap.recordCount, recordsByType: snap.countsByType,
            recordsByZone: snap.countsByZone, zones: snap.zones.count, lastSequence: snap.lastSequence)
    }

    static func openStore(
        directory: String, fs: any FileSystem, options: RecordStoreOptions, deep: Bool
    ) throws(LogError) -> RecordStore {
        do {
            return try openUnchecked(directory: directory, fs: fs, options: options, deep: deep)
        } catch {
            throw LogError.wrap(error)
        }
    }

    /// Opens in steps: lock the directory, read the manifest (or create a new store), remove
    /// files no manifest names, map the checkpoint's data segments, replay the log segments.
    static func openUnchecked(
        directory: String, fs: any FileSystem, options: RecordStoreOptions, deep: Bool = false
    ) throws -> RecordStore {
        var report = OpenReport()
        let readOnly = options.readOnly
        if readOnly {
            guard fs.exists(directory) else {
                throw LogError.notAStore(directory: directory, reason: "no such directory")
            }
        } else {
            try fs.createDirectory(directory)
        }
        let dirLock = readOnly ? nil : try lockDirectory(directory, fs: fs)
        let names = try fs.list(directory)
        let segFiles = names.compactMap { Manifest.segmentNumber(fileName: $0) }.sorted()
        let manifestPath = joinPath(directory, Manifest.fileName)

        guard
            let manifest = try readManifest(
                directory: directory, fs: fs, options: options, segFiles: segFiles, report: &report)
        else {
            return try createStore(
                directory: directory, fs: fs, options: options, segFiles: segFiles, lock: dirLock, report: report)
        }
        if !readOnly {
            try removeUnlisted(
                manifest, names: names, segFiles: segFiles, directory: directory, fs: fs, report: &report)
        }

        var state = StoreSnapshot()
        let user = try loadCheckpoint(
            manifest, directory: directory, fs: fs, repair: options.repair,
            indexesOnFirstUse: readOnly && options.indexSegmentsOnFirstUse && !deep, into: &state, report: &report)
        if deep { verifySegments(manifest, directory: directory, fs: fs, state: state, report: &report) }
        let (live, lastSize) = try replayLog(
            manifest, directory: directory, fs: fs, options: options, deep: deep, into: &state, report: &report)
        guard let last = live.last else {
            throw LogError.badManifest(path: manifestPath, reason: "no segment could be read")
        }
        let file =
            readOnly ? nil : try fs.openForAppend(joinPath(directory, Manifest.segmentFileName(last)), create: false)
        let store = RecordStore(
            directory: directory, fileSystem: fs, options: options, report: report, state: state, segments: live,
            segmentSize: lastSize, file: file)
        store.directoryLock = dirLock
        store.dataSegments = manifest.dataSegments
        store.manifestCheckpoint = manifest.checkpoint
        store.userState = user
        for w in report.warnings { store.noteDamaged(w) }
        return store
    }

    /// Takes the directory's LOCK (one writable store per directory, across processes). A lock
    /// found held (EAGAIN) is tried again for up to 200 ms before giving up: a child process
    /// spawned by this one between its fork and its exec holds a copy of the descriptor of a
    /// lock just released by a close, for a moment (seen in the test suite, where kill tests
    /// spawn processes while other tests close and reopen containers).
    static func lockDirectory(_ directory: String, fs: any FileSystem) throws -> any FileLock {
        var attempt = 0
        while true {
            do {
                return try fs.lockFile(joinPath(directory, "LOCK"))
            } catch let e as FileSystemError {
                attempt += 1
                if e.code != 11 || attempt >= 20 { throw LogError.locked(directory: directory, reason: e.message) }
                usleep(10_000)
            }
        }
    }

    /// The manifest (`CURRENT`); when repairing, one adopting every segment file if it is damaged
    /// or missing. Nil when there is none and no segment holds a frame: a new store.
    static func readManifest(
        directory: String, fs: any FileSystem, options: RecordStoreOptions, segFiles: [UInt64], report: inout OpenReport
    ) throws -> Manifest? {
        let manifestPath = joinPath(directory, Manifest.fileName)
        if fs.exists(manifestPath) {
            switch Manifest.decode(try fs.read(manifestPath)) {
            case .success(let m): return m
            case .failure(let e):
                guard options.repair, !segFiles.isEmpty else {
                    throw LogError.badManifest(path: manifestPath, reason: e.message)
                }
                report.damage("CURRENT: \(e.message); using every segment file")
                return Manifest(segments: segFiles)
            }
        }
        let withFrames = try segFiles.filter {
            try fs.size(joinPath(directory, Manifest.segmentFileName($0))) > LogFormat.segmentHeaderSize
        }
        if withFrames.isEmpty {
            if options.readOnly {
                throw LogError.notAStore(directory: directory, reason: "no \(Manifest.fileName) file")
            }
            return nil
        }
        guard options.repair else {
            throw LogError.notAStore(
                directory: directory,
                reason: "segment files but no \(Manifest.fileName); `cirrus repair` rebuilds it from them")
        }
        report.damage("no CURRENT; adopting every segment file")
        return Manifest(segments: segFiles)
    }

    /// A new store: nothing was ever acknowledged, so empty segment files are removed and
    /// segment 1 and a manifest naming it are written.
    static func createStore(
        directory: String, fs: any FileSystem, options: RecordStoreOptions, segFiles: [UInt64], lock: (any FileLock)?,
        report: OpenReport
    ) throws -> RecordStore {
        var report = report
        let manifestPath = joinPath(directory, Manifest.fileName)
        for n in segFiles {
            try fs.remove(joinPath(directory, Manifest.segmentFileName(n)))
            report.removedFiles.append(Manifest.segmentFileName(n))
        }
        if fs.exists(manifestPath + ".tmp") { try fs.remove(manifestPath + ".tmp") }
        let store = RecordStore(
            directory: directory, fileSystem: fs, options: options, report: report, state: StoreSnapshot(),
            segments: [1], segmentSize: LogFormat.segmentHeaderSize, file: nil)
        store.directoryLock = lock
        store.file = try store.createSegment(1, flags: 0)
        try fs.writeAtomically(manifestPath, Manifest(segments: [1]).encoded)
        store.openReport.created = true
        return store
    }

    /// Removes log segments and data segments the manifest does not name (left by an
    /// interrupted compaction, checkpoint or bulk load) and a leftover `CURRENT.tmp`.
    static func removeUnlisted(
        _ manifest: Manifest, names: [String], segFiles: [UInt64], directory: String, fs: any FileSystem,
        report: inout OpenReport
    ) throws {
        let manifestPath = joinPath(directory, Manifest.fileName)
        let named = manifest.dataSegments
        var removed = false
        for n in segFiles where !manifest.segments.contains(n) {
            try fs.remove(joinPath(directory, Manifest.segmentFileName(n)))
            report.removedFiles.append(Manifest.segmentFileName(n))
            removed = true
        }
        if fs.exists(manifestPath + ".tmp") {
            try fs.remove(manifestPath + ".tmp")
            removed = true
        }
        for name in names {
            if let n = DataSegmentFormat.number(fileName: name), !named.contains(n) {
                try fs.remove(joinPath(directory, name))
                report.removedFiles.append(name)
                removed = true
            }
        }
        if removed { try fs.syncDirectory(directory) }
    }

    /// Replays every log segment the manifest names into `state`; returns the segments that
    /// exist and the size of the last one (where appends continue).
    static func replayLog(
        _ manifest: Manifest, directory: String, fs: any FileSystem, options: RecordStoreOptions, deep: Bool,
        into state: inout StoreSnapshot, report: inout OpenReport
    ) throws -> (live: [UInt64], lastSize: Int) {
        var lastSize = LogFormat.segmentHeaderSize
        var live: [UInt64] = []
        for (i, n) in manifest.segments.enumerated() {
            let p = joinPath(directory, Manifest.segmentFileName(n))
            let isLast = i == manifest.segments.count - 1
            guard fs.exists(p) else {
                guard options.repair else {
                    throw LogError.badManifest(
                        path: joinPath(directory, Manifest.fileName),
                        reason: "lists missing segment \(Manifest.segmentFileName(n))")
                }
                report.corruptions.append(
                    Corruption(segment: n, offset: 0, length: 0, reason: "segment file missing", framesDropped: 0))
                continue
            }
            live.append(n)
            let bytes = try fs.read(p)
            let minimum = state.lastSequence
            let scan = try bytes.withUnsafeBytes { (b) throws(LogError) in
                try SegmentScanner.scan(
                    b, number: n, isLast: isLast, repair: options.repair, minimumSequence: minimum, deep: deep
                ) { batch in
                    for (seq, e) in batch { state.apply(e, sequence: seq) }
                }
            }
            report.segments.append(
                SegmentReport(
                    number: n, bytes: bytes.count, frames: scan.frames, batches: scan.batches,
                    createdMilliseconds: scan.header?.createdMilliseconds,
                    compacted: (scan.header?.flags ?? 0) & LogFormat.segmentFlagCompacted != 0))
            report.corruptions += scan.corruptions
            lastSize = scan.tornHeader ? LogFormat.segmentHeaderSize : (scan.tornTail?.offset ?? bytes.count)
            try repairTail(scan, path: p, number: n, fs: fs, options: options, report: &report)
        }
        return (live, lastSize)
    }

    /// A writable open truncates a torn tail (and rewrites a torn header) and fsyncs it before
    /// accepting writes; a read-only open only reports it.
    static func repairTail(
        _ scan: SegmentScan, path p: String, number n: UInt64, fs: any FileSystem, options: RecordStoreOptions,
        report: inout OpenReport
    ) throws {
        let readOnly = options.readOnly
        func writeHeader(_ f: any AppendableFile) throws {
            try f.append(SegmentHeader(segmentNumber: n, createdMilliseconds: options.clock.wallMilliseconds()).encoded)
        }
        if var t = scan.tornTail {
            if !readOnly {
                try fs.truncate(p, to: scan.tornHeader ? 0 : t.offset)
                let f = try fs.openForAppend(p, create: false)
                if scan.tornHeader { try writeHeader(f) }
                try f.sync()
                try f.close()
                t.truncated = true
            }
            report.tornTail = t
        } else if scan.tornHeader && !readOnly {
            let f = try fs.openForAppend(p, create: false)
            try writeHeader(f)
            try f.sync()
            try f.close()
        }
    }

    /// Maps the checkpoint's data segments into `state` (base tables, zones, schema, tombstones,
    /// sequences); returns the façade's `user` bytes. A damaged or missing segment fails the open
    /// naming the file and offset — unless repairing, which drops that table (or the state) and
    /// reports it: a table's rows are then lost unless the log still holds them. An index segment
    /// that does not open is a warning (or, `indexesOnFirstUse`, is opened by its first user).
    static func loadCheckpoint(
        _ manifest: Manifest, directory: String, fs: any FileSystem, repair: Bool, indexesOnFirstUse: Bool = false,
        into state: inout StoreSnapshot, report: inout OpenReport
    ) throws(LogError) -> [UInt8]? {
        guard let cp = manifest.checkpoint else { return nil }
        var user: [UInt8]?
        switch loadState(cp.state, directory: directory, fs: fs) {
        case .success(let (st, u)):
            state.zones = st.zones
            state.schema = st.schema
            state.schemaSequence = st.schemaSequence
            state.tombstoneMap = st.tombstones
            user = u
        case .failure(let e):
            try report.salvage(e, "the checkpoint's zones, schema and change history are lost", repair: repair)
        }
        var tables: [BaseTable] = []
        for (key, list) in cp.tables.sorted(by: { $0.key < $1.key }) {
            var layers: [BaseLayer] = []
            var start = 0
            var lost: LogError?
            for files in list {
                let rows = openSegment(files.rows, directory: directory, fs: fs).flatMap { seg in
                    Result { () throws(LogError) in
                        (try RowSection(segment: seg), try BaseLayer.readDead(seg, start: start))
                    }
                }
                guard case .success(let (rows, dead)) = rows else {
                    if case .failure(let e) = rows { lost = e }
                    break
                }
                if let e = rows.hashDamage {
                    report.warn(e, "lookups by id in it binary-search its keys instead")
                }
                if let e = rows.sumsDamage {
                    report.warn(e, "rows returned from it are checked by walking them instead")
                }
                if let e = rows.namesDamage {
                    report.warn(e, "its name table is made from a sample of its rows instead")
                }
                var indexes = IndexSegment(nil)
                if let n = files.indexes {
                    if indexesOnFirstUse {
                        indexes = IndexSegment(openingAtFirstUse: { openSegment(n, directory: directory, fs: fs) })
                    } else {
                        switch openSegment(n, directory: directory, fs: fs) {
                        case .success(let s): indexes = IndexSegment(s)
                        case .failure(let e):
                            // Indexes are derived, never load-bearing: the façade rebuilds them from the rows.
                            report.warn(e, Self.indexesRebuilt(key))
                        }
                    }
                }
                layers.append(BaseLayer(files: files, rows: rows, indexSegment: indexes, start: start, dead: dead))
                start += rows.count
            }
            if let e = lost {
                // Rows are numbered across layers: without one, the later ones cannot be placed.
                try report.salvage(e, "the records of \(key) at the checkpoint are lost", repair: repair)
                continue
            }
            tables.append(BaseTable(key: key, rows: BaseRows(layers: layers)))
        }
        state.setBase(tables, sequence: cp.sequence)
        state.lastSequence = cp.sequence
        state.horizon = cp.horizon
        return user
    }

    /// `verify`: every block of every named data segment against its CRC, and every row decodes.
    static func verifySegments(
        _ manifest: Manifest, directory: String, fs: any FileSystem, state: StoreSnapshot, report: inout OpenReport
    ) {
        for n in manifest.dataSegments.sorted() {
            // A segment that does not open was reported by the open.
            guard case .success(let seg) = openSegment(n, directory: directory, fs: fs) else { continue }
            for (section, offset) in seg.verifyBlocks() {
                report.corruptions.append(
                    Corruption(
                        segment: 0, offset: offset, length: DataSegmentFormat.blockSize,
                        reason: "\(seg.file.path): block at byte \(offset) of section '\(section)' fails its CRC",
                        framesDropped: 0, file: seg.file.path))
            }
        }
        for t in state.base.values {
            for i in 0..<t.rows.count {
                do { _ = try t.rows.record(i) } catch {
                    report.damage("\(error)")
                }
            }
        }
    }

    /// What a table's readers do when its index segment does not open (the open report's words).
    public static func indexesRebuilt(_ key: TableKey) -> String { "the indexes of \(key) are rebuilt from its rows" }

    static func openSegment(_ n: UInt64, directory: String, fs: any FileSystem) -> Result<DataSegment, LogError> {
        let path = joinPath(directory, DataSegmentFormat.fileName(n))
        guard fs.exists(path) else {
            return .failure(.badSegment(path: path, offset: 0, reason: "the manifest names it but the file is missing"))
        }
        return Result { () throws(LogError) in try DataSegment.open(path, fileSystem: fs) }
    }

    static func loadState(
        _ n: UInt64, directory: String, fs: any FileSystem
    ) -> Result<(CheckpointState, [UInt8]?), LogError> {
        openSegment(n, directory: directory, fs: fs).flatMap { seg in
            // The state is small and read whole at open: its blocks are checked then (a damaged
            // byte in a zone name or the schema would otherwise be read as if sound).
            if let bad = seg.verifyBlocks().first {
                return .failure(
                    .badSegment(
                        path: seg.file.path, offset: bad.offset,
                        reason: "the block of section '\(bad.section)' there fails its CRC"))
            }
            guard let b = seg.section("state") else {
                return .failure(.badSegment(path: seg.file.path, offset: 0, reason: "no state section"))
            }
            do throws(CodecError) {
                return .success((try CheckpointState.decode(b), seg.section("user").map { Array($0) }))
            } catch {
                let at = seg.sections.first { $0.name == "state" }?.offset ?? 0
                return .failure(
                    .badSegment(
                        path: seg.file.path, offset: at + error.offset, reason: "state section: \(error.message)"))
            }
        }
    }
}

extension OpenReport {
    /// Records damage outside the log's frames (the manifest, a checkpoint's files), which has
    /// no place in a log segment: only its reason.
    fileprivate mutating func damage(_ reason: String) {
        corruptions.append(Corruption(segment: 0, offset: 0, length: 0, reason: reason, framesDropped: 0))
    }

    /// Records damaged derived data (`error` names the file and offset) and what is done instead.
    mutating func warn(_ error: LogError, _ consequence: String) {
        warnings.append(OpenWarning(error, consequence: consequence))
    }

    /// Under repair, records `error` with what it costs (`loss`) and lets the open go on;
    /// otherwise throws it.
    fileprivate mutating func salvage(_ error: LogError, _ loss: String, repair: Bool) throws(LogError) {
        guard repair else { throw error }
        damage("\(error) — \(loss)")
    }
}

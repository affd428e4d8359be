// RecordTransfer: reading records from Web Services JSON Lines (optionally gzip) or property
// lists, reporting each bad record with its line (or array index) and reason and going on, and
// handing the good ones to a sink in batches — the reader both engines' imports use (the
// container directory's and PostgreSQL's). Format detection: gzip magic → decompress; "bplist",
// "<?xml" or "<plist" → plist; otherwise JSON Lines (blank lines ignored). Writing into a store
// and exporting: RecordLog's RecordImport.swift.

import Foundation
import RecordModel

/// One record that was not imported.
public struct ImportRejection: Sendable, Hashable, CustomStringConvertible {
    /// The file it came from.
    public var file: String
    /// 1-based line (JSON Lines) or array index + 1 (property lists).
    public var line: Int
    /// Why it was rejected.
    public var reason: String
    /// `<file>:<line>: <reason>`.
    public var description: String { "\(file):\(line): \(reason)" }
}

/// Counts and timing of an import.
public struct ImportSummary: Sendable, Hashable {
    /// Records imported.
    public var records = 0
    /// Records rejected.
    public var rejected = 0
    /// Input bytes (after decompression).
    public var bytes = 0
    /// Seconds the import took (monotonic clock).
    public var seconds = 0.0
    /// The first rejections (at most `ImportOptions.maximumReportedRejections`).
    public var rejections: [ImportRejection] = []
    /// Records imported per second; 0 before any time has passed.
    public var recordsPerSecond: Double { seconds > 0 ? Double(records) / seconds : 0 }

    /// An empty summary.
    public init() {}

    /// Adds another file's counts, keeping the first `options.maximumReportedRejections`
    /// rejections of both (this summary's first, then `other`'s).
    ///
    /// ```swift
    /// var total = ImportSummary()
    /// for file in files {
    ///     let summary = try RecordTransfer.importFile(file, into: store, options: options)
    ///     total.add(summary, options: options)
    /// }
    /// ```
    public mutating func add(_ other: ImportSummary, options: ImportOptions = ImportOptions()) {
        records += other.records
        rejected += other.rejected
        bytes += other.bytes
        seconds += other.seconds
        let limit = max(0, options.maximumReportedRejections)
        if rejections.count > limit { rejections.removeLast(rejections.count - limit) }
        rejections += other.rejections.prefix(limit - rejections.count)
    }
}

/// How to import.
public struct ImportOptions: Sendable {
    /// Records per commit.
    public var batchSize = 1000
    /// Stop at the first bad record instead of going on.
    public var stopOnError = false
    /// How many rejections the summary keeps (the rest are only counted).
    public var maximumReportedRejections = 100
    /// Called every `progressInterval` records with the running summary.
    public var progress: (@Sendable (ImportSummary) -> Void)?
    /// Records between two `progress` calls.
    public var progressInterval = 50_000
    /// A bulk load's sort buffer: encoded records held before they are sorted and written as a
    /// run (256 MiB). Smaller uses less memory and writes more runs for the final merge.
    public var sortBudget = 256 << 20
    /// The defaults: commits of 1 000 records, go on after bad records, keep 100 rejections, no progress calls.
    public init() {}
}

/// Import and export of records: reading here, the store's import and export in RecordLog.
///
/// ```swift
/// var options = ImportOptions()
/// options.batchSize = 5_000
/// let summary = try RecordTransfer.importFile("places.jsonl.gz", into: store, options: options)
/// print(summary.records, summary.rejected, summary.rejections.first.map(\.description) ?? "")
/// try RecordTransfer.exportJSONLines(store.snapshot(), type: "Place") { line in print(line, terminator: "") }
/// ```
public enum RecordTransfer {
    /// Streams a file like `importFile`, handing the good records to `sink` in batches of
    /// `options.batchSize`, in input order (see `readRecords(_:name:options:sink:)`).
    public static func readRecords(
        file path: String, options: ImportOptions = .init(),
        sink: ([(line: Int, record: Record)]) throws -> [(line: Int, reason: String)]
    ) throws -> ImportSummary {
        try withoutActuallyEscaping(sink) { sink in try streamRecords(file: path, options: options, sink: sink) }
    }

    static func streamRecords(
        file path: String, options: ImportOptions,
        sink: @escaping ([(line: Int, record: Record)]) throws -> [(line: Int, reason: String)]
    ) throws -> ImportSummary {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw FileSystemError("open", path: path, code: 2, message: "cannot open file")
        }
        defer { try? handle.close() }  // a read handle: closing loses nothing
        let head = [UInt8](handle.readData(ofLength: 64))
        if Gzip.isGzip(head) || isPropertyList(head) {
            return try readAll(try POSIXFileSystem().read(path), name: path, options: options, sink: sink)
        }
        var importer = Importer(name: path, options: options, sink: sink)
        try importJSONLines(&importer, read: Pieces(head, then: handle).next)
        return try importer.finish()
    }

    /// Parses and validates bytes in any supported format and hands the good records to `sink`
    /// in batches of `options.batchSize`, in input order. The sink may reject records of a batch
    /// (by line, with a reason); they are counted and reported like parse errors. Used by the
    /// store import above and by the Cirrus container import (which applies schema and zones).
    public static func readRecords(
        _ input: [UInt8], name: String, options: ImportOptions = .init(),
        sink: ([(line: Int, record: Record)]) throws -> [(line: Int, reason: String)]
    ) throws -> ImportSummary {
        try withoutActuallyEscaping(sink) { sink in try readAll(input, name: name, options: options, sink: sink) }
    }

    static func readAll(
        _ input: [UInt8], name: String, options: ImportOptions,
        sink: @escaping ([(line: Int, record: Record)]) throws -> [(line: Int, reason: String)]
    ) throws -> ImportSummary {
        var bytes = input
        if Gzip.isGzip(bytes) { bytes = try Gzip.decompress(bytes) }
        var importer = Importer(name: name, options: options, sink: sink)
        importer.summary.bytes = bytes.count
        if isPropertyList(bytes) {
            let items: [Result<Record, Rejection>]
            do {
                items = try PropertyListRecords.decode(Data(bytes))
            } catch {
                items = [.failure(Rejection("not a property list array of records: \(error)"))]
            }
            for (i, item) in items.enumerated() where !importer.stop {
                try importer.accept(item.flatMap(validated), line: i + 1)
            }
        } else {
            try importJSONLines(&importer, read: Pieces(bytes).next)
        }
        return try importer.finish()
    }

    /// The state of one import: pending batch, counts, line numbers across pieces.
    struct Importer {
        let name: String
        let options: ImportOptions
        let sink: ([(line: Int, record: Record)]) throws -> [(line: Int, reason: String)]
        let start = DispatchTime.now().uptimeNanoseconds
        var summary = ImportSummary()
        var pending: [(line: Int, record: Record)] = []
        var stop = false
        /// Lines consumed so far (JSON Lines streamed in pieces).
        var line = 0

        init(
            name: String, options: ImportOptions,
            sink: @escaping ([(line: Int, record: Record)]) throws -> [(line: Int, reason: String)]
        ) {
            self.name = name
            self.options = options
            self.sink = sink
            pending.reserveCapacity(options.batchSize)
        }

        mutating func flush() throws {
            guard !pending.isEmpty else { return }
            for (line, reason) in try sink(pending) {
                summary.records -= 1
                reject(line, reason)
            }
            pending.removeAll(keepingCapacity: true)
        }

        mutating func reject(_ line: Int, _ reason: String) {
            summary.rejected += 1
            if summary.rejections.count < options.maximumReportedRejections {
                summary.rejections.append(ImportRejection(file: name, line: line, reason: reason))
            }
            if options.stopOnError { stop = true }
        }

        mutating func accept(_ result: Result<Record, Rejection>, line: Int) throws {
            switch result {
            case .success(let r):
                pending.append((line, r))
                summary.records += 1
                if pending.count >= options.batchSize { try flush() }
                if let p = options.progress, summary.records % options.progressInterval == 0 {
                    summary.seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
                    p(summary)
                }
            case .failure(let reason):
                reject(line, reason.message)
            }
        }

        /// Parses, maps and validates `lines` of `bytes` on every core, in chunks.
        static func parse(
            _ bytes: [UInt8], _ lines: ArraySlice<(line: Int, range: Range<Int>)>
        ) -> [Result<Record, Rejection>] {
            let chunk = 2048
            let first = lines.startIndex
            let n = lines.count
            var results = [Result<Record, Rejection>](repeating: .failure(Rejection("not parsed")), count: n)
            bytes.withUnsafeBufferPointer { buf in
                results.withUnsafeMutableBufferPointer { out in
                    nonisolated(unsafe) let out = out
                    nonisolated(unsafe) let buf = buf
                    DispatchQueue.concurrentPerform(iterations: (n + chunk - 1) / chunk) { c in
                        for k in c * chunk..<min((c + 1) * chunk, n) {
                            let r = lines[first + k].range
                            out[k] = RecordTransfer.parseLine(UnsafeBufferPointer(rebasing: buf[r])).flatMap(
                                RecordTransfer.validated)
                        }
                    }
                }
            }
            return results
        }

        mutating func finish() throws -> ImportSummary {
            try flush()
            summary.seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            return summary
        }
    }

    /// The non-blank lines of `bytes`: 1-based number and byte range (without the newline).
    static func lineRanges(_ bytes: [UInt8], firstLine: Int = 1) -> [(line: Int, range: Range<Int>)] {
        var out: [(line: Int, range: Range<Int>)] = []
        bytes.withUnsafeBufferPointer { buf in
            var start = 0
            var line = firstLine - 1
            while start < buf.count {
                line += 1
                var end = start
                while end < buf.count && buf[end] != 0x0A { end += 1 }
                var blank = true
                for j in start..<end where buf[j] != 0x20 && buf[j] != 0x09 && buf[j] != 0x0D {
                    blank = false
                    break
                }
                if !blank { out.append((line, start..<end)) }
                start = end + 1
            }
        }
        return out
    }

    static func validated(_ r: Record) -> Result<Record, Rejection> {
        do throws(RecordValidationError) {
            try r.validate()
            return .success(r)
        } catch {
            return .failure(Rejection("\(error)"))
        }
    }

    static func parseLine(_ slice: UnsafeBufferPointer<UInt8>) -> Result<Record, Rejection> {
        // The plain shape every exporter writes, without a JSON tree; any other line, and every
        // error, the general way.
        if let r = Record.plainWebServicesJSON(slice) { return .success(r) }
        do throws(JSONError) {
            let json = try JSONValue.parse(bytes: slice)
            do throws(WebServicesJSONError) {
                return .success(try Record(webServicesJSON: json))
            } catch {
                return .failure(Rejection(error.message))
            }
        } catch {
            return .failure(Rejection("JSON: \(error)"))
        }
    }

    static func isPropertyList(_ b: [UInt8]) -> Bool {
        let head = String(decoding: b.prefix(64), as: UTF8.self).drop { $0.isWhitespace }
        return head.hasPrefix("bplist") || head.hasPrefix("<?xml") || head.hasPrefix("<plist")
            || head.hasPrefix("<!DOCTYPE plist")
    }

}

/// Why one input record was rejected.
struct Rejection: Error {
    var message: String
    init(_ m: String) { message = m }
}

// RecordTransfer+Pipeline: JSON Lines parsed ahead of the thread that commits them.
//
// A reader job takes the input in pieces (32 MB of a file, or the whole of an in-memory input),
// cuts them at newlines, parses each window of lines on every core and queues it; the thread
// that commits (the import's sink: planning, encoding, sorting) takes the windows in input order.
// Reading, cutting, counting lines and parsing therefore all overlap the commits, across pieces
// too. At most `depth` parsed windows wait beside the one being committed and the one being
// parsed, which bounds the memory an import holds in parsed records.
//
// Invariants: windows are queued in input order and handed over in that order; line numbers
// run on across pieces exactly as the input's (blank lines counted, not handed over); once the
// consumer cancels, the reader queues nothing more and ends at its next window.

import Foundation
import RecordModel

extension RecordTransfer {
    /// Lines to a window: parsed together, on every core.
    static let windowLines = 16 * 1024

    /// One parsed window: each non-blank line's number and what it parsed to, in input order.
    struct ParsedLines: Sendable {
        var lines: [Int]
        var results: [Result<Record, Rejection>]
    }

    /// Parsed windows on their way from the reader job to the committing thread.
    final class WindowQueue: @unchecked Sendable {  // every field guarded by `cond`
        private let cond = NSCondition()
        private var ready: [ParsedLines] = []
        private var ended = false
        private var cancelled = false
        private var failure: (any Error)?
        private var total = 0
        private let depth: Int

        init(depth: Int) { self.depth = max(1, depth) }

        /// Queues `w`, waiting while `depth` windows wait; false when the consumer cancelled.
        func put(_ w: ParsedLines) -> Bool {
            cond.lock()
            defer { cond.unlock() }
            while ready.count >= depth && !cancelled { cond.wait() }
            guard !cancelled else { return false }
            ready.append(w)
            cond.broadcast()
            return true
        }

        /// The reader is done: `bytes` read in all, and the error that stopped it, if any.
        func finish(bytes: Int, error: (any Error)?) {
            cond.lock()
            defer { cond.unlock() }
            ended = true
            total = bytes
            failure = error
            cond.broadcast()
        }

        /// The next window in input order, waiting for it; nil at the end. Rethrows the reader's
        /// error once the windows before it are taken.
        func next() throws -> ParsedLines? {
            cond.lock()
            defer { cond.unlock() }
            while ready.isEmpty && !ended { cond.wait() }
            guard ready.isEmpty else {
                cond.broadcast()
                return ready.removeFirst()
            }
            if let failure { throw failure }
            return nil
        }

        /// Bytes the reader read (once it is done).
        var bytesRead: Int {
            cond.lock()
            defer { cond.unlock() }
            return total
        }

        /// The consumer stops taking windows: the reader queues nothing more.
        func cancel() {
            cond.lock()
            defer { cond.unlock() }
            cancelled = true
            ready.removeAll()
            cond.broadcast()
        }

        var isCancelled: Bool {
            cond.lock()
            defer { cond.unlock() }
            return cancelled
        }
    }

    /// An input's pieces: the bytes given, then (from a file) 32 MB reads until its end. Only
    /// the reader job calls `next`.
    final class Pieces: @unchecked Sendable {
        private var first: [UInt8]?
        private let file: FileHandle?

        init(_ first: [UInt8], then file: FileHandle? = nil) {
            self.first = first
            self.file = file
        }

        func next() throws -> [UInt8]? {
            if let f = first {
                first = nil
                return f
            }
            guard let data = try file?.read(upToCount: 32 << 20), !data.isEmpty else { return nil }
            return [UInt8](data)
        }
    }

    /// The reader job: cuts the pieces `read` returns (nil: the end) into windows of whole lines,
    /// parses each on every core and queues it, until the end, an error or a cancel.
    static func parseAhead(into queue: WindowQueue, read: () throws -> [UInt8]?) {
        var carry: [UInt8] = []
        var line = 0
        var total = 0
        do {
            while !queue.isCancelled {
                let piece = try read()
                total += piece?.count ?? 0
                let bytes: [UInt8]
                if let piece {
                    // Whole lines only; a partial last line waits for the next piece.
                    if carry.isEmpty { carry = piece } else { carry.append(contentsOf: piece) }
                    guard let cut = carry.lastIndex(of: 0x0A).map({ $0 + 1 }) else { continue }
                    if cut == carry.count {
                        bytes = carry
                        carry = []
                    } else {
                        bytes = Array(carry[..<cut])
                        carry.removeFirst(cut)
                    }
                } else {
                    bytes = carry
                    carry = []
                }
                let lines = lineRanges(bytes, firstLine: line + 1)
                line += bytes.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) } + (bytes.last == 0x0A || bytes.isEmpty ? 0 : 1)
                var i = 0
                while i < lines.count {
                    let end = min(lines.count, i + windowLines)
                    let w = ParsedLines(
                        lines: lines[i..<end].map(\.line), results: Importer.parse(bytes, lines[i..<end]))
                    guard queue.put(w) else { return }
                    i = end
                }
                if piece == nil { break }
            }
            queue.finish(bytes: total, error: nil)
        } catch {
            queue.finish(bytes: total, error: error)
        }
    }

    /// Runs `parseAhead` over `read` on another thread and commits its windows through
    /// `importer` on this one, in order, until the end or the importer stops.
    static func importJSONLines(
        _ importer: inout Importer, read: @escaping @Sendable () throws -> [UInt8]?
    ) throws {
        let queue = WindowQueue(depth: 1)
        let reader = DispatchGroup()
        DispatchQueue.global().async(group: reader) { parseAhead(into: queue, read: read) }
        defer {
            queue.cancel()
            reader.wait()  // the reader is done with `read` (and its file) before this returns
        }
        while !importer.stop, let w = try queue.next() {
            for (k, r) in w.results.enumerated() where !importer.stop { try importer.accept(r, line: w.lines[k]) }
        }
        importer.summary.bytes = queue.bytesRead
    }
}

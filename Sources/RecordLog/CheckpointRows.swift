// CheckpointRows: the rows a checkpoint reads — one layer's rows in row order (or the older
// layers' rows it makes dead) for the section encoders, and the sorted sources a table merge
// reads (a bulk load's runs, the base layers). Pages of mapped rows are released as they are read.

import CirrusIO
import Foundation
import RecordModel

/// The rows of one layer of a table in row order (table rows `start`, `start + 1`, …), or the
/// rows of older layers that a new layer makes dead, decoded one at a time: what a section
/// encoder reads to build a layer's indexes (and its `dead/` sections).
public struct CheckpointRows: Sequence {
    /// The table the rows belong to.
    public let key: TableKey
    enum Source {
        /// A layer's rows section, numbered from the layer's start.
        case layer(RowSection, start: Int)
        /// Table rows `rows` (ascending) of the older layers in `base`.
        case dead(BaseRows, rows: [UInt32])
    }
    let source: Source
    /// The source's rows this sequence reads (all of them unless split by `parts`).
    var range: Range<Int>
    /// The first row that did not decode, seen by any iterator of this sequence (and of the
    /// parts split from it).
    let failure = FirstFailure()

    /// The rows of one layer of a table, numbered from `start`.
    public init(key: TableKey, rows: RowSection, start: Int = 0) {
        self.key = key
        source = .layer(rows, start: start)
        range = 0..<rows.count
    }

    /// The rows split into at most `count` consecutive parts of at least `minimum` rows each (one
    /// part when there are fewer), in order, sharing this sequence's failure: for reading on
    /// several cores at once.
    public func parts(_ count: Int, minimum: Int = 16_384) -> [CheckpointRows] {
        let n = Swift.max(1, Swift.min(count, range.count / Swift.max(1, minimum)))
        return (0..<n).map { k in
            var p = self
            p.range = (range.lowerBound + range.count * k / n)..<(range.lowerBound + range.count * (k + 1) / n)
            return p
        }
    }

    /// The table row of the layer's first row when these are one layer's rows (numbered
    /// consecutively from it); nil for the dead rows of older layers.
    public var layerStart: Int? {
        if case .layer(_, let start) = source { return start }
        return nil
    }

    /// The rows `dead` (table rows, ascending) of a table's base `base`.
    init(key: TableKey, dead: [UInt32], of base: BaseRows) {
        self.key = key
        source = .dead(base, rows: dead)
        range = 0..<dead.count
    }

    /// Holds the decoding failure at the lowest row of any of the (possibly concurrent) iterators.
    final class FirstFailure: @unchecked Sendable {
        private let lock = NSLock()
        private var first: (row: Int, error: any Error)?
        func record(row: Int, _ error: any Error) {
            lock.withLock { if first.map({ row < $0.row }) ?? true { first = (row, error) } }  // the lowest row
        }
        var value: (row: Int, error: any Error)? { lock.withLock { first } }
    }

    /// Number of rows.
    public var count: Int { range.count }

    /// Decodes the rows one at a time; a row that does not decode ends the iteration (and fails the checkpoint).
    public struct Iterator: IteratorProtocol {
        let source: Source
        /// The source row after the last this iterator reads.
        let end: Int
        let failure: FirstFailure
        var i: Int
        /// The next row (table row number) and its record (storage form). The rows were written
        /// from records, so one that does not decode is damage or a codec bug: it ends the
        /// iteration and the checkpoint that reads it fails (`writeIndexSegment`), rather than
        /// index a table with a row missing.
        public mutating func next() -> (Int, Record)? {
            guard i < end else {
                releaseRead()
                return nil
            }
            defer { i += 1 }
            if i &- released >= Self.releaseEvery { releaseRead() }
            do {
                switch source {
                case .layer(let rows, let start): return (start + i, try rows.record(i))
                case .dead(let base, let rows): return (Int(rows[i]), try base.record(Int(rows[i])))
                }
            } catch {
                failure.record(row: i, error)
                i = end
                return nil
            }
        }

        /// The first row whose pages this iterator has not released.
        var released: Int
        /// Rows read between two releases of their pages (a few MB of a layer's section).
        static let releaseEvery = 16_384

        /// Releases the pages of the layer rows read since the last release: a pass over a
        /// large layer (an index build at the end of a bulk load) keeps only what it is reading
        /// resident. The rows of older layers (`dead`) are read scattered and are left alone.
        mutating func releaseRead() {
            if case .layer(let rows, _) = source, released < i {
                rows.releaseResidentPages(rows: released..<Swift.min(i, end))
            }
            released = i
        }
    }

    /// An iterator from the first row.
    public func makeIterator() -> Iterator {
        Iterator(
            source: source, end: range.upperBound, failure: failure, i: range.lowerBound, released: range.lowerBound)
    }
}

/// One sorted source of rows for a table merge.
struct MergeSource {
    enum Kind {
        /// Rows of a section (a bulk load's run).
        case section(RowSection, owner: String)
        /// Rows of a base layer starting at table row `start`, skipping the rows in `dead`.
        case layer(RowSection, owner: String, start: Int, dead: RowBitmap)
        /// Delta versions, read in `order` (their indices sorted by record id: sorting the
        /// indices moves no record).
        case delta([(RecordID, LiveRecord)], order: [Int])
    }
    let kind: Kind
    var i = 0
    let count: Int
    /// The head row's id, or nil when exhausted.
    var head: RecordID?

    init(_ kind: Kind) {
        self.kind = kind
        switch kind {
        case .section(let r, _), .layer(let r, _, _, _): count = r.count
        case .delta(let d, _): count = d.count
        }
        load()
    }

    mutating func load() {
        if case .layer(_, _, let start, let dead) = kind, dead.count > 0 {
            while i < count && dead.contains(start + i) { i += 1 }
        }
        guard i < count else { head = nil; return }
        switch kind {
        case .section(let r, let owner), .layer(let r, let owner, _, _): head = r.recordID(i, owner: owner)
        case .delta(let d, let order): head = d[order[i]].0
        }
    }

    mutating func advance() {
        i += 1
        load()
        if i &- released >= CheckpointRows.Iterator.releaseEvery { releaseRead() }
    }

    /// The first row whose pages have not been released.
    var released = 0

    /// Releases the pages of the rows merged since the last release (`RowSection
    /// .releaseResidentPages(rows:)`): a merge of runs larger than memory holds little of them.
    mutating func releaseRead() {
        switch kind {
        case .section(let r, _), .layer(let r, _, _, _): r.releaseResidentPages(rows: released..<i)
        case .delta: break
        }
        released = i
    }

    var sequence: UInt64 {
        switch kind {
        case .section(let r, _), .layer(let r, _, _, _): r.sequence(i)
        case .delta(let d, let order): d[order[i]].1.sequence
        }
    }

    func withPayload(_ body: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        switch kind {
        case .section(let r, _), .layer(let r, _, _, _): if let p = r.payload(i) { try body(p) }
        case .delta(let d, let order): try d[order[i]].1.payload.withUnsafeBytes(body)
        }
    }
}

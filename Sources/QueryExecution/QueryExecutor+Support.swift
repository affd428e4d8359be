// What both execution shapes use: batches of rows read together, a bounded heap of keyed rows,
// and the rows a stream took.

import Indexes
import QueryPlanner
import RecordModel

/// Rows of an ordered stream gathered before they are taken, so that their records are asked
/// for together (`QuerySnapshot.prefetchRecords`) and their loads overlap. The first batch
/// holds a page and the row after it, which tells the page is complete (one more after a
/// cursor: the row at the cursor comes again); later ones 2 rows, doubling up to `limit` — a
/// row gathered past the page's end is read for nothing. A nearest-first stream's rows come
/// with their squared chords, handed to `take` with them.
struct Batch {
    private var rows: [RowID] = []
    private var chords: [Double] = []
    private var size: Int
    private let limit: Int
    private var later = false

    init(first: Int, limit: Int) {
        size = max(1, first)
        self.limit = max(1, limit)
        rows.reserveCapacity(max(size, self.limit))
    }

    /// Adds `row` (with its squared chord from a nearest scan); true when the batch is full.
    mutating func add(_ row: RowID, chord2: Double? = nil) -> Bool {
        rows.append(row)
        if let chord2 { chords.append(chord2) }
        return rows.count >= size
    }

    /// Asks for the batch's records, then takes its rows in order until `take` stops; returns
    /// nil when every row was taken, else the rows after the one that stopped it. The batch is
    /// emptied and the next one sized.
    mutating func drain<S: QuerySnapshot>(_ snapshot: S, _ take: (RowID, Double?) -> Bool) -> [RowID]? {
        defer {
            rows.removeAll(keepingCapacity: true)
            chords.removeAll(keepingCapacity: true)
            size = later ? min(limit, 2 * size) : 2
            later = true
        }
        if rows.isEmpty { return nil }
        snapshot.prefetchRecords(rows[...])
        let withChords = chords.count == rows.count
        for k in rows.indices where !take(rows[k], withChords ? chords[k] : nil) {
            return Array(rows[(k + 1)...])
        }
        return nil
    }
}

/// Keeps the `capacity` smallest keys seen: a heap whose top is the largest kept key under the
/// query's order, replaced whenever a smaller one arrives. Until `capacity` keys have come, they
/// are only gathered (a page larger than its candidates — most pages of a small result — is
/// sorted once at the end, never sifted); the heap is built, in O(n), when the `capacity`-th
/// key arrives.
///
/// Invariant: a kept key stays in its slot of `keys` (and its row in `rows`) until a smaller key
/// takes that slot; the heap orders slot numbers, so a sift moves 4-byte integers, never keys
/// (whose arrays and record ids would be retained and released at every move).
struct BoundedHeap {
    let capacity: Int
    let ordering: Ordering
    /// The kept keys, by slot.
    var keys: [OrderKey] = []
    /// The kept rows, by slot.
    var rows: [RowID] = []
    /// Slots in heap order, the largest key first, once `capacity` keys came (empty before).
    var heap: [Int32] = []

    init(capacity: Int, ordering: Ordering) {
        self.capacity = capacity
        self.ordering = ordering
        keys.reserveCapacity(min(capacity, 4096))
        rows.reserveCapacity(min(capacity, 4096))
    }

    mutating func insert(_ key: OrderKey, _ row: RowID) {
        guard capacity > 0 else { return }
        guard let top = heap.first.map(Int.init) else {
            keys.append(key)
            rows.append(row)
            if keys.count >= capacity {
                heap = Array(0..<Int32(keys.count))
                for i in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(from: i) }
            }
            return
        }
        guard ordering.less(key, keys[top]) else { return }
        keys[top] = key
        rows[top] = row
        siftDown(from: 0)
    }

    /// −1, 0 or 1: sort values `values` before, level with, or after the largest kept key once
    /// `capacity` keys are kept (a row after it is not kept; ``Ordering/compareValues(_:_:)``);
    /// nil before.
    func compareWithTop(_ values: [FieldValue]) -> Int? {
        guard let top = heap.first else { return nil }
        return ordering.compareValues(values, keys[Int(top)])
    }

    /// Moves the slot at heap position `start` down below every larger key.
    mutating func siftDown(from start: Int) {
        let ordering = self.ordering
        keys.withUnsafeBufferPointer { k in
            heap.withUnsafeMutableBufferPointer { h in
                let n = h.count
                let moving = h[start]
                var i = start
                while true {
                    let l = 2 * i + 1
                    if l >= n { break }
                    var c = l
                    if l + 1 < n, ordering.compare(in: k, Int(h[l]), Int(h[l + 1])) < 0 { c = l + 1 }
                    if ordering.compare(in: k, Int(moving), Int(h[c])) >= 0 { break }
                    h[i] = h[c]
                    i = c
                }
                h[i] = moving
            }
        }
    }

    /// The kept items in the query's order. Their slots are sorted comparing keys in place (no key
    /// copied per comparison). A heap's slots go in from the last: it keeps its largest key first,
    /// so its array is roughly descending — the worst case of the insertion sort the standard
    /// library uses on short arrays — and reversed it is nearly sorted.
    func sorted() -> [(OrderKey, RowID)] {
        var slots = heap.isEmpty ? Array(keys.indices) : heap.reversed().map(Int.init)
        if slots.count <= 64 {
            // An insertion sort in place: the standard library's sort compared through a closure
            // that copied both keys (their values and record ids retained and released) at every
            // comparison — a third of a 21-row page's query.
            let ordering = self.ordering
            keys.withUnsafeBufferPointer { k in
                slots.withUnsafeMutableBufferPointer { s in
                    for i in s.indices.dropFirst() {
                        let x = s[i]
                        var j = i
                        while j > 0, ordering.compare(in: k, x, s[j - 1]) < 0 {
                            s[j] = s[j - 1]
                            j -= 1
                        }
                        s[j] = x
                    }
                }
            }
        } else {
            slots = keys.withUnsafeBufferPointer { k in slots.sorted { ordering.compare(in: k, $0, $1) < 0 } }
        }
        return slots.map { (keys[$0], rows[$0]) }
    }
}

/// Whether two rows share the value a stream is ordered by (the first sort value; for record-id
/// order, nil, every row is its own group). Not a static of the generic `Run`: a call through
/// `Self` looked up `Run<S>`'s metadata for every row.
func sameFirstValue(_ a: FieldValue?, _ b: FieldValue?) -> Bool {
    guard let a, let b else { return false }
    return FieldValue.compare(a, b) == 0
}

/// A row an ordered scan took, with its record. (A struct, not a tuple: the executor is not
/// specialized across modules, and arrays of tuples were copied and destroyed through the
/// runtime's generic tuple witnesses.)
struct Taken {
    /// The row's record, as the page returns it.
    let record: Record
    /// The row.
    let row: RowID
}

/// An ordered stream's state while it scans, shared by the scan's nested functions (see
/// `executeStream`). Used by one scan on one thread, so its accesses are not checked.
final class StreamState {
    /// Rows taken, in order, without their keys.
    @exclusivity(unchecked) var results: [Taken] = []
    /// Rows level on the first sort value, not yet ordered among themselves.
    @exclusivity(unchecked) var group: [Taken] = []
    /// The group's first sort value.
    @exclusivity(unchecked) var groupFirst: FieldValue? = nil
    /// Whether the group's rows came in ascending order.
    @exclusivity(unchecked) var groupAscending = true
    /// Whether ascending rows level on the first sort value are in the query's order (one sort
    /// descriptor, the scanned field; rows in record-id order): such a group needs no sort.
    @exclusivity(unchecked) var idOrderedTies = false
    /// Whether rows level on the first sort value come in record-id order though not in row
    /// order (an ascending scan merging its layers' ties by id): such a group needs no sort
    /// either, and the scan stops at a full page.
    @exclusivity(unchecked) var tiesInIDOrder = false
    /// The row that stopped the scan (read ahead for the next page).
    @exclusivity(unchecked) var dropped: RowID? = nil
    @exclusivity(unchecked) var scanned = 0
    @exclusivity(unchecked) var passedSets = 0
    @exclusivity(unchecked) var passedFilter = 0
    /// The residual filters' values of the current row.
    @exclusivity(unchecked) var values: [FieldValue?] = []
    /// Reads the scanned field's value of a row, when ties are ordered by id from the rows'
    /// keys (`takeByValue`); nil otherwise.
    @exclusivity(unchecked) var tieKeys: (any RowValueReader)? = nil
    /// The current row's value of the scanned field (`tieKeys`).
    @exclusivity(unchecked) var keyValues: [FieldValue?] = []
    /// Rows level on the first sort value taken by value, without their records (`tieKeys`):
    /// the rows of the current group after its first `tiesByValueAfter`.
    @exclusivity(unchecked) var rowGroup: [RowID] = []
    /// How many rows of a tie group are taken with their records before the rest are taken by
    /// value (`takeByValue`).
    static let tiesByValueAfter = 16
    /// Reads a row's sort values from columns (every sort a user field with a column), so that
    /// a row is admitted and placed without reading its record's fields by name (a walk over
    /// the fields before it: a list of alternate names, say); nil otherwise, and for pages of
    /// `sortKeysFromPage` rows or fewer: making the reader costs about a microsecond, and a
    /// small page's records are mostly the record cache's, whose fields are decoded already.
    @exclusivity(unchecked) var sortKeys: (any RowValueReader)? = nil
    /// The largest page whose sort values are read through its records (see `sortKeys`).
    static let sortKeysFromPage = 32
    /// The current row's sort values (`sortKeys`).
    @exclusivity(unchecked) var sortValues: [FieldValue?] = []
    /// The current row's squared chord from a nearest scan's centre, as the scan computed it
    /// (nil: not from a nearest scan, or a read-ahead row): its first key without reading its
    /// record's location.
    @exclusivity(unchecked) var chord2: Double? = nil
}

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
struct BoundedHeap {
    /// A kept row and its key. (A struct, not a tuple: the heap's moves of tuples went through
    /// the runtime's generic tuple witnesses.)
    struct Kept {
        let key: OrderKey
        let row: RowID
    }

    struct Reversed: HeapOrder {
        let ordering: Ordering
        @inline(__always)
        func less(_ a: Kept, _ b: Kept) -> Bool { ordering.less(b.key, a.key) }
    }

    let capacity: Int
    let ordering: Ordering
    /// The keys gathered before `capacity` of them came; emptied when the heap is built.
    var gathered: [Kept] = []
    /// The heap, once `capacity` keys came (nil before).
    var heap: BinaryHeap<Reversed>? = nil

    init(capacity: Int, ordering: Ordering) {
        self.capacity = capacity
        self.ordering = ordering
        gathered.reserveCapacity(min(capacity, 4096))
    }

    mutating func insert(_ key: OrderKey, _ row: RowID) {
        guard capacity > 0 else { return }
        if heap == nil {
            gathered.append(Kept(key: key, row: row))
            if gathered.count >= capacity {
                heap = BinaryHeap(order: Reversed(ordering: ordering), elements: gathered)
                gathered = []
            }
        } else if let top = heap?.top, ordering.less(key, top.key) {
            heap?.replaceTop(Kept(key: key, row: row))
        }
    }

    /// The largest kept key once `capacity` keys are kept (a key after it is not kept); nil before.
    var fullTop: OrderKey? { heap?.top?.key }

    /// The kept items in the query's order. The keys are taken out once and their positions
    /// sorted, comparing keys in place (no key copied per comparison). A heap's positions go in
    /// from the last: it keeps its largest key first, so its array is roughly descending — the
    /// worst case of the insertion sort the standard library uses on short arrays (453
    /// comparisons for 33 keys) — and reversed it is nearly sorted (122).
    func sorted() -> [(OrderKey, RowID)] {
        let items = heap?.unordered ?? gathered
        let keys = items.map(\.key)
        let positions = heap == nil ? Array(items.indices) : Array(items.indices.reversed())
        let order = keys.withUnsafeBufferPointer { k in positions.sorted { ordering.compare(k[$0], k[$1]) < 0 } }
        return order.map { (items[$0].key, items[$0].row) }
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
    /// The current row's squared chord from a nearest scan's centre, as the scan computed it
    /// (nil: not from a nearest scan, or a read-ahead row): its first key without reading its
    /// record's location.
    @exclusivity(unchecked) var chord2: Double? = nil
}

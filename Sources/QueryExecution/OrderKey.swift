// Order keys: a row's place in its query's total order — the values of the sort descriptors,
// then the record id. A cursor position is the order key of the last row returned.
//
// Field sorts use the field's value (records without it are not in a sorted query's results:
// the index a sorted scan reads does not hold them either). A distance sort uses the squared
// chord from the centre on the unit sphere — the very number the spatial index orders by, and
// a monotonic function of great-circle distance — so positions compare exactly.

import Indexes
import RecordModel

/// A row's position in a query's order.
public struct OrderKey: Sendable, Hashable {
    /// One value per sort descriptor (a distance sort: the squared chord, as a Double).
    public var values: [FieldValue]
    /// The record id: the last key, which makes the order total.
    public var recordID: RecordID

    /// A key from its sort values and record id.
    public init(values: [FieldValue], recordID: RecordID) {
        self.values = values
        self.recordID = recordID
    }
}

/// Computes and compares order keys for one query's sort descriptors.
@usableFromInline
struct Ordering {
    let sorts: [SortDescriptor]
    private let centers: [UnitVector?]
    /// Each sort descriptor's field (read per row without copying the descriptor).
    private let fieldNames: [String]
    /// Each sort descriptor's direction: −1 for a descending field sort, else 1 (read per
    /// comparison without copying the descriptor and its field name).
    private let signs: [Int]

    @usableFromInline
    init(_ sorts: [SortDescriptor]) {
        self.sorts = sorts
        fieldNames = sorts.map(\.fieldName)
        signs = sorts.map {
            if case .field(_, let ascending) = $0, !ascending { return -1 }
            return 1
        }
        centers = sorts.map {
            if case .distance(_, let c) = $0 { return UnitVector(latitude: c.latitude, longitude: c.longitude) }
            return nil
        }
    }

    /// The key of a record, or nil when it lacks a sort field (then it is not in the results).
    func key(_ r: Record) -> OrderKey? {
        var values: [FieldValue] = []
        values.reserveCapacity(sorts.count)
        for (i, name) in fieldNames.enumerated() {
            guard let v = r.queryValue(name), let k = keyValue(v, sort: i) else { return nil }
            values.append(k)
        }
        return OrderKey(values: values, recordID: r.recordID)
    }

    /// Whether a record is in the results (it has every sort value — what makes ``key(_:)``
    /// non-nil) and its first key value (nil for record-id order), without building its key.
    ///
    /// `chord2`: the row's squared chord from the first sort's centre as a nearest scan on that
    /// field computed it — the same arithmetic on the same unit vectors as ``key(_:)``, so the
    /// same number — when the sort is that distance alone: the record's location is then not read.
    func admit(_ r: Record, chord2: Double? = nil) -> (admitted: Bool, first: FieldValue?) {
        if let chord2, sorts.count == 1, centers[0] != nil { return (true, .double(chord2)) }
        var first: FieldValue? = nil
        for (i, name) in fieldNames.enumerated() {
            guard let v = r.queryValue(name), let k = keyValue(v, sort: i) else { return (false, nil) }
            if i == 0 { first = k }
        }
        return (true, first)
    }

    /// ``admit(_:chord2:)`` from a row's sort values read without its record: `values` holds one
    /// value per sort descriptor, in order (field sorts; nil where the row has none).
    func admit(values: [FieldValue?]) -> (admitted: Bool, first: FieldValue?) {
        var first: FieldValue? = nil
        for i in fieldNames.indices {
            guard i < values.count, let v = values[i], let k = keyValue(v, sort: i) else { return (false, nil) }
            if i == 0 { first = k }
        }
        return (true, first)
    }

    /// The first sort descriptor's key from a row's value of its field (``admit(_:chord2:)``'s
    /// `first`, read without the record); nil when the value cannot be ordered.
    func firstKey(_ v: FieldValue) -> FieldValue? { keyValue(v, sort: 0) }

    /// −1, 0 or 1: a row whose first key value is `first` before, level with, or after `key` on
    /// the first sort descriptor — the first step of ``compare(_:_:)``; 0 when there is none
    /// (record-id order), where only the whole keys tell.
    func compareFirst(_ first: FieldValue?, _ key: OrderKey) -> Int {
        guard let f = first, let k = key.values.first, let sign = signs.first else { return 0 }
        return sign * FieldValue.compare(f, k)
    }

    /// Sort descriptor `i`'s key from a field's value: a distance sort's squared chord from its
    /// centre, else the value itself; nil when the value cannot be ordered (a list, or a
    /// non-location under a distance sort), which keeps the record out of the results.
    private func keyValue(_ v: FieldValue, sort i: Int) -> FieldValue? {
        if let c = centers[i] {
            guard case .location(let l) = v else { return nil }
            return .double(c.chord2(UnitVector(latitude: l.latitude, longitude: l.longitude)))
        }
        return v.isList ? nil : v
    }

    /// A row's sort values from its selected values (`slots`: each sort descriptor's slot): with
    /// its record id, the same key as ``key(_:)`` on its record, for sorts on user fields; nil
    /// when the row lacks a sort value.
    func keyValues(_ values: [FieldValue?], slots: [Int]) -> [FieldValue]? {
        var key: [FieldValue] = []
        key.reserveCapacity(sorts.count)
        for (i, slot) in slots.enumerated() {
            guard let v = values[slot], let k = keyValue(v, sort: i) else { return nil }
            key.append(k)
        }
        return key
    }

    /// −1, 0 or 1: a row with sort values `values` before, level with, or after `key` on the
    /// sort values alone (``compare(_:_:)`` before it reaches the record ids): a row not level
    /// is placed without its id.
    func compareValues(_ values: [FieldValue], _ key: OrderKey) -> Int {
        for i in 0..<min(signs.count, values.count, key.values.count) {
            let c = FieldValue.compare(values[i], key.values[i])
            if c != 0 { return signs[i] * c }
        }
        return 0
    }

    /// −1, 0 or 1: `a` before, equal to, or after `b` in the query's order.
    func compare(_ a: OrderKey, _ b: OrderKey) -> Int {
        let c = compareValues(a.values, b)
        if c != 0 { return c }
        if a.recordID == b.recordID { return 0 }
        return a.recordID < b.recordID ? -1 : 1
    }

    func less(_ a: OrderKey, _ b: OrderKey) -> Bool { compare(a, b) < 0 }

    /// ``compare(_:_:)`` of `keys[a]` and `keys[b]`, read in place: the keys are not copied (a
    /// key passed by value retained its values and its record id's strings, and released them).
    func compare(in keys: UnsafeBufferPointer<OrderKey>, _ a: Int, _ b: Int) -> Int {
        guard let base = keys.baseAddress else { return 0 }  // no keys: `a` and `b` are not indices
        let p = base + a
        let q = base + b
        let n = min(signs.count, p.pointee.values.count, q.pointee.values.count)
        for i in 0..<n {
            let c = FieldValue.compare(p.pointee.values[i], q.pointee.values[i])
            if c != 0 { return signs[i] * c }
        }
        if p.pointee.recordID == q.pointee.recordID { return 0 }
        return p.pointee.recordID < q.pointee.recordID ? -1 : 1
    }
}

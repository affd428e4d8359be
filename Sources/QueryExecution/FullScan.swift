// FullScan: the reference answer to a query, for tests of the planner and executor.

import Indexes
import RecordModel

/// The full-scan oracle: every record filtered by `RecordMatcher` and sorted by a direct
/// comparison (the squared chord for distance sorts, then the record ID). Deliberately
/// shares no code with the executor's ordering, so tests of one check the other.
public enum FullScan {
    /// The IDs of the records of `q`, in its order.
    public static func results(
        _ q: Query, records: [Record], schema: RecordTypeSchema?, zone: ZoneID? = nil
    ) -> [RecordID] {
        let m = RecordMatcher(predicate: q.predicate, schema: schema)
        var hits = records.filter { m.matches($0) && (zone == nil || $0.recordID.zoneID == zone) }
        func key(_ r: Record, _ s: SortDescriptor) -> FieldValue? {
            guard let v = r.queryValue(s.fieldName) else { return nil }
            if case .distance(_, let c) = s {
                guard case .location(let l) = v else { return nil }
                // The squared chord: monotone in great-circle distance and not rounded through
                // asin, so points a few metres apart near a pole stay distinct (kilometres can
                // round two different distances to the same double).
                return .double(
                    UnitVector(latitude: c.latitude, longitude: c.longitude)
                        .chord2(UnitVector(latitude: l.latitude, longitude: l.longitude)))
            }
            return v.isList ? nil : v
        }
        hits = hits.filter { r in q.sortDescriptors.allSatisfy { key(r, $0) != nil } }
        hits.sort { a, b in
            for s in q.sortDescriptors {
                var c = FieldValue.compare(key(a, s)!, key(b, s)!)
                if case .field(_, false) = s { c = -c }
                if c != 0 { return c < 0 }
            }
            return a.recordID < b.recordID
        }
        return hits.map(\.recordID)
    }
}

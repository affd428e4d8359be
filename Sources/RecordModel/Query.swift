// Query: what CloudKit's CKQuery holds once its predicate is checked — a record type, the
// filters, and the sort descriptors.
//
// Every query has a total order: its sort descriptors, then the record ID (record name, then
// zone). A query without sort descriptors is therefore ordered by record ID. Cursors record a
// position in this order, so they do not depend on the plan that produced a page.

/// A checked query.
///
/// ```swift
/// let q = Query(recordType: "Place", predicate: checked.predicate,
///               sortDescriptors: [.field("population", ascending: false)])
/// ```
public struct Query: Sendable, Hashable {
    /// The record type queried.
    public var recordType: String
    /// The checked filters: every record, none, or a conjunction.
    public var predicate: QueryPredicate
    /// The sort descriptors, most significant first; the record ID breaks ties.
    public var sortDescriptors: [SortDescriptor]

    /// A query over `recordType`, unsorted (record ID order) unless sort descriptors are given.
    public init(recordType: String, predicate: QueryPredicate, sortDescriptors: [SortDescriptor] = []) {
        self.recordType = recordType
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
    }
}

extension SortDescriptor: CustomStringConvertible {
    /// `population DESC`, `name ASC`, `location NEAREST (48.85, 2.29)`.
    public var description: String {
        switch self {
        case .field(let f, let asc): "\(f) \(asc ? "ASC" : "DESC")"
        case .distance(let f, let from): "\(f) NEAREST \(from)"
        }
    }
}

extension Query: CustomStringConvertible {
    /// `Place WHERE kind EQUALS "cafe" ORDER BY population DESC`.
    public var description: String {
        var s = recordType
        switch predicate {
        case .all: break
        case .none: s += " WHERE FALSE"
        case .filters(let fs): s += " WHERE " + fs.map(\.description).joined(separator: " AND ")
        }
        if !sortDescriptors.isEmpty { s += " ORDER BY " + sortDescriptors.map(\.description).joined(separator: ", ") }
        return s
    }
}

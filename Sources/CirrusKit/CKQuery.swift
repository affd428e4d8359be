// CKQuery, CKLocationSortDescriptor and the translation of a query's NSPredicate and sort
// descriptors into the façade's RecordQuery (a format string, arguments and sorts). The
// translation never throws for a predicate CloudKit would refuse — the checker does that, later,
// with its own message; it throws only for what has no format string at all.

import Cirrus
import QueryChecker
import RecordModel

/// A query: a record type, a predicate, and the order of the results.
///
/// ```swift
/// let query = CKQuery(recordType: "Note", predicate: NSPredicate(format: "folder == %@", folderRef))
/// query.sortDescriptors = [NSSortDescriptor(key: "modificationDate", ascending: false)]
/// ```
open class CKQuery: NSObject, NSSecureCoding, NSCopying, @unchecked Sendable {
    // @unchecked: `sortDescriptors` is the only mutable member, behind `lock`.
    /// The record type searched.
    public let recordType: CKRecord.RecordType
    /// Which records match.
    public let predicate: NSPredicate
    private let lock = NSLock()
    private var sorts: [NSSortDescriptor]?

    /// A query of `recordType` matching `predicate`. CloudKit checks the predicate here and
    /// raises an exception; CirrusKit checks it when the query runs (CKError.invalidArguments).
    public init(recordType: CKRecord.RecordType, predicate: NSPredicate) {
        self.recordType = recordType
        self.predicate = predicate
        super.init()
    }

    /// The order of the results (`NSSortDescriptor(key:ascending:)` or
    /// `CKLocationSortDescriptor`), most significant first.
    public var sortDescriptors: [NSSortDescriptor]? {
        get {
            lock.lock()
            defer { lock.unlock() }
            return sorts
        }
        set {
            lock.lock()
            defer { lock.unlock() }
            sorts = newValue
        }
    }

    /// A query with the same type, predicate and sort descriptors.
    open func copy(with zone: NSZone? = nil) -> Any {
        let q = CKQuery(recordType: recordType, predicate: predicate)
        q.sortDescriptors = sortDescriptors
        return q
    }

    /// Queries archive securely (the record type and, when it has one, the predicate's format
    /// string; arguments and sort descriptors are not archived).
    public static var supportsSecureCoding: Bool { true }
    /// Archives the record type and the predicate's format string.
    open func encode(with coder: NSCoder) {
        coder.encode(recordType as NSString, forKey: "recordType")
        if let p = predicate.cirrusPayload { coder.encode(p.format as NSString, forKey: "predicateFormat") }
    }
    /// Reads what `encode(with:)` wrote.
    public required init?(coder: NSCoder) {
        guard let t = coder.cirrusObject(of: NSString.self, forKey: "recordType") else { return nil }
        recordType = t as String
        let format = coder.cirrusObject(of: NSString.self, forKey: "predicateFormat") as String?
        predicate = format.map { NSPredicate(format: $0, argumentArray: []) } ?? NSPredicate(value: true)
        super.init()
    }
}

/// A sort by distance from a location, nearest first.
///
/// ```swift
/// query.sortDescriptors = [CKLocationSortDescriptor(key: "location", relativeLocation: here)]
/// ```
open class CKLocationSortDescriptor: NSSortDescriptor {
    /// The point distances are measured from.
    public let relativeLocation: CLLocation

    /// Sorts on the Location field `key` by distance from `relativeLocation`.
    public init(key: String, relativeLocation: CLLocation) {
        self.relativeLocation = relativeLocation
        super.init(keyPath: \CirrusSortKey.[key], ascending: true)
    }
}

extension CKQuery {
    /// The façade's query: the format string (with `recordID` spelled `recordName`, Cirrus's
    /// name for it), the arguments converted, the sorts. invalidArguments when the predicate
    /// was not made from a format string or value, or a sort has no key.
    func recordQuery() throws(CKError) -> RecordQuery {
        let (format, arguments) = try PredicateTranslation.flatten(predicate)
        var sorts: [RecordModel.SortDescriptor] = []
        for d in sortDescriptors ?? [] {
            guard let key = d.key else {
                throw CKError(
                    .invalidArguments,
                    "a sort descriptor needs a field name: use NSSortDescriptor(key:ascending:) or CKLocationSortDescriptor"
                )
            }
            let field = key == "recordID" ? "recordName" : key
            if let l = d as? CKLocationSortDescriptor {
                sorts.append(.distance(field: field, from: RecordValues.location(l.relativeLocation)))
            } else {
                sorts.append(.field(field, ascending: d.ascending))
            }
        }
        return RecordQuery(recordType: recordType, predicate: format, arguments: arguments, sortDescriptors: sorts)
    }
}

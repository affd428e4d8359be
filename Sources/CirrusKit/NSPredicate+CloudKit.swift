// NSPredicate(format:…) and NSSortDescriptor(key:ascending:) on Linux.
//
// swift-corelibs-foundation declares these initializers but marks them unavailable ("Predicate
// strings and key-value coding are not supported"). The convenience initializers below, in an
// extension on Foundation's own classes, have the same names and labels; overload resolution
// ranks an unavailable declaration below any available one that type-checks, so calls resolve
// here — with `import Foundation` beside `import CirrusKit` or without it, in Swift 5 and
// Swift 6 language modes (Tests/CirrusKitOutside checks both). The arguments are `Any...`, not
// `CVarArg...`, because on Linux Date, Data, NSNumber and NSObject subclasses are not CVarArg.
//
// The format string and arguments ride inside the predicate's block: `NSPredicate(block:)` is
// Foundation's designated initializer, and evaluating the predicate with a `PredicatePayload`
// probe hands them back. A predicate made any other way (a block of the caller's, say) has no
// payload and is refused when a query runs, as CloudKit refuses block predicates.
//
// Nothing is checked here: CloudKit raises an Objective-C exception in CKQuery's initializer,
// which Swift cannot catch; CirrusKit checks with Cirrus's checker when the query runs and
// throws CKError.invalidArguments with the checker's message, position and hint.

import PredicateSyntax
import RecordModel

/// The format string and arguments a predicate was made with.
final class PredicatePayload: @unchecked Sendable {
    // @unchecked: written once, before the predicate is shared; read only afterwards.
    let format: String
    let arguments: [Any]

    init(format: String, arguments: [Any]) {
        self.format = format
        self.arguments = arguments
    }
}

/// Passed to a predicate's block to get its payload back.
final class PayloadProbe {
    var payload: PredicatePayload?
}

extension NSPredicate {
    /// A predicate from a format string and its arguments, as CloudKit takes it:
    /// `NSPredicate(format: "title == %@ AND priority > %d", "Groceries", 2)`.
    ///
    /// The arguments may be strings, numbers, Bool, Date, Data, `CLLocation`,
    /// `CKRecord.Reference`, `CKRecord` or `CKRecord.ID` (their id), and arrays of those; `%K`
    /// takes a field name.
    public convenience init(format predicateFormat: String, _ args: Any...) {
        self.init(format: predicateFormat, argumentArray: args)
    }

    /// A predicate from a format string and an array of arguments.
    public convenience init(format predicateFormat: String, argumentArray arguments: [Any]?) {
        let payload = PredicatePayload(format: predicateFormat, arguments: arguments ?? [])
        self.init(block: { object, _ in
            guard let probe = object as? PayloadProbe else { return false }
            probe.payload = payload
            return true
        })
    }

    /// The format string and arguments this predicate was made with, nil when it was not made
    /// from a format string.
    var cirrusPayload: PredicatePayload? {
        if self is NSCompoundPredicate { return nil }
        let probe = PayloadProbe()
        _ = evaluate(with: probe)
        return probe.payload
    }
}

/// A key carried by an `NSSortDescriptor(key:ascending:)`: the descriptor's key path is
/// `\SortKey.[key]`, and reading it on a `SortKey` gives the key back.
public struct CirrusSortKey: Sendable {
    /// A carrier (only the key path matters).
    public init() {}
    /// The key itself.
    public subscript(key: String) -> String { key }
}

extension NSSortDescriptor {
    /// A sort on the field `key`: `NSSortDescriptor(key: "modificationDate", ascending: false)`.
    public convenience init(key: String?, ascending: Bool) {
        self.init(keyPath: \CirrusSortKey.[key ?? ""], ascending: ascending)
    }

    /// The field this descriptor sorts on, when it was made with `init(key:ascending:)`.
    public var key: String? {
        guard let path = keyPath as? KeyPath<CirrusSortKey, String> else { return nil }
        let k = CirrusSortKey()[keyPath: path]
        return k.isEmpty ? nil : k
    }
}

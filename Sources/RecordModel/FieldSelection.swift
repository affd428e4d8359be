// FieldSelection: a few user fields named once, read from many records without building them.

/// The user fields a query reads of each candidate (a residual filter's, a sort key's), named
/// once per query so a store can pick them out of a row's encoded bytes — names compared as
/// bytes, the other fields skipped — into a reused buffer, instead of building a `Record` per
/// row.
///
/// ```swift
/// let selection = FieldSelection(["kind", "population"])
/// var values: [FieldValue?] = []
/// selection.values(of: record, into: &values)   // [.string("cafe"), .int64(1200)]
/// ```
public struct FieldSelection: Sendable, Hashable {
    /// The field names, in slot order.
    public let names: [String]
    /// Each name's UTF-8 bytes.
    public let utf8: [[UInt8]]
    /// Bit n is set when some name is n bytes long (n < 64): a stored field whose name length
    /// has no bit is skipped without comparing its name. Names of 64 bytes or more set bit 63
    /// and are compared.
    public let lengths: UInt64

    /// A selection of `names` (duplicates keep their first slot).
    public init(_ names: [String]) {
        // Without duplicates (the usual case) the list is kept as given, not copied.
        var unique = names
        if names.indices.contains(where: { names[..<$0].contains(names[$0]) }) {
            unique = []
            for n in names where !unique.contains(n) { unique.append(n) }
        }
        self.names = unique
        utf8 = unique.map { Array($0.utf8) }
        lengths = utf8.reduce(0) { $0 | (1 << UInt64(min($1.count, 63))) }
    }

    /// The number of slots.
    public var count: Int { names.count }

    /// The slot of `name`, nil when it is not selected.
    public func slot(of name: String) -> Int? { names.firstIndex(of: name) }

    /// Fills `out` with `record`'s values of the selected fields (nil where absent).
    public func values(of record: Record, into out: inout [FieldValue?]) {
        out.removeAll(keepingCapacity: true)
        for n in names { out.append(record.fields[n]) }
    }
}

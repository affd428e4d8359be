// FieldValue: every CloudKit field type, and lists of each.
//
// Equality is CloudKit's: strings are equal when their Unicode scalars are (no canonical
// equivalence), numbers compare across Int64 and Double by value, and lists element-wise.
// Ordering lives in FieldValue+Ordering.swift.

/// Which values compare with which: the family of a scalar type (INT64 and DOUBLE are one family,
/// compared by value). Raw values 0–4 are the ordered index's key families (stored in index
/// sections): never change them.
public enum ValueFamily: UInt8, Sendable, Hashable, CaseIterable {
    case number, string, date, bytes, reference, location

    /// The family of a scalar type, or `nil` for `ASSETID` (assets never compare).
    public init?(_ scalar: ScalarType) {
        switch scalar {
        case .int64, .double: self = .number
        case .string: self = .string
        case .date: self = .date
        case .bytes: self = .bytes
        case .reference: self = .reference
        case .location: self = .location
        case .asset: return nil
        }
    }
}

/// The scalar types of CloudKit fields. A field is a scalar type or a list of one.
public enum ScalarType: UInt8, Sendable, Hashable, Codable, CaseIterable {
    /// `STRING`
    case string = 1
    /// `INT64`
    case int64 = 2
    /// `DOUBLE`
    case double = 3
    /// `TIMESTAMP`
    case date = 4
    /// `BYTES`
    case bytes = 5
    /// `LOCATION`
    case location = 6
    /// `REFERENCE`
    case reference = 7
    /// `ASSETID`
    case asset = 8

    /// Web Services name: `STRING`, `INT64`, `DOUBLE`, `TIMESTAMP`, `BYTES`, `LOCATION`,
    /// `REFERENCE`, `ASSETID`.
    public var webServicesName: String {
        switch self {
        case .string: "STRING"
        case .int64: "INT64"
        case .double: "DOUBLE"
        case .date: "TIMESTAMP"
        case .bytes: "BYTES"
        case .location: "LOCATION"
        case .reference: "REFERENCE"
        case .asset: "ASSETID"
        }
    }

    /// Name in CloudKit's schema language (`cktool export-schema`): `STRING`, `INT64`, `DOUBLE`,
    /// `TIMESTAMP`, `BYTES`, `LOCATION`, `REFERENCE`, `ASSET`.
    public var schemaName: String { self == .asset ? "ASSET" : webServicesName }

    /// Whether values of this type are numbers (Int64 and Double compare with each other).
    public var isNumeric: Bool { self == .int64 || self == .double }
}

/// A field's declared type: a scalar type or a list of one. Lists do not nest.
///
/// ```swift
/// let tags = FieldType.list(.string)   // STRING_LIST
/// ```
public struct FieldType: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The scalar type, or the element type of a list.
    public var scalar: ScalarType
    /// Whether the field holds a list of `scalar`.
    public var isList: Bool

    /// A scalar type, or a list of it when `isList`.
    public init(_ scalar: ScalarType, isList: Bool = false) {
        self.scalar = scalar
        self.isList = isList
    }

    /// A list of `scalar`, e.g. `.list(.string)` for `STRING_LIST`.
    public static func list(_ scalar: ScalarType) -> FieldType { FieldType(scalar, isList: true) }

    /// `STRING`
    public static let string = FieldType(.string)
    /// `INT64`
    public static let int64 = FieldType(.int64)
    /// `DOUBLE`
    public static let double = FieldType(.double)
    /// `TIMESTAMP`
    public static let date = FieldType(.date)
    /// `BYTES`
    public static let bytes = FieldType(.bytes)
    /// `LOCATION`
    public static let location = FieldType(.location)
    /// `REFERENCE`
    public static let reference = FieldType(.reference)
    /// `ASSETID`
    public static let asset = FieldType(.asset)

    /// Web Services name, e.g. `STRING` or `INT64_LIST`.
    public var webServicesName: String { isList ? scalar.webServicesName + "_LIST" : scalar.webServicesName }

    /// Parses a Web Services type name (`TIMESTAMP_LIST`, …); also accepts the schema language's
    /// `ASSET` and `LIST<T>` spellings.
    public init?(webServicesName name: String) {
        if let t = Self.exactNames[name] {  // the canonical spelling every record line uses
            self = t
            return
        }
        var n = name.uppercased()
        var list = false
        if n.hasSuffix("_LIST") {
            list = true
            n.removeLast(5)
        } else if n.hasPrefix("LIST<"), n.hasSuffix(">") {
            list = true
            n = String(n.dropFirst(5).dropLast())
        }
        if n == "ASSET" { n = "ASSETID" }
        guard let s = ScalarType.allCases.first(where: { $0.webServicesName == n }) else { return nil }
        self.init(s, isList: list)
    }

    /// Every type by its canonical Web Services name (`STRING`, `STRING_LIST`, …).
    static let exactNames: [String: FieldType] = Dictionary(
        uniqueKeysWithValues: ScalarType.allCases.flatMap { s in
            [false, true].map { list in (FieldType(s, isList: list).webServicesName, FieldType(s, isList: list)) }
        })

    /// The Web Services name, e.g. `STRING_LIST`.
    public var description: String { webServicesName }
}

/// The value of a record field.
///
/// ```swift
/// let fields: RecordFields = [
///     "title": "Mona Lisa",
///     "year": 1503,
///     "tags": .list(["portrait", "louvre"]),
///     "location": .location(Location(latitude: 48.8606, longitude: 2.3376)),
/// ]
/// ```
public enum FieldValue: Sendable {
    /// A `STRING`.
    case string(String)
    /// An `INT64`.
    case int64(Int64)
    /// A `DOUBLE` (finite when saved).
    case double(Double)
    /// A `TIMESTAMP`, at millisecond precision.
    case date(Timestamp)
    /// `BYTES`.
    case bytes([UInt8])
    /// A `LOCATION`.
    case location(Location)
    /// A `REFERENCE` to another record.
    indirect case reference(Reference)
    /// An `ASSETID`: a file beside the record.
    case asset(Asset)
    /// A list; CloudKit requires every element to have the same scalar type.
    case list([FieldValue])

    /// The scalar type of this value, or of a list's first element (`nil` for an empty list).
    public var scalarType: ScalarType? {
        switch self {
        case .string: .string
        case .int64: .int64
        case .double: .double
        case .date: .date
        case .bytes: .bytes
        case .location: .location
        case .reference: .reference
        case .asset: .asset
        case .list(let items): items.first?.scalarType
        }
    }

    /// The field type of this value; an empty list reports `nil`.
    public var fieldType: FieldType? {
        if case .list(let items) = self {
            guard let s = items.first?.scalarType else { return nil }
            return .list(s)
        }
        return scalarType.map { FieldType($0) }
    }

    /// Whether this is a list.
    public var isList: Bool {
        if case .list = self { return true }
        return false
    }

    /// The elements of a list, or the value itself as a one-element array.
    public var elements: [FieldValue] {
        if case .list(let items) = self { return items }
        return [self]
    }

    /// Calls `body` with each element, as `elements` lists them, without making that array.
    @inlinable
    public func forEachElement<E: Error>(_ body: (FieldValue) throws(E) -> Void) throws(E) {
        if case .list(let items) = self {
            for e in items { try body(e) }
        } else {
            try body(self)
        }
    }

    /// A short name of the value's type for messages, e.g. `STRING` or `INT64_LIST`.
    public var typeName: String {
        if case .list(let items) = self {
            return (items.first?.scalarType?.webServicesName ?? "EMPTY") + "_LIST"
        }
        return scalarType!.webServicesName
    }
}

extension FieldValue: Equatable {
    /// CloudKit equality: exact Unicode scalars for strings, numbers by value across Int64/Double.
    public static func == (a: FieldValue, b: FieldValue) -> Bool {
        switch (a, b) {
        case (.string(let x), .string(let y)): return compareUTF8(x, y) == 0
        case (.int64, .int64), (.int64, .double), (.double, .int64), (.double, .double):
            return compareNumbers(a, b) == 0
        case (.date(let x), .date(let y)): return x == y
        case (.bytes(let x), .bytes(let y)): return x == y
        case (.location(let x), .location(let y)): return x == y
        case (.reference(let x), .reference(let y)): return x.recordID == y.recordID
        case (.asset(let x), .asset(let y)): return x == y
        case (.list(let x), .list(let y)): return x == y
        default: return false
        }
    }
}

extension FieldValue: Hashable {
    /// Hashes consistently with `==`: equal numbers hash alike across Int64 and Double, references by record id.
    public func hash(into h: inout Hasher) {
        switch self {
        case .string(let s):
            h.combine(1 as UInt8)
            var s = s
            s.withUTF8 { h.combine(bytes: UnsafeRawBufferPointer($0)) }
        case .int64(let i):
            h.combine(2 as UInt8)
            h.combine(Double(i))  // equal numbers hash alike across Int64/Double
        case .double(let d):
            h.combine(2 as UInt8)
            h.combine(d == 0 ? 0 : d)
        case .date(let t): h.combine(4 as UInt8); h.combine(t)
        case .bytes(let b): h.combine(5 as UInt8); h.combine(b)
        case .location(let l): h.combine(6 as UInt8); h.combine(l)
        case .reference(let r): h.combine(7 as UInt8); h.combine(r.recordID)
        case .asset(let a): h.combine(8 as UInt8); h.combine(a)
        case .list(let items): h.combine(9 as UInt8); h.combine(items)
        }
    }
}

extension FieldValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByArrayLiteral
{
    /// A `STRING` value.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An `INT64` value.
    public init(integerLiteral value: Int64) { self = .int64(value) }
    /// A `DOUBLE` value.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// A list value.
    public init(arrayLiteral elements: FieldValue...) { self = .list(elements) }
}

// CloudKit's ordering of field values.
//
// Within a type family values order naturally: numbers by value across Int64 and Double (exactly,
// without rounding an Int64 through Double), strings by Unicode scalars, dates by instant,
// references by target record id, bytes lexicographically. Index keys need a *total* order, so
// families are ranked (number < string < date < bytes < reference < location < asset < list);
// a query never compares values of different families, so the rank only keeps indexes sound.

extension FieldValue {
    /// Rank of the value's family in the total order used by indexes.
    @inlinable
    public var familyRank: UInt8 {
        switch self {
        case .int64, .double: 1
        case .string: 2
        case .date: 3
        case .bytes: 4
        case .reference: 5
        case .location: 6
        case .asset: 7
        case .list: 8
        }
    }

    /// Whether two values can be compared with `<` in a query (same family, not location or asset).
    public func isComparable(with other: FieldValue) -> Bool {
        familyRank == other.familyRank && familyRank <= 5
    }

    /// Total order used by indexes and sorting: −1, 0 or 1.
    public static func compare(_ a: FieldValue, _ b: FieldValue) -> Int {
        let ra = a.familyRank
        let rb = b.familyRank
        if ra != rb { return ra < rb ? -1 : 1 }
        switch (a, b) {
        case (.string(let x), .string(let y)): return compareUTF8(x, y)
        case (.date(let x), .date(let y)): return x == y ? 0 : (x < y ? -1 : 1)
        case (.bytes(let x), .bytes(let y)): return compareBytes(x, y)
        case (.reference(let x), .reference(let y)):
            return x.recordID == y.recordID ? 0 : (x.recordID < y.recordID ? -1 : 1)
        case (.location(let x), .location(let y)):
            if x.latitude != y.latitude { return x.latitude < y.latitude ? -1 : 1 }
            if x.longitude != y.longitude { return x.longitude < y.longitude ? -1 : 1 }
            return 0
        case (.asset(let x), .asset(let y)): return compareUTF8(x.contentHash, y.contentHash)
        case (.list(let x), .list(let y)):
            for (u, v) in zip(x, y) {
                let c = compare(u, v)
                if c != 0 { return c }
            }
            return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
        default: return compareNumbers(a, b)
        }
    }
}

/// Exact three-way comparison of two numeric values (Int64 or Double). NaN sorts before every
/// number and equals itself, so the order stays total; validation keeps NaN out of records.
@usableFromInline
func compareNumbers(_ a: FieldValue, _ b: FieldValue) -> Int {
    switch (a, b) {
    case (.int64(let x), .int64(let y)): return x == y ? 0 : (x < y ? -1 : 1)
    case (.double(let x), .double(let y)): return compareDoubles(x, y)
    case (.int64(let x), .double(let y)): return -compareDoubleToInt(y, x)
    case (.double(let x), .int64(let y)): return compareDoubleToInt(x, y)
    default: return 0
    }
}

@usableFromInline
func compareDoubles(_ x: Double, _ y: Double) -> Int {
    if x.isNaN || y.isNaN { return x.isNaN ? (y.isNaN ? 0 : -1) : 1 }
    return x == y ? 0 : (x < y ? -1 : 1)
}

/// Compares a Double with an Int64 exactly (no rounding of the Int64 through Double).
@usableFromInline
func compareDoubleToInt(_ d: Double, _ i: Int64) -> Int {
    if d.isNaN { return -1 }
    if d < -9_223_372_036_854_775_808.0 { return -1 }  // below Int64.min
    if d >= 9_223_372_036_854_775_808.0 { return 1 }  // 2^63 and above
    let t = d.rounded(.towardZero)
    let ti = Int64(t)
    if ti != i { return ti < i ? -1 : 1 }
    let frac = d - t
    return frac == 0 ? 0 : (frac < 0 ? -1 : 1)
}

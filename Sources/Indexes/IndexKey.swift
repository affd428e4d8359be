// IndexKey: compact, order-preserving encodings of field values for the B+tree.
//
// An ordered index holds one value family (numbers, strings, dates, bytes or references), fixed
// when it is created; values of another family are not indexed (the checker never compares across
// families). Each family encodes to a key whose plain integer/byte comparison equals
// `FieldValue.compare`, so the tree never touches `FieldValue` on its hot path:
//
// - numbers (Int64 and Double together) → `FixedKey(a, b)`: `a` is the order-preserving bit
//   pattern of the value rounded to Double (−0 folded to +0, NaN below −∞), `b` the exact Int64
//   remainder `i − Double(i)` biased by 2^63 (0 for Doubles). Rounding is monotone, so `a`
//   decides unless two values round to the same Double, and then the remainder decides exactly.
// - dates → `FixedKey(a: ms ^ 2^63, b: 0)`.
// - strings (UTF-8), bytes, references (record name, zone name, owner name) → `VarKey`: the
//   bytes are escaped (0x00 → 0x00 0x01) and each component terminated by 0x00 0x00, which makes
//   the code prefix-free and order-preserving; the first 16 encoded bytes live inline in `a`, `b`
//   (big-endian, zero-padded) and only the rest, when there is any, in `tail`. Strings of up to
//   14 UTF-8 bytes therefore cost no allocation. Zero padding compares like the terminator, so
//   comparing (a, b, tail) equals comparing the whole encodings.

import RecordModel

/// A compact row identifier assigned by the store. Indexes hold these, never record names.
public typealias RowID = UInt32

/// The value families an ordered index can hold; one per index.
public enum KeyFamily: UInt8, Sendable, Hashable, CaseIterable {
    case number, string, date, bytes, reference

    /// The family of a scalar type, or `nil` for types that have no ordered index (location, asset).
    public init?(_ scalar: ScalarType) {
        guard let family = ValueFamily(scalar), let key = KeyFamily(rawValue: family.rawValue) else { return nil }
        self = key
    }

    var isFixed: Bool { self == .number || self == .date }
}

/// Keys the B+tree can hold: totally ordered, cheap to copy.
protocol TreeKey: Comparable, Sendable {
    /// The smallest key (used for "no lower bound" positions).
    static var minKey: Self { get }
}

/// Two 64-bit words compared in order: numbers and dates.
struct FixedKey: TreeKey, Hashable {
    var a: UInt64
    var b: UInt64
    static let minKey = FixedKey(a: 0, b: 0)
    @inline(__always)
    static func < (x: FixedKey, y: FixedKey) -> Bool { x.a != y.a ? x.a < y.a : x.b < y.b }
}

/// Escaped, terminated bytes; 16 inline, the rest in `tail`.
struct VarKey: TreeKey, Hashable {
    var a: UInt64
    var b: UInt64
    var tail: [UInt8]
    static let minKey = VarKey(a: 0, b: 0, tail: [])

    @inline(__always)
    static func < (x: VarKey, y: VarKey) -> Bool {
        if x.a != y.a { return x.a < y.a }
        if x.b != y.b { return x.b < y.b }
        return compareTails(x.tail, y.tail) < 0
    }

    /// The order of two tails (bytes past the inline 16): negative, zero or positive. An empty
    /// tail is first; otherwise bytewise, a prefix before the longer tail.
    @inline(__always)
    static func compareTails(_ x: [UInt8], _ y: [UInt8]) -> Int {
        if x.isEmpty || y.isEmpty { return (x.isEmpty ? 0 : 1) - (y.isEmpty ? 0 : 1) }
        return x.withUnsafeBytes { px in y.withUnsafeBytes { py in compareBytes(px, py) } }
    }

    /// Builds a key from already-encoded bytes (no terminator added).
    init(encoded e: [UInt8]) {
        var a: UInt64 = 0
        var b: UInt64 = 0
        for i in 0..<8 { a = a << 8 | UInt64(i < e.count ? e[i] : 0) }
        for i in 8..<16 { b = b << 8 | UInt64(i < e.count ? e[i] : 0) }
        self.a = a
        self.b = b
        self.tail = e.count > 16 ? Array(e[16...]) : []
    }

    init(a: UInt64, b: UInt64, tail: [UInt8]) {
        self.a = a
        self.b = b
        self.tail = tail
    }
}

enum KeyEncoding {
    /// Order-preserving bits of a Double: −0 → +0, NaN below every number.
    @inline(__always)
    static func orderBits(_ d: Double) -> UInt64 {
        if d.isNaN { return 0 }
        let v = d == 0 ? 0.0 : d
        let bits = v.bitPattern
        return bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
    }

    static func number(_ v: FieldValue) -> FixedKey? {
        switch v {
        case .double(let d): return FixedKey(a: orderBits(d), b: 1 << 63)
        case .int64(let i): return int(i)
        default: return nil
        }
    }

    @inline(__always)
    static func int(_ i: Int64) -> FixedKey {
        let d = Double(i)
        let delta: Int64
        if d >= 9_223_372_036_854_775_808.0 {
            delta = i &- Int64.max &- 1  // i − 2^63, exact
        } else {
            delta = i &- Int64(d)
        }
        return FixedKey(a: orderBits(d), b: UInt64(bitPattern: delta) ^ (1 << 63))
    }

    static func date(_ t: Timestamp) -> FixedKey {
        FixedKey(a: UInt64(bitPattern: t.millisecondsSince1970) ^ (1 << 63), b: 0)
    }

    /// Appends `bytes` escaped (0x00 → 0x00 0x01), optionally terminated by 0x00 0x00.
    @inline(__always)
    static func appendEscaped<C: Collection>(_ bytes: C, to out: inout [UInt8], terminate: Bool)
    where C.Element == UInt8 {
        for x in bytes {
            out.append(x)
            if x == 0 { out.append(1) }
        }
        if terminate {
            out.append(0)
            out.append(0)
        }
    }

    /// Encoded bytes of a variable-length value (terminated), or nil for another family.
    static func encoded(_ v: FieldValue, family: KeyFamily) -> [UInt8]? {
        var out: [UInt8] = []
        switch (v, family) {
        case (.string(let s), .string):
            out.reserveCapacity(s.utf8.count + 2)
            appendEscaped(s.utf8, to: &out, terminate: true)
        case (.bytes(let x), .bytes):
            out.reserveCapacity(x.count + 2)
            appendEscaped(x, to: &out, terminate: true)
        case (.reference(let r), .reference):
            appendEscaped(r.recordID.recordName.utf8, to: &out, terminate: true)
            appendEscaped(r.recordID.zoneID.zoneName.utf8, to: &out, terminate: true)
            appendEscaped(r.recordID.zoneID.ownerName.utf8, to: &out, terminate: true)
        default: return nil
        }
        return out
    }

    /// Fast path for strings: encodes without an intermediate array when short and NUL-free.
    static func varKey(_ v: FieldValue, family: KeyFamily) -> VarKey? {
        if case .string(var s) = v, family == .string {
            let fast: VarKey? = s.withUTF8 { p in
                guard p.count <= 14, !p.contains(0) else { return nil }
                var a: UInt64 = 0
                var b: UInt64 = 0
                for i in 0..<8 { a = a << 8 | UInt64(i < p.count ? p[i] : 0) }
                for i in 8..<16 { b = b << 8 | UInt64(i < p.count ? p[i] : 0) }
                return VarKey(a: a, b: b, tail: [])
            }
            if let fast { return fast }
        }
        return encoded(v, family: family).map { VarKey(encoded: $0) }
    }

    /// The half-open key range [lower, upper) of values starting with `prefix` (strings, bytes);
    /// `upper == nil` means unbounded.
    static func prefixRange(_ prefix: FieldValue, family: KeyFamily) -> (VarKey, VarKey?)? {
        var e: [UInt8] = []
        switch (prefix, family) {
        case (.string(let s), .string): appendEscaped(s.utf8, to: &e, terminate: false)
        case (.bytes(let x), .bytes): appendEscaped(x, to: &e, terminate: false)
        default: return nil
        }
        let lower = VarKey(encoded: e)
        var u = e
        while let last = u.last, last == 0xFF { u.removeLast() }
        guard let last = u.last else { return (lower, nil) }
        u[u.count - 1] = last + 1
        return (lower, VarKey(encoded: u))
    }
}

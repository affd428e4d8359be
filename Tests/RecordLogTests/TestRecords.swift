// Test helpers: random records of every field type, and exact (type- and bit-exact) equality,
// since FieldValue's own == is CloudKit's (3 == 3.0, references by id only).

import CirrusIO
import CirrusTestSupport
import Foundation
import RecordModel

@testable import RecordLog

enum TestRecords {
    static func zone(_ g: inout SeededRandom) -> ZoneID {
        g.chance(0.7)
            ? .default
            : ZoneID(
                zoneName: ["Notes", "Places", "z9"][g.below(3)],
                ownerName: g.chance(0.5) ? ZoneID.defaultOwnerName : "_u1")
    }

    static func name(_ g: inout SeededRandom, _ n: Int = 8) -> String {
        let chars = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
        return String((0..<max(1, g.below(n) + 1)).map { _ in chars[g.below(chars.count)] })
    }

    static func string(_ g: inout SeededRandom) -> String {
        let pool = [
            "", "a", "Mona Lisa", "é", "e\u{301}", "日本語", "🙂 emoji", "line\nbreak", "quote\"",
            String(repeating: "x", count: 300),
        ]
        return g.chance(0.5) ? pool[g.below(pool.count)] : name(&g, 20)
    }

    static func double(_ g: inout SeededRandom) -> Double {
        let pool: [Double] = [0, -0.0, 1.5, -2.25, 1e-300, 1.7976931348623157e308, .pi, 123456789.125]
        return g.chance(0.5) ? pool[g.below(pool.count)] : Double(bitPattern: g.next() >> 2) * (g.chance(0.5) ? 1 : -1)
    }

    static func scalar(_ t: ScalarType, _ g: inout SeededRandom) -> FieldValue {
        switch t {
        case .string: return .string(string(&g))
        case .int64:
            return .int64([0, 1, -1, .max, .min, 300][g.below(6)] &+ (g.chance(0.5) ? Int64(bitPattern: g.next()) : 0))
        case .double:
            let d = double(&g)
            return .double(d.isFinite ? d : 1)
        case .date: return .date(Timestamp(millisecondsSince1970: Int64(bitPattern: g.next()) >> 20))
        case .bytes: return .bytes((0..<g.below(40)).map { _ in UInt8(truncatingIfNeeded: g.next()) })
        case .location:
            var l = Location(
                latitude: Double(g.below(180_001)) / 1000 - 90, longitude: Double(g.below(360_001)) / 1000 - 180)
            if g.chance(0.5) {
                l.altitude = Double(g.below(9000))
                l.horizontalAccuracy = Double(g.below(100))
                l.verticalAccuracy = Double(g.below(100))
                l.course = Double(g.below(360))
                l.speed = Double(g.below(50))
                l.timestamp = Timestamp(millisecondsSince1970: Int64(g.below(1 << 40)))
            }
            return .location(l)
        case .reference:
            return .reference(
                Reference(
                    recordID: RecordID(recordName: name(&g), zoneID: zone(&g)),
                    action: g.chance(0.5) ? .none : .deleteSelf))
        case .asset:
            let hex = Array("0123456789abcdef")
            return .asset(
                Asset(contentHash: String((0..<64).map { _ in hex[g.below(16)] }), size: Int64(g.below(1 << 30))))
        }
    }

    static func value(_ g: inout SeededRandom) -> FieldValue {
        let t = ScalarType.allCases[g.below(ScalarType.allCases.count)]
        if g.chance(0.2) { return .list((0..<g.below(5)).map { _ in scalar(t, &g) }) }
        return scalar(t, &g)
    }

    static func record(_ g: inout SeededRandom, id: RecordID? = nil, type: String? = nil) -> Record {
        var r = Record(
            recordType: type ?? ["Note", "Place", "Item"][g.below(3)],
            recordID: id ?? RecordID(recordName: name(&g), zoneID: zone(&g)))
        for _ in 0..<g.below(12) { r.fields[fieldName(&g)] = value(&g) }
        if g.chance(0.5) { r.creationDate = Timestamp(millisecondsSince1970: Int64(g.below(1 << 41))) }
        if g.chance(0.5) { r.modificationDate = Timestamp(millisecondsSince1970: Int64(g.below(1 << 41))) }
        if g.chance(0.3) { r.creatorUserRecordID = RecordID(recordName: "_" + name(&g)) }
        if g.chance(0.3) { r.lastModifiedUserRecordID = RecordID(recordName: "_" + name(&g), zoneID: zone(&g)) }
        if g.chance(0.5) { r.recordChangeTag = name(&g) }
        return r
    }

    static let fieldNames = [
        "title", "count", "price", "when", "blob", "where", "ref", "file", "tags", "a1", "B_2", "x",
    ]

    static func fieldName(_ g: inout SeededRandom) -> String { fieldNames[g.below(fieldNames.count)] }
}

/// Exact equality: same types, same bits, same reference actions.
func identical(_ a: FieldValue, _ b: FieldValue) -> Bool {
    switch (a, b) {
    case (.string(let x), .string(let y)): return Array(x.utf8) == Array(y.utf8)
    case (.int64(let x), .int64(let y)): return x == y
    case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern
    case (.date(let x), .date(let y)): return x == y
    case (.bytes(let x), .bytes(let y)): return x == y
    case (.location, .location):
        // Every member by its bits, as the codec writes them (`==` is false for a NaN that damaged
        // bytes decode to, bits equal or not).
        var x = ByteWriter()
        var y = ByteWriter()
        RecordCodec.encodeValue(a, into: &x)
        RecordCodec.encodeValue(b, into: &y)
        return x.bytes == y.bytes
    case (.reference(let x), .reference(let y)): return x.recordID == y.recordID && x.action == y.action
    case (.asset(let x), .asset(let y)): return x == y
    case (.list(let x), .list(let y)): return x.count == y.count && zip(x, y).allSatisfy { identical($0, $1) }
    default: return false
    }
}

func identical(_ a: Record, _ b: Record) -> Bool {
    a.recordType == b.recordType && a.recordID == b.recordID && a.creationDate == b.creationDate
        && a.modificationDate == b.modificationDate && a.creatorUserRecordID == b.creatorUserRecordID
        && a.lastModifiedUserRecordID == b.lastModifiedUserRecordID && a.recordChangeTag == b.recordChangeTag
        && a.fields.count == b.fields.count
        && a.fields.allSatisfy { k, v in b.fields[k].map { identical(v, $0) } ?? false }
}

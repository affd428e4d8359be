// The binary pieces of a cursor token: queries, field values and record IDs
// (docs/cursor-format.md).

import CirrusIO
import RecordModel

enum CursorCoding {
    static func write(_ q: Query, _ w: inout ByteWriter) {
        w.string(q.recordType)
        switch q.predicate {
        case .all: w.u8(0)
        case .none: w.u8(1)
        case .filters(let fs):
            w.u8(2)
            w.varint(UInt64(fs.count))
            for f in fs {
                w.string(f.fieldName)
                w.string(f.comparator.rawValue)
                write(f.fieldValue, &w)
                if let d = f.distance {
                    w.u8(1)
                    w.f64(d)
                } else {
                    w.u8(0)
                }
            }
        }
        w.varint(UInt64(q.sortDescriptors.count))
        for s in q.sortDescriptors {
            switch s {
            case .field(let f, let asc):
                w.u8(1)
                w.string(f)
                w.u8(asc ? 1 : 0)
            case .distance(let f, let from):
                w.u8(2)
                w.string(f)
                w.f64(from.latitude)
                w.f64(from.longitude)
            }
        }
    }

    static func readQuery(_ r: inout ByteReader) throws(CodecError) -> Query {
        let type = try r.string()
        let predicate: QueryPredicate
        switch try r.u8() {
        case 0: predicate = .all
        case 1: predicate = .none
        case 2:
            var fs: [QueryFilter] = []
            for _ in 0..<(try count(&r)) {
                let name = try r.string()
                let cname = try r.string()
                guard let c = Comparator(rawValue: cname) else {
                    throw CodecError("unknown comparator \(cname)", offset: r.offset)
                }
                let v = try readValue(&r, depth: 0)
                let d: Double? = try r.u8() == 1 ? try r.f64() : nil
                fs.append(QueryFilter(fieldName: name, comparator: c, fieldValue: v, distance: d))
            }
            predicate = .filters(fs)
        case let t: throw CodecError("unknown predicate tag \(t)", offset: r.offset)
        }
        var sorts: [SortDescriptor] = []
        for _ in 0..<(try count(&r)) {
            switch try r.u8() {
            case 1: sorts.append(.field(try r.string(), ascending: try r.u8() == 1))
            case 2:
                sorts.append(
                    .distance(field: try r.string(), from: Location(latitude: try r.f64(), longitude: try r.f64())))
            case let t: throw CodecError("unknown sort tag \(t)", offset: r.offset)
            }
        }
        return Query(recordType: type, predicate: predicate, sortDescriptors: sorts)
    }

    static func write(_ v: FieldValue, _ w: inout ByteWriter) {
        switch v {
        case .string(let s):
            w.u8(1)
            w.string(s)
        case .int64(let i):
            w.u8(2)
            w.u64(UInt64(bitPattern: i))
        case .double(let d):
            w.u8(3)
            w.f64(d)
        case .date(let t):
            w.u8(4)
            w.u64(UInt64(bitPattern: t.millisecondsSince1970))
        case .bytes(let b):
            w.u8(5)
            w.byteString(b)
        case .location(let l):
            w.u8(6)
            w.f64(l.latitude)
            w.f64(l.longitude)
        case .reference(let r):
            w.u8(7)
            write(r.recordID, &w)
        case .asset(let a):  // never in a query; written as its hash so encoding is total
            w.u8(1)
            w.string(a.contentHash)
        case .list(let items):
            w.u8(9)
            w.varint(UInt64(items.count))
            for i in items { write(i, &w) }
        }
    }

    static func readValue(_ r: inout ByteReader, depth: Int) throws(CodecError) -> FieldValue {
        switch try r.u8() {
        case 1: return .string(try r.string())
        case 2: return .int64(Int64(bitPattern: try r.u64()))
        case 3: return .double(try r.f64())
        case 4: return .date(Timestamp(millisecondsSince1970: Int64(bitPattern: try r.u64())))
        case 5: return .bytes(try r.byteString())
        case 6: return .location(Location(latitude: try r.f64(), longitude: try r.f64()))
        case 7: return .reference(Reference(recordID: try readRecordID(&r)))
        case 9 where depth == 0:
            var items: [FieldValue] = []
            for _ in 0..<(try count(&r)) { items.append(try readValue(&r, depth: 1)) }
            return .list(items)
        case let t: throw CodecError("unknown value tag \(t)", offset: r.offset)
        }
    }

    static func write(_ id: RecordID, _ w: inout ByteWriter) {
        w.string(id.recordName)
        w.string(id.zoneID.zoneName)
        w.string(id.zoneID.ownerName)
    }

    static func readRecordID(_ r: inout ByteReader) throws(CodecError) -> RecordID {
        RecordID(recordName: try r.string(), zoneID: ZoneID(zoneName: try r.string(), ownerName: try r.string()))
    }

    /// A count that cannot exceed the bytes left (each item takes at least one byte).
    static func count(_ r: inout ByteReader) throws(CodecError) -> Int {
        let n = try r.varint()
        guard n <= UInt64(r.remaining) else {
            throw CodecError("count \(n) exceeds the remaining bytes", offset: r.offset)
        }
        return Int(n)
    }
}

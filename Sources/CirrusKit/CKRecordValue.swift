// The values a CKRecord field holds (CKRecordValueProtocol) and their conversion to and from
// the façade's FieldValue. A field reads back in the form CloudKit hands out: strings as
// String, numbers as NSNumber (so `as? Int`, `as? Double` and `as? Bool` work), dates as Date,
// bytes as Data, locations as CLLocation, references as CKRecord.Reference, assets as CKAsset,
// lists as arrays of those.

import RecordModel

/// A value a record field can hold: String, the integer and floating-point types, Bool, Date,
/// Data, CLLocation, CKRecord.Reference, CKAsset, NSString, NSNumber, NSDate, NSData, and arrays
/// of them.
public protocol CKRecordValueProtocol {}

/// Apple's name for a field value in code written before `CKRecordValueProtocol`
/// (`record["title"] = title as CKRecordValue`).
public typealias CKRecordValue = CKRecordValueProtocol

extension String: CKRecordValueProtocol {}
extension Int: CKRecordValueProtocol {}
extension Int8: CKRecordValueProtocol {}
extension Int16: CKRecordValueProtocol {}
extension Int32: CKRecordValueProtocol {}
extension Int64: CKRecordValueProtocol {}
extension UInt: CKRecordValueProtocol {}
extension UInt8: CKRecordValueProtocol {}
extension UInt16: CKRecordValueProtocol {}
extension UInt32: CKRecordValueProtocol {}
extension UInt64: CKRecordValueProtocol {}
extension Double: CKRecordValueProtocol {}
extension Float: CKRecordValueProtocol {}
extension Bool: CKRecordValueProtocol {}
extension Date: CKRecordValueProtocol {}
extension Data: CKRecordValueProtocol {}
extension NSString: CKRecordValueProtocol {}
extension NSNumber: CKRecordValueProtocol {}
extension NSDate: CKRecordValueProtocol {}
extension NSData: CKRecordValueProtocol {}
extension NSArray: CKRecordValueProtocol {}
extension CLLocation: CKRecordValueProtocol {}
extension CKReference: CKRecordValueProtocol {}
extension CKAsset: CKRecordValueProtocol {}
extension Array: CKRecordValueProtocol where Element: CKRecordValueProtocol {}

/// Conversions between Swift values, CloudKit's presented values and FieldValue.
enum RecordValues {
    /// The FieldValue of a Swift value; assets go through `asset` (nil: not stored yet). Nil
    /// when the value is not one CloudKit stores (a nested array, a mixed array, a
    /// non-finite number, …).
    static func field(_ v: Any, asset: (CKAsset) -> Asset?) -> FieldValue? {
        if let scalar = scalar(v, asset: asset) { return scalar }
        let items: [Any]
        switch v {
        case let a as [Any]: items = a
        case let a as NSArray: items = a.map { $0 }
        default: return nil
        }
        var out: [FieldValue] = []
        out.reserveCapacity(items.count)
        for item in items {
            guard let f = scalar(item, asset: asset) else { return nil }
            if let first = out.first, first.scalarType != f.scalarType { return nil }
            out.append(f)
        }
        return .list(out)
    }

    /// The FieldValue of one scalar value, nil for anything else.
    static func scalar(_ v: Any, asset: (CKAsset) -> Asset?) -> FieldValue? {
        switch v {
        case let s as String: return .string(s)
        case let s as Substring: return .string(String(s))
        case let b as Bool: return .int64(b ? 1 : 0)
        case let i as Int: return .int64(Int64(i))
        case let i as Int64: return .int64(i)
        case let i as Int32: return .int64(Int64(i))
        case let i as Int16: return .int64(Int64(i))
        case let i as Int8: return .int64(Int64(i))
        case let i as UInt: return Int64(exactly: i).map { .int64($0) } ?? .double(Double(i))
        case let i as UInt64: return Int64(exactly: i).map { .int64($0) } ?? .double(Double(i))
        case let i as UInt32: return .int64(Int64(i))
        case let i as UInt16: return .int64(Int64(i))
        case let i as UInt8: return .int64(Int64(i))
        case let d as Double: return d.isFinite ? .double(d) : nil
        case let f as Float: return f.isFinite ? .double(Double(f)) : nil
        case let d as Date: return .date(Timestamp(d))
        case let d as Data: return .bytes(Array(d))
        case let l as CLLocation: return .location(location(l))
        case let r as CKReference: return .reference(reference(r))
        case let a as CKAsset: return asset(a).map { .asset($0) }
        case let n as NSNumber: return number(n)
        case let s as NSString: return .string(s as String)
        case let d as NSDate: return .date(Timestamp(d as Date))
        case let d as NSData: return .bytes(Array(d as Data))
        default: return nil
        }
    }

    /// An NSNumber as INT64 or, when it holds a floating-point number, DOUBLE.
    static func number(_ n: NSNumber) -> FieldValue? {
        let type = String(cString: n.objCType)
        if type == "d" || type == "f" {
            return n.doubleValue.isFinite ? .double(n.doubleValue) : nil
        }
        if type == "Q" || type == "L" || type == "I", Int64(exactly: n.uint64Value) == nil {
            return .double(n.doubleValue)
        }
        return .int64(n.int64Value)
    }

    /// The value CloudKit hands out for a FieldValue; assets through `asset`.
    static func present(_ f: FieldValue, asset: (Asset) -> CKAsset) -> any CKRecordValueProtocol {
        switch f {
        case .string(let s): return s
        case .int64(let i): return NSNumber(value: i)
        case .double(let d): return NSNumber(value: d)
        case .date(let t): return t.date
        case .bytes(let b): return Data(b)
        case .location(let l): return location(l)
        case .reference(let r): return reference(r)
        case .asset(let a): return asset(a)
        case .list(let items):
            switch items.first {
            case .string?: return items.compactMap { present($0, asset: asset) as? String }
            case .int64?, .double?: return items.compactMap { present($0, asset: asset) as? NSNumber }
            case .date?: return items.compactMap { present($0, asset: asset) as? Date }
            case .bytes?: return items.compactMap { present($0, asset: asset) as? Data }
            case .location?: return items.compactMap { present($0, asset: asset) as? CLLocation }
            case .reference?: return items.compactMap { present($0, asset: asset) as? CKReference }
            case .asset?: return items.compactMap { present($0, asset: asset) as? CKAsset }
            case .list?, nil: return [String]()
            }
        }
    }

    /// The value a record keeps for what was assigned: CloudKit's presented form when the value
    /// converts, otherwise the value itself (the save then fails with invalidArguments naming
    /// the field). Assets and arrays of assets are kept as they are.
    static func normalize(_ v: any CKRecordValueProtocol) -> any CKRecordValueProtocol {
        if v is CKAsset || v is [CKAsset] { return v }
        guard let f = field(v, asset: { _ in nil }) else { return v }
        return present(f, asset: { CKAsset(stored: $0, file: nil) })
    }

    /// CLLocation → Location.
    static func location(_ l: CLLocation) -> Location {
        Location(
            latitude: l.coordinate.latitude, longitude: l.coordinate.longitude, altitude: l.altitude,
            horizontalAccuracy: l.horizontalAccuracy, verticalAccuracy: l.verticalAccuracy, course: l.course,
            speed: l.speed, timestamp: Timestamp(l.timestamp))
    }

    /// Location → CLLocation (a missing timestamp becomes the epoch).
    static func location(_ l: Location) -> CLLocation {
        CLLocation(
            coordinate: CLLocationCoordinate2D(latitude: l.latitude, longitude: l.longitude), altitude: l.altitude,
            horizontalAccuracy: l.horizontalAccuracy, verticalAccuracy: l.verticalAccuracy, course: l.course,
            speed: l.speed, timestamp: l.timestamp?.date ?? Date(timeIntervalSince1970: 0))
    }

    /// CKRecord.Reference → Reference.
    static func reference(_ r: CKReference) -> Reference {
        Reference(recordID: r.recordID.cirrus, action: r.referenceAction == .deleteSelf ? .deleteSelf : .none)
    }

    /// Reference → CKRecord.Reference.
    static func reference(_ r: Reference) -> CKReference {
        CKReference(recordID: CKRecordID(r.recordID), action: r.action == .deleteSelf ? .deleteSelf : .none)
    }
}

// PropertyListRecords: records from a property list (XML or binary) holding an array of record
// dictionaries shaped like Web Services JSON records. Each plist value is turned into the
// equivalent JSON value (Date → milliseconds, Data → base64, <integer>/<real> kept apart) and
// read by Record(webServicesJSON:), so both formats share one set of rules.

import Foundation
import RecordModel

enum PropertyListRecords {
    struct NotAnArray: Error, CustomStringConvertible {
        var description: String { "the top level is not an array" }
    }

    /// One result per array element.
    static func decode(_ data: Data) throws -> [Result<Record, Rejection>] {
        let root = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        guard let items = root as? [Any] else { throw NotAnArray() }
        return items.map { item in
            guard let json = jsonValue(item) else { return .failure(Rejection("element is not a property-list value")) }
            do throws(WebServicesJSONError) {
                return .success(try Record(webServicesJSON: json))
            } catch {
                return .failure(Rejection(error.message))
            }
        }
    }

    static func jsonValue(_ v: Any) -> JSONValue? {
        switch v {
        case let s as String: return .string(s)
        case let d as Date: return .integer(Timestamp(d).millisecondsSince1970)
        case let d as Data: return .string(d.base64EncodedString())
        case let a as [Any]:
            var out: [JSONValue] = []
            for x in a {
                guard let j = jsonValue(x) else { return nil }
                out.append(j)
            }
            return .array(out)
        case let m as [String: Any]:
            var out: [(String, JSONValue)] = []
            for k in m.keys.sorted() {
                guard let x = m[k], let j = jsonValue(x) else { return nil }
                out.append((k, j))
            }
            return .object(out)
        case let n as NSNumber:
            let t = String(cString: n.objCType)
            if t == "d" || t == "f" { return .number(n.doubleValue) }
            if t == "c" || t == "B" { return .bool(n.boolValue) }
            return .integer(n.int64Value)
        case let i as Int: return .integer(Int64(i))
        case let d as Double: return .number(d)
        case let b as Bool: return .bool(b)
        default: return nil
        }
    }
}

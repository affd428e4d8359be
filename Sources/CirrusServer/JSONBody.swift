// JSONBody: reading a request's JSON with the path of every value, so that a bad request
// names where in the body the problem is (`query.filterBy[1].comparator: expected a string, found
// a number`). Nothing here knows what the values mean.

import RecordModel

/// A value inside the request body and its path (`records[2].recordName`); `value` is nil when the
/// member is absent.
struct BodyNode {
    let value: JSONValue?
    let path: String

    subscript(key: String) -> BodyNode {
        BodyNode(value: value?[key], path: path.isEmpty ? key : "\(path).\(key)")
    }

    var isPresent: Bool {
        if case .none = value { return false }
        if case .null? = value { return false }
        return true
    }

    func fail(_ message: String) -> WebServicesError {
        WebServicesError(.badRequest, path.isEmpty ? message : "\(path): \(message)")
    }

    private func expected(_ what: String) -> WebServicesError {
        guard let value else { return fail("missing; expected \(what)") }
        let kind = value.kindName
        let article = kind == "null" ? "" : (kind.first.map { "aeiou".contains($0) } == true ? "an " : "a ")
        return fail("expected \(what), found \(article)\(kind)")
    }

    func string() throws(WebServicesError) -> String {
        guard let s = value?.stringValue else { throw expected("a string") }
        return s
    }

    func optionalString() throws(WebServicesError) -> String? { isPresent ? try string() : nil }

    func int(in range: ClosedRange<Int64>) throws(WebServicesError) -> Int64 {
        guard case .integer(let i)? = value else { throw expected("an integer") }
        guard range.contains(i) else { throw fail("\(i) is outside \(range.lowerBound)…\(range.upperBound)") }
        return i
    }

    func optionalInt(in range: ClosedRange<Int64>) throws(WebServicesError) -> Int64? {
        isPresent ? try int(in: range) : nil
    }

    func bool(default d: Bool) throws(WebServicesError) -> Bool {
        guard isPresent else { return d }
        guard case .bool(let b)? = value else { throw expected("true or false") }
        return b
    }

    /// The elements of an array (absent: empty), at most `limit` of them.
    func array(limit: Int) throws(WebServicesError) -> [BodyNode] {
        guard isPresent else { return [] }
        guard case .array(let items)? = value else { throw expected("an array") }
        guard items.count <= limit else { throw fail("\(items.count) elements; the limit is \(limit)") }
        return items.enumerated().map { BodyNode(value: $1, path: "\(path)[\($0)]") }
    }

    func strings(limit: Int) throws(WebServicesError) -> [String]? {
        guard isPresent else { return nil }
        var out: [String] = []
        for e in try array(limit: limit) { out.append(try e.string()) }
        return out
    }

    /// Reads the value with a RecordModel reader, prefixing its error with the path.
    func decode<T>(_ read: (JSONValue) throws(WebServicesJSONError) -> T) throws(WebServicesError) -> T {
        guard let value else { throw fail("missing") }
        do throws(WebServicesJSONError) {
            return try read(value)
        } catch {
            throw fail(error.message)
        }
    }

    /// A `zoneID` object (absent: nil).
    func zoneID() throws(WebServicesError) -> ZoneID? {
        guard isPresent else { return nil }
        return try decode { (j) throws(WebServicesJSONError) in try ZoneID(webServicesJSON: j) }
    }
}

/// The parsed body of a request: a JSON object (an empty body is `{}`).
struct JSONBody {
    let root: BodyNode

    init(_ bytes: [UInt8], method: String) throws(WebServicesError) {
        if bytes.isEmpty {
            root = BodyNode(value: .object([]), path: "")
            return
        }
        let json: JSONValue
        do throws(JSONError) {
            json = try bytes.withUnsafeBufferPointer { (b) throws(JSONError) in try JSONValue.parse(bytes: b) }
        } catch {
            throw WebServicesError(.badRequest, "the body is not JSON: \(error)")
        }
        guard case .object = json else {
            throw WebServicesError(.badRequest, "the body must be a JSON object, not \(json.kindName)")
        }
        root = BodyNode(value: json, path: "")
    }

    subscript(key: String) -> BodyNode { root[key] }
}

// Reading the query parts of a CloudKit Web Services request (CKQUERY.md §5): one `filterBy`
// filter and one `sortBy` descriptor. Writing filters is in FieldValue+Description.swift.
//
//   {"fieldName": "kind", "comparator": "EQUALS", "fieldValue": {"value": "cafe", "type": "STRING"}}
//   {"fieldName": "location", "comparator": "NEAR", "fieldValue": {"value": {"latitude": …, "longitude": …}},
//    "distance": 5000}                                   (metres)
//   {"fieldName": "population", "ascending": false}
//   {"fieldName": "location", "relativeLocation": {"value": {"latitude": …, "longitude": …}}}
//
// These readers check structure only; whether CloudKit accepts the filter is the checker's
// decision (a filter list goes back through `QueryFilter.predicateFormat` and the checker).
// Error messages name the member, so a caller can prefix the path inside its body.

extension QueryFilter {
    /// Reads one `filterBy` element.
    public init(webServicesJSON json: JSONValue) throws(WebServicesJSONError) {
        guard case .object = json else { throw WebServicesJSONError("a filter is an object, not \(json.kindName)") }
        guard let name = json["fieldName"]?.stringValue else {
            throw WebServicesJSONError("missing string \"fieldName\"")
        }
        guard let c = json["comparator"]?.stringValue else {
            throw WebServicesJSONError("missing string \"comparator\"")
        }
        guard let comparator = Comparator(rawValue: c) else {
            throw WebServicesJSONError("\"comparator\": unknown comparator \"\(c)\"")
        }
        guard let v = json["fieldValue"] else { throw WebServicesJSONError("missing \"fieldValue\"") }
        let value: FieldValue
        do throws(WebServicesJSONError) {
            value = try FieldValue(webServicesJSON: v)
        } catch {
            throw WebServicesJSONError("\"fieldValue\": \(error.message)")
        }
        var distance: Double? = nil
        if let d = json["distance"] {
            guard let m = d.doubleValue, m.isFinite, m >= 0 else {
                throw WebServicesJSONError("\"distance\" must be a non-negative number of metres")
            }
            distance = m
        }
        if comparator == .near && distance == nil {
            throw WebServicesJSONError("a NEAR filter needs \"distance\" (metres)")
        }
        self.init(fieldName: name, comparator: comparator, fieldValue: value, distance: distance)
    }
}

extension SortDescriptor {
    /// Reads one `sortBy` element: a field with `ascending` (default true), or a Location field
    /// with `relativeLocation` (nearest first).
    public init(webServicesJSON json: JSONValue) throws(WebServicesJSONError) {
        guard case .object = json else { throw WebServicesJSONError("a sort is an object, not \(json.kindName)") }
        guard let name = json["fieldName"]?.stringValue else {
            throw WebServicesJSONError("missing string \"fieldName\"")
        }
        if let rel = json["relativeLocation"] {
            let v: FieldValue
            do throws(WebServicesJSONError) {
                v = try FieldValue(webServicesJSON: rel)
            } catch {
                throw WebServicesJSONError("\"relativeLocation\": \(error.message)")
            }
            guard case .location(let l) = v else {
                throw WebServicesJSONError("\"relativeLocation\" must be a LOCATION value")
            }
            self = .distance(field: name, from: l)
            return
        }
        var ascending = true
        if let a = json["ascending"] {
            guard case .bool(let b) = a else { throw WebServicesJSONError("\"ascending\" must be true or false") }
            ascending = b
        }
        self = .field(name, ascending: ascending)
    }

    /// The `sortBy` element.
    public var webServicesJSON: JSONValue {
        switch self {
        case .field(let f, let asc): .object([("fieldName", .string(f)), ("ascending", .bool(asc))])
        case .distance(let f, let from):
            .object([("fieldName", .string(f)), ("relativeLocation", FieldValue.location(from).webServicesJSON)])
        }
    }
}

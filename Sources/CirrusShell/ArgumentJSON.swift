// Predicate arguments as JSON, for `cirrus check --arg` and JSON Lines input.
//
// An argument is a Web Services field value — `{"type": "LOCATION", "value": {"latitude": 48.85,
// "longitude": 2.29}}` — or `{"type": "KEY", "value": "fieldName"}` for `%K`. As a shorthand a
// bare JSON string, number or array stands for the value with its obvious type.

import RecordModel

/// An argument that is not valid JSON or not a valid value, with what is wrong.
public struct ArgumentError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, quoting the argument (`argument {…}: …`).
    public var message: String
    /// An error with `message`.
    public init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}

extension PredicateArgument {
    /// Reads an argument from its JSON text.
    public init(argumentJSON text: String) throws(ArgumentError) {
        let json: JSONValue
        do {
            json = try JSONValue.parse(text)
        } catch {
            throw ArgumentError("argument \(text) is not valid JSON: \(error)")
        }
        try self.init(argumentJSON: json)
    }

    /// Reads an argument from parsed JSON.
    public init(argumentJSON json: JSONValue) throws(ArgumentError) {
        if case .object = json, json["type"]?.stringValue?.uppercased() == "KEY" {
            guard let k = json["value"]?.stringValue else {
                throw ArgumentError("a KEY argument needs a string \"value\" (the field name)")
            }
            self = .key(k)
            return
        }
        do {
            if case .object = json {
                self = .value(try FieldValue(webServicesJSON: json))
            } else {
                self = .value(try FieldValue(webServicesJSONValue: json, type: nil))
            }
        } catch {
            throw ArgumentError("argument \(json.jsonText): \(error.message)")
        }
    }

    /// The argument as JSON (`{"type", "value"}`).
    public var argumentJSON: JSONValue {
        switch self {
        case .key(let k): .object([("type", .string("KEY")), ("value", .string(k))])
        case .value(let v): v.webServicesJSON
        }
    }
}

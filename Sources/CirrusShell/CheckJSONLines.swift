// `cirrus check --jsonl`: one request per input line, one verdict per output line.
//
// Input line: `{"predicate": "...", "args": [ARG, …], "variables": {"NAME": ARG}, "recordType":
// "T"}` (all but predicate optional). Output line: the verdict object of CheckReport plus
// `"line": N`. A line that is not a valid request yields `{"line": N, "accepted": false,
// "error": {"message": …, "kind": "input"}}` and processing goes on. Blank lines are skipped.

import QueryChecker
import RecordModel

/// `cirrus check --jsonl`: one request per input line, one verdict per output line.
///
/// A request is `{"predicate": "…", "args": [ARG, …], "variables": {"NAME": ARG},
/// "recordType": "T"}` (all but `predicate` optional; an argument as in
/// `PredicateArgument.init(argumentJSON:)`). `args` replaces the base context's arguments,
/// `variables` add to its variables.
///
/// ```swift
/// let v = CheckJSONLines.check(line: #"{"predicate": "kind == %@", "args": ["cafe"]}"#, number: 1,
///                              base: CheckContext())
/// v?.jsonText  // {"line":1,"accepted":true,"canonical":"kind == %@",…}
/// ```
public enum CheckJSONLines {
    /// Checks one input line; `nil` for a blank line. The verdict is ``CheckReport/json`` with
    /// `"line": number` first; a line that is not a valid request gives
    /// `{"line", "accepted": false, "error": {"message", "kind": "input"}}` instead of throwing.
    public static func check(line: String, number: Int, base: CheckContext) -> JSONValue? {
        if line.allSatisfy(\.isWhitespace) { return nil }
        var out: [(String, JSONValue)] = [("line", .integer(Int64(number)))]
        do throws(ArgumentError) {
            let request: JSONValue
            do {
                request = try JSONValue.parse(line)
            } catch {
                throw ArgumentError("invalid JSON: \(error)")
            }
            guard case .object = request, let predicate = request["predicate"]?.stringValue else {
                throw ArgumentError("a request is an object with a string \"predicate\"")
            }
            var context = base
            if let args = request["args"] {
                guard case .array(let items) = args else { throw ArgumentError("\"args\" must be an array") }
                context.arguments = []
                for item in items { context.arguments.append(try PredicateArgument(argumentJSON: item)) }
            }
            if let vars = request["variables"] {
                guard case .object(let members) = vars else { throw ArgumentError("\"variables\" must be an object") }
                for (name, v) in members { context.variables[name] = try PredicateArgument(argumentJSON: v) }
            }
            if let t = request["recordType"]?.stringValue { context.recordType = t }
            let report = CheckReport(predicate: predicate, context: context)
            if case .object(let m) = report.json { out += m }
        } catch {
            out += [
                ("accepted", .bool(false)),
                ("error", .object([("message", .string(error.message)), ("kind", .string("input"))])),
            ]
        }
        return .object(out)
    }
}

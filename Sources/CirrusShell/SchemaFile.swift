// Reading schema files for commands that take `--schema FILE` (CloudKit's schema language).

import Foundation
import RecordModel

/// An error of a shell command, as text to print: a schema file it could not read or parse
/// (with the path), a bad sort spec, a bad `--database`/`--as` pair, or a query that cannot be
/// mirrored onto a Core Data model (with a caret under the predicate when it points into it).
public struct ShellError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The text to print after `cirrus COMMAND: `.
    public var message: String
    /// An error with `message`.
    public init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}

/// Schema files (CloudKit's schema language) for commands that take `--schema FILE`.
///
/// ```swift
/// let schema = try SchemaFile.load(path: "places.ckdb", environment: .production)
/// let type = try SchemaFile.recordType(nil, in: schema)  // the only type besides Users
/// ```
public enum SchemaFile {
    /// Reads and parses a schema file; errors name the file, line and column.
    public static func load(path: String, environment: Environment) throws(ShellError) -> Schema {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ShellError("\(path): cannot read the schema file (\(error.localizedDescription))")
        }
        do {
            return try Schema(schemaLanguage: text, environment: environment)
        } catch {
            throw ShellError("\(path): \(error)")
        }
    }

    /// The record type to check against: `explicit` when given (returned as is: the checker
    /// reports a type the schema does not define), else the only non-`Users` type of the
    /// schema; throws when the schema defines none or several.
    public static func recordType(_ explicit: String?, in schema: Schema) throws(ShellError) -> String {
        if let explicit { return explicit }
        let types = schema.sortedRecordTypes.map(\.name).filter { $0 != Schema.usersRecordType }
        guard types.count == 1 else {
            throw ShellError(
                "--type is required: the schema defines "
                    + "\(types.isEmpty ? "no record type" : types.joined(separator: ", "))"
            )
        }
        return types[0]
    }
}

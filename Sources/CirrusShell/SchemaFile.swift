// Reading schema files for commands that take `--schema FILE` (CloudKit's schema language).

import Foundation
import RecordModel

/// A file the shell could not read, with the path and the reason.
public struct ShellError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

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

    /// The record type to check against: `explicit` when given (it must exist), else the only
    /// non-`Users` type of the schema.
    public static func recordType(_ explicit: String?, in schema: Schema) throws(ShellError) -> String {
        if let explicit { return explicit }
        let types = schema.sortedRecordTypes.map(\.name).filter { $0 != Schema.usersRecordType }
        guard types.count == 1 else {
            throw ShellError(
                "--type is required: the schema defines \(types.isEmpty ? "no record type" : types.joined(separator: ", "))"
            )
        }
        return types[0]
    }
}

// SchemaCommands: the logic of `cirrus schema --db DIR [--export | --import FILE | --promote]`
// on a container directory: print the schema in CloudKit's schema language, import a schema
// file (add-only: types and fields are never removed or retyped), or promote development to
// production. Exit codes: 0 ok, 1 rejected / unreadable, 2 usage.

import Cirrus
import CirrusIO
import RecordLog
import RecordModel

/// `cirrus schema` as a library.
public enum SchemaCommands {
    /// What to do.
    public enum Action: Sendable, Hashable {
        /// Print the environment's schema in CloudKit's schema language (read-only).
        case export
        /// Replace the environment's schema with the schema file at this path. Add-only: every
        /// existing type and field must still be there with the same type, else the container
        /// rejects it; index options and grants are taken from the file.
        case importFile(String)
        /// Copy the development schema to production (add-only against what production has);
        /// the `environment` argument is ignored.
        case promote
    }

    /// Runs one schema action on the container `db` in `environment`. Exit 1, with the reason on
    /// stderr, when the store is missing (export), the file is unreadable, or the container
    /// rejects the schema.
    ///
    /// ```swift
    /// let out = SchemaCommands.run(db: "places", action: .export)
    /// print(out.stdout)   // DEFINE SCHEMA …
    /// ```
    public static func run(
        db: String, action: Action, environment: Environment = .development,
        fileSystem: any FileSystem = POSIXFileSystem()
    ) -> CommandOutput {
        var out = CommandOutput()
        do {
            switch action {
            case .export:
                if !fileSystem.exists(joinPath(db, environment.rawValue)) {
                    return CommandOutput(
                        stderr: "cirrus schema: \(db) has no \(environment.rawValue) store\n", exitCode: 1)
                }
                let c = try Container.open(
                    at: db, environment: environment, options: ContainerOptions(fileSystem: fileSystem, readOnly: true))
                out.stdout = c.exportSchema()
            case .importFile(let path):
                let bytes: [UInt8]
                do {
                    bytes = try fileSystem.read(path)
                } catch {
                    return CommandOutput(
                        stderr: "cirrus schema: \(path): cannot read the schema file (\(error))\n", exitCode: 1)
                }
                let c = try Container.open(
                    at: db, environment: environment, options: ContainerOptions(fileSystem: fileSystem))
                let s = try c.importSchema(String(decoding: bytes, as: UTF8.self))
                try c.close()
                let types = s.recordTypes.count
                let fields = s.recordTypes.values.reduce(0) { $0 + $1.fields.count }
                out.stdout = "imported the \(environment.rawValue) schema: \(types) record types, \(fields) fields\n"
            case .promote:
                let c = try Container.open(
                    at: db, environment: .development, options: ContainerOptions(fileSystem: fileSystem))
                let s = try c.promoteSchema()
                try c.close()
                out.stdout = "promoted the development schema to production: \(s.recordTypes.count) record types\n"
            }
        } catch {
            out.stderr = "cirrus schema: \(error)\n"
            out.exitCode = 1
        }
        return out
    }
}

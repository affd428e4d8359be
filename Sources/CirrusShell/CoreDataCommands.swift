// `cirrus coredata schema MODEL`: the CloudKit schema that Core Data's CloudKit mirroring makes
// of a model, checked against mirroring's rules — what `initializeCloudKitSchema` does, with
// `--dry-run` (print only) or `--db DIR` (add it to the container's development schema).

import Cirrus
import CirrusIO
import CoreDataMirror
import PredicateSyntax
import QueryChecker
import RecordLog
import RecordModel

/// `cirrus coredata` as a library.
public enum CoreDataCommands {
    /// Reads `model`, reports every rule it breaks (exit 1, nothing imported), otherwise prints
    /// the mirrored schema in CloudKit's schema language (`dryRun`) or adds it to the
    /// development schema of the container `db`.
    public static func schema(
        model: String, db: String?, dryRun: Bool, fileSystem: any FileSystem = POSIXFileSystem()
    )
        -> CommandOutput
    {
        let m: CoreDataModel
        do {
            m = try CoreDataModel.read(path: model)
        } catch {
            return CommandOutput(stderr: "cirrus coredata: \(error)\n", exitCode: 1)
        }
        let problems = CloudKitMirror.problems(in: m)
        if !problems.isEmpty {
            var text = "cirrus coredata: \(m.path): \(problems.count) problem\(problems.count == 1 ? "" : "s") "
            text += "for CloudKit mirroring:\n"
            for p in problems { text += "  \(p)\n" }
            return CommandOutput(stderr: text, exitCode: 1)
        }
        let mirrored = CloudKitMirror.schema(for: m)
        guard !dryRun, let db else { return CommandOutput(stdout: mirrored.schemaLanguage) }
        do {
            let c = try Container.open(
                at: db, environment: .development, options: ContainerOptions(fileSystem: fileSystem))
            let s = try c.importSchema(merged(c.schema, mirrored).schemaLanguage)
            try c.close()
            let fields = mirrored.recordTypes.values.reduce(0) { $0 + $1.fields.count }
            return CommandOutput(
                stdout:
                    "imported \(mirrored.recordTypes.count) record types (\(fields) fields) from \(m.path) into the "
                    + "development schema of \(db) (\(s.recordTypes.count) record types in all)\n")
        } catch {
            return CommandOutput(stderr: "cirrus coredata: \(db): \(error)\n", exitCode: 1)
        }
    }
}

extension CoreDataCommands {
    /// `base` with the types and fields of `mirrored` it lacks (add-only, as
    /// `initializeCloudKitSchema` is: what `base` has stays as it is).
    public static func merged(_ base: Schema, _ mirrored: Schema) -> Schema {
        var out = base
        for (name, t) in mirrored.recordTypes {
            var existing = out.recordTypes[name] ?? RecordTypeSchema(name: name)
            for (f, field) in t.fields where existing.fields[f] == nil { existing.fields[f] = field }
            out.recordTypes[name] = existing
        }
        return out
    }
}

extension QueryRequest {
    /// This request written against entity `recordType` of the Core Data model at `model`,
    /// rewritten onto the mirrored records (CloudKitMirror.rewrite): the record type, the
    /// predicate, sort fields, desiredKeys and relationship lookups. Also returns the lines
    /// saying what it became (the rewritten query, then one per lookup).
    public func mirrored(model path: String) throws(ShellError) -> (request: QueryRequest, rewritten: String) {
        let model: CoreDataModel
        do {
            model = try CoreDataModel.read(path: path)
        } catch {
            throw ShellError("\(error)")
        }
        do {
            return try mirrored(model)
        } catch {
            var text = ""
            if error.range != .none { text = Diagnostics.caret(source: predicate, range: error.range) }
            throw ShellError(text + (text.isEmpty ? "" : "error: ") + error.message)
        }
    }

    /// `mirrored(model:)` with a model already read; an error's range is in `predicate`.
    public func mirrored(
        _ model: CoreDataModel
    ) throws(MirroredQueryError) -> (request: QueryRequest, rewritten: String) {
        let tree: PredicateSyntax.Predicate
        do {
            tree = try PredicateParser.parse(predicate)
        } catch {
            throw MirroredQueryError(message: error.message, range: error.range)
        }
        let q = try CloudKitMirror.rewrite(tree, entity: recordType, model: model, variables: variables)
        func field(_ name: String) throws(MirroredQueryError) -> String {
            guard let f = CloudKitMirror.fieldName(name, entity: recordType, model: model) else {
                throw MirroredQueryError(
                    message: "\(recordType) has no attribute \"\(name)\" to sort by or fetch", range: .none)
            }
            return f
        }
        var r = self
        r.recordType = q.recordType
        r.predicate = q.formatString
        r.sorts = []
        for s in sorts {
            switch s {
            case .field(let name, let ascending): r.sorts.append(.field(try field(name), ascending: ascending))
            case .distance(let name, let from): r.sorts.append(.distance(field: try field(name), from: from))
            }
        }
        if let keys {
            var mapped: [String] = []
            for k in keys { mapped.append(try field(k)) }
            r.keys = mapped
        }
        r.lookups = q.lookups
        var line = "Core Data entity \(recordType) → \(q.recordType) WHERE \(q.formatString)"
        for l in q.lookups { line += "\n  \(l)" }
        return (r, line)
    }

    /// This request with the `$variables` of its relationship lookups bound: each lookup query
    /// runs on `db` (in the request's zone, every page) and its record names fill its variable.
    public func resolvingLookups(in db: Database) async throws(CirrusError) -> QueryRequest {
        guard !lookups.isEmpty else { return self }
        let zone = self.zone
        var r = self
        do {
            let bound = try await lookups.bindings { l in
                var records: [Record] = []
                var page = try await db.records(
                    matching: RecordQuery(recordType: l.recordType, predicate: l.predicate.formatString),
                    inZoneWith: zone, resultsLimit: 0)
                while true {
                    records += try pageRecords(page.matchResults)
                    guard let cursor = page.queryCursor else { break }
                    page = try await db.records(continuingMatchFrom: cursor, resultsLimit: 0)
                }
                return records
            }
            for (k, v) in bound { r.variables[k] = v }
        } catch let e as CirrusError {
            throw e
        } catch {
            throw CirrusError(.invalidArguments, "\(error)")
        }
        r.lookups = []
        return r
    }
}

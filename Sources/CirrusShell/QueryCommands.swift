// QueryCommands: the logic of `cirrus query` and `cirrus explain`, and the pieces the REPL shares
// with them — sort specs (`FIELD`, `-FIELD`, `FIELD@LAT,LON`), checking a query's predicate with
// the caret rendering, a page of records as an aligned table or as Web Services JSON.
//
// Exit codes: 0 ok, 1 rejected predicate / query error / unreadable container, 2 usage.

import Cirrus
import CirrusIO
import CoreDataMirror
import Foundation
import QueryChecker
import QueryExecution
import RecordLog
import RecordModel

/// A query as the command line and the REPL spell it.
///
/// ```swift
/// var r = QueryRequest(recordType: "Place", predicate: "kind == 'museum'")
/// r.sorts = [try QueryCommands.parseSort("-population")]
/// r.limit = 5
/// ```
public struct QueryRequest: Sendable {
    /// The record type to query (a Core Data entity name before `mirrored(model:)`).
    public var recordType: String
    /// The predicate's format string, as typed; checked only when the request runs.
    public var predicate: String
    /// Values for the predicate's `%@`, `%K`, … placeholders, in order.
    public var arguments: [PredicateArgument]
    /// Values for its `$NAME` variables.
    public var variables: [String: PredicateArgument]
    /// The order of the results; the first may be a nearest-first `.distance` sort.
    public var sorts: [RecordModel.SortDescriptor]
    /// Page size; 0 lets the engine choose.
    public var limit: Int
    /// desiredKeys (nil: whole records).
    public var keys: [String]?
    /// nil: every zone of the database.
    public var zone: ZoneID?
    /// Core Data to-many tests still to answer (`resolvingLookups(in:)` binds their `$variables`).
    public var lookups: [RelationshipLookup] = []

    /// A request; by default every record of `recordType`, unsorted, whole records, every zone.
    public init(
        recordType: String, predicate: String = "TRUEPREDICATE", arguments: [PredicateArgument] = [],
        variables: [String: PredicateArgument] = [:], sorts: [RecordModel.SortDescriptor] = [], limit: Int = 0,
        keys: [String]? = nil, zone: ZoneID? = nil
    ) {
        self.recordType = recordType
        self.predicate = predicate
        self.arguments = arguments
        self.variables = variables
        self.sorts = sorts
        self.limit = limit
        self.keys = keys
        self.zone = zone
    }

    /// The keys to fetch: `keys` plus the location field of a nearest-first sort (so the table can
    /// show each record's distance).
    public var fetchKeys: [String]? {
        guard var k = keys else { return nil }
        if case .distance(let f, _)? = sorts.first, !k.contains(f) { k.append(f) }
        return k
    }

    /// The façade's query value.
    public var recordQuery: RecordQuery {
        RecordQuery(
            recordType: recordType, predicate: predicate, arguments: arguments, variables: variables,
            sortDescriptors: sorts)
    }
}

/// `cirrus query` / `cirrus explain` as a library.
///
/// Each command opens the container read-only, checks the predicate against the schema (a
/// rejection goes to stderr with a caret under the offending part, exit 1) and returns its
/// output and exit code instead of printing.
///
/// ```swift
/// var r = QueryRequest(recordType: "Place", predicate: "kind == %@", arguments: ["museum"])
/// r.sorts = [try QueryCommands.parseSort("location@48.8584,2.2945")]
/// r.limit = 3
/// let out = await QueryCommands.query(db: "places", request: r, json: false)
/// print(out.stdout)  // recordName, km, … then "3 records" and "cursor: …" when there are more
/// let plan = await QueryCommands.explain(db: "places", request: r)
/// ```
public enum QueryCommands {
    /// Parses a sort spec: `name` (ascending), `-population` (descending), `location@48.85,2.29`
    /// (nearest first from that point) or `location@$here` (a bound location variable).
    /// Throws a ``ShellError`` naming the spec when the field is not a plain name, the point
    /// is not `LATITUDE,LONGITUDE` within range, or the variable is not a bound location.
    public static func parseSort(
        _ spec: String, variables: [String: PredicateArgument] = [:]
    ) throws(ShellError) -> RecordModel.SortDescriptor {
        let s = spec.trimmingCharacters(in: .whitespaces)
        if let at = s.firstIndex(of: "@") {
            let field = String(s[..<at])
            let point = String(s[s.index(after: at)...])
            guard isFieldName(field) else { throw ShellError("sort: \"\(field)\" is not a field name (in \(spec))") }
            if point.hasPrefix("$") {
                guard case .value(.location(let l))? = variables[String(point.dropFirst())] else {
                    throw ShellError(
                        "sort: \(point) is not a bound location (bind one with: let \(point.dropFirst()) = location "
                            + "LAT LON)"
                    )
                }
                return .distance(field: field, from: l)
            }
            let parts = point.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard parts.count == 2, let lat = parts[0], let lon = parts[1], (-90...90).contains(lat),
                (-180...180).contains(lon)
            else {
                throw ShellError(
                    "sort: \(spec): a nearest-first sort is FIELD@LATITUDE,LONGITUDE, e.g. location@48.8584,2.2945")
            }
            return .distance(field: field, from: Location(latitude: lat, longitude: lon))
        }
        let desc = s.hasPrefix("-")
        let field = desc ? String(s.dropFirst()) : (s.hasPrefix("+") ? String(s.dropFirst()) : s)
        guard isFieldName(field) else { throw ShellError("sort: \"\(spec)\" is not FIELD, -FIELD or FIELD@LAT,LON") }
        return .field(field, ascending: !desc)
    }

    static func isFieldName(_ s: String) -> Bool {
        guard let f = s.unicodeScalars.first, f.properties.isAlphabetic || f == "_" else { return false }
        return s.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" }
    }

    /// Checks the request's predicate against `db`'s schema; nil when accepted, else the
    /// rejection with its caret (relative to the predicate text).
    public static func precheck(_ r: QueryRequest, in db: Database) -> CheckReport? {
        var ctx = CheckContext(schema: db.schema, recordType: r.recordType, now: Timestamp(Date()))
        ctx.arguments = r.arguments
        ctx.variables = r.variables
        let report = CheckReport(predicate: r.predicate, context: ctx)
        return report.isAccepted ? nil : report
    }

    /// `cirrus query --db DIR --type T PREDICATE …`: one page, as a table (with the cursor token
    /// after it) or as `{"records": […], "cursor": …}`. With `cursor`, the page after that
    /// token (which must belong to the same query). Exit 2 for a bad `target`; exit 1, with the
    /// reason on stderr, when the environment has no store, the container cannot be opened,
    /// the predicate is rejected or the query fails.
    public static func query(
        db: String, request unresolved: QueryRequest, cursor token: String? = nil, json: Bool, width: Int = 100,
        target: DatabaseTarget = DatabaseTarget(), fileSystem: any FileSystem = POSIXFileSystem()
    ) async -> CommandOutput {
        switch open(db, target, fileSystem, "query") {
        case .database(let d): return await query(d, request: unresolved, cursor: token, json: json, width: width)
        case .failed(let out): return out
        }
    }

    /// ``query(db:request:cursor:json:width:target:fileSystem:)`` on a database of a container
    /// the caller opened (a directory's, or PostgreSQL's: `cirrus query --postgres`).
    public static func query(
        _ database: Database, request unresolved: QueryRequest, cursor token: String? = nil, json: Bool,
        width: Int = 100
    ) async -> CommandOutput {
        let request: QueryRequest
        switch await prepare(unresolved, database, "query") {
        case .ready(_, let r): request = r
        case .failed(let out): return out
        }
        do {
            let page: (matchResults: [(RecordID, Result<Record, CirrusError>)], queryCursor: QueryCursor?)
            if let token {
                let c = try database.cursor(fromToken: token, expecting: request.recordQuery)
                page = try await database.records(
                    continuingMatchFrom: c, desiredKeys: request.fetchKeys, resultsLimit: request.limit)
            } else {
                page = try await database.records(
                    matching: request.recordQuery, inZoneWith: request.zone, desiredKeys: request.fetchKeys,
                    resultsLimit: request.limit)
            }
            let records = try pageRecords(page.matchResults)
            let next = page.queryCursor.map { database.token(for: $0) }
            if json { return CommandOutput(stdout: pageJSON(records, cursor: next).jsonText + "\n") }
            var text = table(
                records, keys: request.keys, schema: database.schema.recordTypes[request.recordType],
                sorts: request.sorts, width: width)
            text += "\(records.count) record\(records.count == 1 ? "" : "s")\n"
            if let next { text += "cursor: \(next)\n" }
            return CommandOutput(stdout: text)
        } catch {
            return CommandOutput(stderr: "cirrus query: \(error)\n", exitCode: 1)
        }
    }

    /// `cirrus explain …`: plans and runs the first page, prints `QueryExplanation.text`
    /// (after one `lookup $VAR: N records` line per Core Data relationship lookup). Exit codes
    /// as for `query(db:request:cursor:json:width:target:fileSystem:)`.
    public static func explain(
        db: String, request unresolved: QueryRequest, target: DatabaseTarget = DatabaseTarget(),
        fileSystem: any FileSystem = POSIXFileSystem()
    ) async -> CommandOutput {
        switch open(db, target, fileSystem, "explain") {
        case .database(let d): return await explain(d, request: unresolved)
        case .failed(let out): return out
        }
    }

    /// ``explain(db:request:target:fileSystem:)`` on a database of a container the caller opened.
    public static func explain(_ database: Database, request unresolved: QueryRequest) async -> CommandOutput {
        let request: QueryRequest
        switch await prepare(unresolved, database, "explain") {
        case .ready(_, let r): request = r
        case .failed(let out): return out
        }
        do {
            let e = try await database.explain(
                request.recordQuery, inZoneWith: request.zone, resultsLimit: request.limit)
            return CommandOutput(stdout: lookupCounts(unresolved, request) + e.text)
        } catch {
            return CommandOutput(stderr: "cirrus explain: \(error)\n", exitCode: 1)
        }
    }

    /// `lookup $CD_tags_1: 3 records` for each relationship lookup a mirrored request ran.
    static func lookupCounts(_ unresolved: QueryRequest, _ resolved: QueryRequest) -> String {
        var out = ""
        for l in unresolved.lookups {
            guard case .value(.list(let ids))? = resolved.variables[l.variable] else { continue }
            out += "lookup $\(l.variable): \(ids.count) \(l.entity) record\(ids.count == 1 ? "" : "s")\n"
        }
        return out
    }

    enum Opened {
        case database(Database)
        case failed(CommandOutput)
    }

    enum Prepared {
        case ready(Database, QueryRequest)
        case failed(CommandOutput)
    }

    /// The steps `query` and `explain` share before they run (on the database opened read-only):
    /// resolve the request's Core Data lookups, check its predicate. `name` prefixes each error
    /// message.
    static func prepare(_ unresolved: QueryRequest, _ database: Database, _ name: String) async -> Prepared {
        let request: QueryRequest
        do {
            request = try await unresolved.resolvingLookups(in: database)
        } catch {
            return .failed(CommandOutput(stderr: "cirrus \(name): \(error)\n", exitCode: 1))
        }
        if let rejected = precheck(request, in: database) {
            return .failed(CommandOutput(stderr: rejected.text, exitCode: 1))
        }
        return .ready(database, request)
    }

    static func open(_ db: String, _ target: DatabaseTarget, _ fs: any FileSystem, _ name: String) -> Opened {
        let scope: Database.Scope
        switch target.scope() {
        case .success(let s): scope = s
        case .failure(let e): return .failed(CommandOutput(stderr: "cirrus \(name): \(e)\n", exitCode: 2))
        }
        guard fs.exists(joinPath(db, target.environment.rawValue)) else {
            return .failed(
                CommandOutput(
                    stderr: "cirrus \(name): \(db) has no \(target.environment.rawValue) store\n", exitCode: 1))
        }
        do {
            let c = try StoreCommands.openContainer(db, target, readOnly: true, fileSystem: fs)
            return .database(c.database(scope, as: target.identity))
        } catch {
            return .failed(CommandOutput(stderr: "cirrus \(name): \(error)\n", exitCode: 1))
        }
    }

    // MARK: rendering

    /// `{"records": [Web Services records], "cursor": token or null}`.
    public static func pageJSON(_ records: [Record], cursor: String?) -> JSONValue {
        .object([("records", .array(records.map(\.webServicesJSON))), ("cursor", cursor.map { .string($0) } ?? .null)])
    }

    /// The columns of a page: `recordName`, `km` for a nearest-first sort, then `keys` (or the
    /// type's fields: `name`/`title` first, the rest by name; assets left out).
    public static func table(
        _ records: [Record], keys: [String]?, schema: RecordTypeSchema?, sorts: [RecordModel.SortDescriptor], width: Int
    ) -> String {
        var fields: [String]
        if let keys {
            fields = keys
        } else {
            var names = Set<String>()
            if let schema { for f in schema.fields.values where f.type.scalar != .asset { names.insert(f.name) } }
            for r in records { for (k, v) in r.fields where v.scalarType != .asset { names.insert(k) } }
            fields = names.sorted { a, b in
                let pa = ["name", "title"].firstIndex(of: a) ?? 2
                let pb = ["name", "title"].firstIndex(of: b) ?? 2
                return pa != pb ? pa < pb : compareUTF8(a, b) < 0
            }
        }
        var header = ["recordName"]
        var from: (String, Location)? = nil
        if case .distance(let f, let l)? = sorts.first {
            from = (f, l)
            header.append("km")
        }
        header += fields
        var right: Set<Int> = from == nil ? [] : [1]
        let offset = header.count - fields.count
        for (i, f) in fields.enumerated() {
            let vals = records.compactMap { $0.fields[f] }
            if !vals.isEmpty, vals.allSatisfy({ $0.scalarType?.isNumeric == true && !$0.isList }) {
                right.insert(offset + i)
            }
        }
        let rows = records.map { r -> [String] in
            var row = [
                r.recordID.zoneID.isDefaultZone
                    ? r.recordID.recordName : "\(r.recordID.recordName) (\(r.recordID.zoneID.zoneName))"
            ]
            if let (f, l) = from {
                if case .location(let p)? = r.fields[f] {
                    row.append(String(format: "%.3f", greatCircleKm(l, p)))
                } else {
                    row.append("")
                }
            }
            for f in fields { row.append(r.fields[f]?.cellText ?? "") }
            return row
        }
        return TextTable(header: header, rows: rows, rightAligned: right).render(width: width)
    }

    /// Great-circle distance in kilometres on the mean-radius sphere (the engine's model).
    public static func greatCircleKm(_ a: Location, _ b: Location) -> Double {
        let r = 6371.0088
        let p1 = a.latitude * .pi / 180, p2 = b.latitude * .pi / 180
        let dp = p2 - p1, dl = (b.longitude - a.longitude) * .pi / 180
        let h = sin(dp / 2) * sin(dp / 2) + cos(p1) * cos(p2) * sin(dl / 2) * sin(dl / 2)
        return 2 * r * asin(min(1, h.squareRoot()))
    }
}

/// The records of a page. CloudKit's shape allows an error per match; one is reported with the
/// record it belongs to, never dropped from the output.
func pageRecords(_ results: [(RecordID, Result<Record, CirrusError>)]) throws(CirrusError) -> [Record] {
    var records: [Record] = []
    records.reserveCapacity(results.count)
    for (id, result) in results {
        switch result {
        case .success(let r): records.append(r)
        case .failure(let e): throw CirrusError(e.code, "record \(id.recordName): \(e.message)")
        }
    }
    return records
}

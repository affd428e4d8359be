// `cirrus query` and `cirrus explain`: one page of a query, or its plan. Logic: CirrusShell's
// QueryCommands; this file only maps options.

import ArgumentParser
import CirrusShell
import RecordModel

/// The options `query` and `explain` share.
struct QueryOptions: ParsableArguments {
    @OptionGroup var store: StoreOptions

    @Option(name: .customLong("type"), help: ArgumentHelp("The record type to query.", valueName: "TYPE"))
    var recordType: String

    @Argument(help: "The predicate format string (default TRUEPREDICATE).")
    var predicate: String = "TRUEPREDICATE"

    @Option(
        name: .customLong("arg"),
        help: ArgumentHelp("An argument for the next placeholder, as JSON (as in `cirrus check`).", valueName: "JSON"))
    var arguments: [String] = []

    @Option(name: .customLong("var"), help: ArgumentHelp("A $variable binding: NAME=JSON.", valueName: "NAME=JSON"))
    var variables: [String] = []

    @Option(
        parsing: .unconditionalSingleValue,
        help: ArgumentHelp(
            "Sort: FIELD (ascending), -FIELD (descending) or FIELD@LAT,LON (nearest first); repeat for more.",
            valueName: "SPEC"))
    var sort: [String] = []

    @Option(help: ArgumentHelp("Page size (default: the engine chooses, 100).", valueName: "N"))
    var limit: Int = 0

    @Option(help: ArgumentHelp("desiredKeys, comma-separated ('' for system fields only).", valueName: "a,b"))
    var keys: String?

    @Option(help: ArgumentHelp("Only this zone (default: every zone of the database).", valueName: "ZONE"))
    var zone: String?

    @Option(
        help: ArgumentHelp(
            "A Core Data model: --type names an entity and the predicate, sorts and keys its attributes; "
                + "they are rewritten onto the CD_ records CloudKit mirroring stores (docs/coredata.md).",
            valueName: "MODEL"))
    var coredata: String?

    @OptionGroup var target: DatabaseOptions

    func validate() throws {
        if limit < 0 || limit > 10_000 { throw ValidationError("--limit is from 1 to 10000") }
    }

    func request() throws -> QueryRequest {
        var r = QueryRequest(recordType: recordType, predicate: predicate, limit: limit)
        do {
            for a in arguments { r.arguments.append(try PredicateArgument(argumentJSON: a)) }
            for v in variables {
                guard let eq = v.firstIndex(of: "=") else { throw ValidationError("--var takes NAME=JSON, got \(v)") }
                r.variables[String(v[..<eq])] = try PredicateArgument(argumentJSON: String(v[v.index(after: eq)...]))
            }
            r.sorts = try sort.map { (s) throws(ShellError) in try QueryCommands.parseSort(s, variables: r.variables) }
        } catch let e as ArgumentError {
            throw ValidationError(e.message)
        } catch let e as ShellError {
            throw ValidationError(e.message)
        }
        r.keys = keys.map {
            $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        r.zone = zone.map { ZoneID(zoneName: $0) }
        return r
    }

    /// `request()`, rewritten onto the mirrored records when `--coredata` names a model, and the
    /// line that says what it became (nil without `--coredata`).
    func resolvedRequest() throws -> (QueryRequest, String?) {
        let r = try request()
        guard let coredata else { return (r, nil) }
        do {
            let (mirrored, line) = try r.mirrored(model: coredata)
            return (mirrored, line)
        } catch {
            printError(error.message)
            throw ExitCode(1)
        }
    }
}

struct QueryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Run a query and print one page of records.",
        discussion: """
            Prints an aligned table (fitting the terminal) and, when more records follow, the cursor \
            token to pass to --cursor for the next page. With --json: {"records": [Web Services \
            records], "cursor": TOKEN or null}. Exit status: 0 ok, 1 rejected predicate or query \
            error, 2 usage.

            Examples:
              cirrus query --db places --type Place "kind == 'museum'" --sort -population --limit 5
              cirrus query --db places --type Place "distanceToLocation:fromLocation:(location, %@) < 2" \\
                  --arg '{"type": "LOCATION", "value": {"latitude": 48.8584, "longitude": 2.2945}}' \\
                  --sort location@48.8584,2.2945 --keys name,kind
            """)

    @OptionGroup var options: QueryOptions

    @Option(help: ArgumentHelp("Continue from this cursor token (same query).", valueName: "TOKEN"))
    var cursor: String?

    @Flag(help: "Print {\"records\": […], \"cursor\": …} as JSON.")
    var json = false

    func run() async throws {
        let (r, rewritten) = try options.resolvedRequest()
        if let rewritten { printError(rewritten) }
        let target = options.target.target(zone: nil)
        if options.store.postgres != nil {
            let (cursor, json, width) = (cursor, json, terminalWidth())
            try finish(
                await options.store.withDatabase(target, command: "query") { db in
                    await QueryCommands.query(db, request: r, cursor: cursor, json: json, width: width)
                })
            return
        }
        try finish(
            await QueryCommands.query(
                db: options.store.db, request: r, cursor: cursor, json: json, width: terminalWidth(), target: target))
    }
}

struct ExplainCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "explain",
        abstract: "Show a query's plan, estimated and actual rows, and the index options it needs.",
        discussion: """
            Plans the query on the container's statistics, runs its first page, and prints the plan \
            tree with estimated and actual row counts, the alternatives rejected, and the index \
            options the query needs (+ present, - missing in the current schema). Same options as \
            `cirrus query`. Exit status: 0 ok, 1 rejected predicate or query error, 2 usage.

            Example:
              cirrus explain --db places --type Place "kind == 'cafe' AND population > 1000" \\
                --sort -population --limit 10
            """)

    @OptionGroup var options: QueryOptions

    func run() async throws {
        let (r, rewritten) = try options.resolvedRequest()
        let target = options.target.target(zone: nil)
        var out =
            options.store.postgres != nil
            ? await options.store.withDatabase(target, command: "explain") { db in
                await QueryCommands.explain(db, request: r)
            }
            : await QueryCommands.explain(db: options.store.db, request: r, target: target)
        if let rewritten { out.stdout = rewritten + "\n" + out.stdout }
        try finish(out)
    }
}

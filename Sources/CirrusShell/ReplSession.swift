// ReplSession: the `cirrus repl` interpreter — lines in, text out — so tests drive it by
// transcript without a terminal. Owns the session state (database, zone, user, current type,
// $variables, the last query and its cursor, timing and JSON toggles) and command dispatch.
// Command bodies: ReplSession+Query.swift (check, query, next, explain, let) and
// ReplSession+Records.swift (types, schema, get, save, delete, zones, switching, import);
// help texts: ReplHelp.swift. The terminal (prompt, libedit, history) lives in the CLI.
//
// Nothing typed may crash the session or damage the database: every command reports errors as
// text (with a caret under the offending part of the line) and leaves the state as it was.

import Cirrus
import CoreDataMirror
import Foundation
import PredicateSyntax
import QueryChecker
import QueryExecution
import RecordModel

/// One REPL session over a container.
///
/// Each line is one command (`help` lists them); a line that fails comes back as text with a
/// caret under the offending part of the line and leaves the session as it was.
///
/// ```swift
/// var s = ReplSession(container: try Container.open(at: dir), identity: .user("_demo"))
/// _ = await s.execute("let here = location 48.8584 2.2945")
/// let out = await s.execute("query Place where kind == 'museum' sort location@$here limit 3")
/// print(out.text)  // a table (recordName, km, name, …), then "3 records; more: type `next`"
/// // out.isError: a failed line (say, a rejected predicate) whose text is the line, a caret,
/// // "error: …" and "hint: …"
/// _ = await s.execute("next")  // the following page, from the last query's cursor
/// ```
public struct ReplSession: Sendable {
    /// What one line produced.
    public struct Output: Sendable {
        /// What to print: the command's output, or the rendered error (the line with a caret,
        /// `error: …` and `hint: …`); empty for a blank line or a comment (`#`, `--`).
        public var text: String
        /// Whether the line failed (scripts exit 1 when any line failed).
        public var isError: Bool
        /// `quit` was typed.
        public var quit: Bool
    }

    /// The container the session was opened on (its environment is fixed for the session).
    public let container: Container
    /// The database commands work on: public, or a user's private one (`database`).
    public var scope: Database.Scope
    /// Who queries and record commands act as (`user`), under the database's access rules;
    /// `import` writes as the container's administrator instead.
    public var identity: Identity
    /// nil: queries span every zone of the database; get/save/delete use the default zone.
    public var zone: ZoneID?
    /// The type `query`, `check` and `explain` use when none is named (`use TYPE`).
    public var currentType: String?
    /// The `$NAME` variables bound with `let`, used in predicates and in sorts.
    public var variables: [String: PredicateArgument] = [:]
    /// The Core Data model `coredata` loaded: its entities are queried on their mirrored records.
    public var coreDataModel: CoreDataModel?
    /// `timing on`: a successful `check`, `query`, `next`, `explain`, `get`, `save`, `delete`,
    /// `import`, `types` or `coredata` ends with a `time: … ms` line.
    public var timing = false
    /// `json on`: `query`, `next` and `get` print records as Web Services JSON, `check` its
    /// verdict as a JSON object.
    public var json = false
    /// Terminal width for tables.
    public var width: Int
    var lastQuery: QueryRequest?
    var lastCursor: QueryCursor?
    var pageNumber = 0

    /// A session on `container`'s `scope` database as `identity`, with tables `width` columns
    /// wide, every zone, no current type and no variables.
    public init(
        container: Container, identity: Identity = .anonymous, scope: Database.Scope = .public, width: Int = 100
    ) {
        self.container = container
        self.identity = identity
        self.scope = scope
        self.width = width
    }

    /// The database the session works on.
    public var database: Database { container.database(scope, as: identity) }

    /// The prompt: `cirrus:public/Place> ` (database, zone when set, current type).
    public var prompt: String {
        var p = "cirrus:"
        switch scope {
        case .public: p += "public"
        case .private(let o): p += "private(\(o))"
        }
        if let zone { p += "/" + zone.zoneName }
        if let currentType { p += " " + currentType }
        return p + "> "
    }

    /// Runs one input line. Never throws: an error is rendered into the output's text, with
    /// `isError` set and the session's state unchanged. A line starting with `#` or `--` is a
    /// comment; `quit` and `exit` set `quit`.
    public mutating func execute(_ line: String) async -> Output {
        let words = ReplLine.words(line)
        guard let first = words.first else { return Output(text: "", isError: false, quit: false) }
        if first.text.hasPrefix("#") || first.text.hasPrefix("--") {
            return Output(text: "", isError: false, quit: false)
        }
        let command = first.text.lowercased()
        let start = DispatchTime.now().uptimeNanoseconds
        var text: String
        var failed = false
        do throws(ReplError) {
            text = try await dispatch(command, first, words, line)
        } catch {
            text = error.rendered(line: line)
            failed = true
        }
        if timing, !failed, Self.timed.contains(command) {
            let ms = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
            text += String(format: "time: %.2f ms\n", ms)
        }
        return Output(text: text, isError: failed, quit: command == "quit" || command == "exit")
    }

    static let timed: Set<String> = [
        "check", "query", "find", "next", "explain", "get", "save", "delete", "import", "types", "coredata",
    ]

    mutating func dispatch(
        _ command: String, _ first: Span, _ words: [Span], _ line: String
    ) async throws(ReplError) -> String {
        let rest = words.dropFirst().first?.start ?? line.utf8.count
        switch command {
        case "help", "?": return ReplHelp.text(for: words.dropFirst().first?.text)
        case "quit", "exit": return ""
        case "check": return try check(line, from: rest)
        case "query", "find": return try await query(line, words, from: first.end)
        case "next": return try await next(words)
        case "explain": return try await explain(line, words, from: first.end)
        case "let": return try bind(line, words)
        case "vars": return listVariables()
        case "unset": return try unset(words)
        case "use": return try use(words)
        case "coredata": return try loadCoreData(words)
        case "types": return types()
        case "schema": return try schemaText(words)
        case "get": return try await get(words)
        case "save": return try await save(line, words)
        case "delete": return try await delete(words)
        case "zones": return try await zones()
        case "database": return try switchDatabase(words)
        case "zone": return try switchZone(words)
        case "user": return try switchUser(words)
        case "import": return try importFile(line, words)
        case "timing": timing = try toggle(words, timing); return "timing \(timing ? "on" : "off")\n"
        case "json": json = try toggle(words, json); return "json \(json ? "on" : "off")\n"
        case "width":
            guard words.count == 2, let n = Int(words[1].text), (20...1000).contains(n) else {
                throw ReplError(
                    "width takes a number of columns from 20 to 1000",
                    at: words.count > 1 ? SourceRange(words[1].start, words[1].end) : nil)
            }
            width = n
            return "width \(n)\n"
        default:
            let close = ReplHelp.commands.map(\.name).filter { $0.hasPrefix(String(command.prefix(2))) }
            throw ReplError(
                "unknown command \"\(first.text)\"",
                hint: close.isEmpty
                    ? "type `help` for the list of commands"
                    : "did you mean \(close.joined(separator: ", "))? (`help` lists every command)",
                span: first)
        }
    }

    func toggle(_ words: [Span], _ current: Bool) throws(ReplError) -> Bool {
        guard words.count <= 2 else { throw ReplError("expected on or off", span: words[2]) }
        guard words.count == 2 else { return !current }
        switch words[1].text.lowercased() {
        case "on": return true
        case "off": return false
        default: throw ReplError("expected on or off", span: words[1])
        }
    }

    /// Completions for the word being typed (prefix matches, duplicates removed): command names
    /// for the first word; after it, record types, the fields of the type the line names (or of
    /// the current type), Core Data entities and their properties when a model is loaded, the
    /// command's keywords (`where`, `sort`, … after `query`) and `$variables`. After `timing`,
    /// `json`, `database` and `help` only their arguments (plus `$variables`).
    public func completions(line: String, word: String) -> [String] {
        let words = ReplLine.words(line)
        let atFirst = words.isEmpty || (words.count == 1 && !line.hasSuffix(" "))
        if atFirst { return ReplHelp.commands.map(\.name).filter { $0.hasPrefix(word.lowercased()) }.sorted() }
        let schema = container.schema
        var candidates = schema.sortedRecordTypes.map(\.name).filter { $0 != Schema.usersRecordType }
        let typeName =
            words.dropFirst().first.map(\.text).flatMap { schema.recordTypes[$0] != nil ? $0 : nil } ?? currentType
        if let t = typeName.flatMap({ schema.recordTypes[$0] }) { candidates += t.sortedFields.map(\.name) }
        if let m = coreDataModel {
            candidates += m.entities.map(\.name).sorted()
            if let e = typeName.flatMap({ m.entity($0) }) {
                candidates += e.attributes.map(\.name) + e.relationships.map(\.name)
            }
        }
        let cmd = words.first?.text.lowercased() ?? ""
        if cmd == "query" || cmd == "find" || cmd == "explain" { candidates += ["where", "sort", "limit", "keys"] }
        if ["timing", "json"].contains(cmd) { candidates = ["on", "off"] }
        if cmd == "database" { candidates = ["public", "private"] }
        if cmd == "help" { candidates = ReplHelp.commands.map(\.name) }
        if cmd == "let" { candidates += ["location", "date", "ref"] }
        candidates += variables.keys.map { "$" + $0 }
        var seen = Set<String>()
        return candidates.filter { $0.hasPrefix(word) && seen.insert($0).inserted }
    }
}

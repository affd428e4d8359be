// ReplHelp: the REPL's command list — syntax, one line of description and an example each —
// used by `help`, `help COMMAND` and tab completion. docs/repl.md says the same at length.

/// The REPL's commands and their help.
public enum ReplHelp {
    /// One command.
    public struct Command: Sendable {
        /// The command word (`query`); aliases such as `find` and `exit` have no entry.
        public var name: String
        /// Its syntax, capitals standing for what the user fills in.
        public var syntax: String
        /// One or two sentences; `help` shows the part before the first `;` or `(`.
        public var summary: String
        /// A line that works on the demo database.
        public var example: String
    }

    /// Every command `ReplSession` dispatches, in the order `help` lists them; the first word
    /// of a line is completed from these names.
    public static let commands: [Command] = [
        Command(
            name: "check", syntax: "check PREDICATE",
            summary: "Check a predicate as CloudKit would, against the current type's schema (see `use`).",
            example: "check name CONTAINS[c] 'caf'"),
        Command(
            name: "query", syntax: "query [TYPE] [where PREDICATE] [sort SPEC, …] [limit N] [keys F, …]",
            summary:
                "Run a query; SPEC is FIELD, -FIELD (descending) or FIELD@LAT,LON / FIELD@$var (nearest first). "
                + "Alias: find.",
            example: "query Place where kind == 'museum' sort -population limit 5 keys name, population"),
        Command(
            name: "next", syntax: "next [N]",
            summary: "The next page of the last query (from its cursor), optionally N records.", example: "next"),
        Command(
            name: "explain", syntax: "explain [TYPE] [where PREDICATE] [sort …] [limit N]",
            summary:
                "The plan, its estimated and actual rows, the index options the query needs (+ present, - missing).",
            example: "explain Place where kind == 'cafe' AND population > 1000 sort -population limit 10"),
        Command(
            name: "let", syntax: "let NAME = location LAT LON | date ISO-DATE | ref RECORDNAME | ARG-JSON",
            summary: "Bind a variable, used as $NAME in predicates and in sorts.",
            example: "let here = location 48.8584 2.2945"),
        Command(name: "vars", syntax: "vars", summary: "List the bound variables.", example: "vars"),
        Command(name: "unset", syntax: "unset NAME", summary: "Remove a variable.", example: "unset here"),
        Command(
            name: "use", syntax: "use TYPE",
            summary: "Set the current record type (for check, and query/explain without a "
                + "TYPE).", example: "use Place"),
        Command(
            name: "coredata", syntax: "coredata [MODEL|off]",
            summary:
                "Load a Core Data model (default: the one the container ships); query, explain, get and use then "
                + "take its entities.",
            example: "coredata"),
        Command(
            name: "types", syntax: "types", summary: "The record types with their record counts in this database.",
            example: "types"),
        Command(
            name: "schema", syntax: "schema [TYPE]",
            summary: "A type's fields, types and index options (without TYPE: the whole schema).",
            example: "schema Place"),
        Command(
            name: "get", syntax: "get [TYPE] RECORDNAME", summary: "Print one record (in the current zone).",
            example: "get Place louvre"),
        Command(
            name: "save", syntax: "save TYPE RECORDNAME {FIELD: VALUE, …}",
            summary: "Create or update a record; values are JSON or Web Services {\"type\", \"value\"}.",
            example: "save Place my-cafe {\"name\": \"My Café\", \"kind\": \"cafe\", \"population\": 12}"),
        Command(
            name: "delete", syntax: "delete [TYPE] RECORDNAME", summary: "Delete a record (in the current zone).",
            example: "delete Place my-cafe"),
        Command(name: "zones", syntax: "zones", summary: "The zones of this database.", example: "zones"),
        Command(
            name: "database", syntax: "database public|private",
            summary: "Switch database (private: the current user's).", example: "database private"),
        Command(
            name: "zone", syntax: "zone NAME|all",
            summary: "Work in one zone, or in all zones (queries) and the default zone (records).",
            example: "zone Travel"),
        Command(
            name: "user", syntax: "user NAME|anonymous",
            summary: "Act as another user (private database: that user's).", example: "user _alice"),
        Command(
            name: "import", syntax: "import FILE",
            summary: "Import Web Services JSON Lines (gzip accepted) or a property list into this database.",
            example: "import places.jsonl"),
        Command(
            name: "timing", syntax: "timing [on|off]", summary: "Show the time each command takes.",
            example: "timing on"),
        Command(
            name: "json", syntax: "json [on|off]", summary: "Print records and verdicts as JSON.", example: "json on"),
        Command(
            name: "width", syntax: "width N", summary: "Set the table width (default: the terminal's).",
            example: "width 120"),
        Command(
            name: "help", syntax: "help [COMMAND]", summary: "This list, or one command's help.",
            example: "help query"),
        Command(name: "quit", syntax: "quit", summary: "Leave (also: exit, Ctrl-D).", example: "quit"),
    ]

    /// `help` (every command, one line each) or `help COMMAND` (syntax, summary and example;
    /// `find` and `exit` show `query` and `quit`); an unknown name gets a one-line answer.
    public static func text(for name: String?) -> String {
        if let name {
            let n = name.lowercased() == "find" ? "query" : name.lowercased() == "exit" ? "quit" : name.lowercased()
            guard let c = commands.first(where: { $0.name == n }) else {
                return "no command \"\(name)\"; type `help` for the list\n"
            }
            return "\(c.syntax)\n  \(c.summary)\n  example: \(c.example)\n"
        }
        // Long syntaxes are shortened to `name …` (`help name` has them in full).
        let shown = commands.map { $0.syntax.count > 40 ? $0.name + " …" : $0.syntax }
        let w = (shown.map(\.count).max() ?? 0) + 2
        var out = "commands:\n"
        for (c, syntax) in zip(commands, shown) {
            out +=
                "  " + syntax + String(repeating: " ", count: w - syntax.count)
                + c.summary.prefix(while: { $0 != ";" && $0 != "(" }).trimmingTrailingSpace + "\n"
        }
        out +=
            "Predicates are NSPredicate format strings checked as CloudKit's CKQuery does; `help COMMAND` shows the "
            + "syntax and an example.\n"
        return out
    }
}

extension Substring {
    var trimmingTrailingSpace: String {
        var s = String(self)
        while s.hasSuffix(" ") || s.hasSuffix(".") || s.hasSuffix(",") { s.removeLast() }
        return s + "."
    }
}

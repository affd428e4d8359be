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
    /// of a line is completed from these names. Read from `table`.
    public static let commands: [Command] = commands(from: table)

    /// The commands as `help COMMAND` shows them: a command's syntax at the margin (its first
    /// word is its name), its summary below it indented by two spaces (lines joined with a
    /// space), then its example after `example: `.
    static let table = """
        check PREDICATE
          Check a predicate as CloudKit would, against the current type's schema (see `use`).
          example: check name CONTAINS[c] 'caf'
        query [TYPE] [where PREDICATE] [sort SPEC, …] [limit N] [keys F, …]
          Run a query; SPEC is FIELD, -FIELD (descending) or FIELD@LAT,LON / FIELD@$var (nearest first).
          Alias: find.
          example: query Place where kind == 'museum' sort -population limit 5 keys name, population
        next [N]
          The next page of the last query (from its cursor), optionally N records.
          example: next
        explain [TYPE] [where PREDICATE] [sort …] [limit N]
          The plan, its estimated and actual rows, the index options the query needs (+ present, - missing).
          example: explain Place where kind == 'cafe' AND population > 1000 sort -population limit 10
        let NAME = location LAT LON | date ISO-DATE | ref RECORDNAME | ARG-JSON
          Bind a variable, used as $NAME in predicates and in sorts.
          example: let here = location 48.8584 2.2945
        vars
          List the bound variables.
          example: vars
        unset NAME
          Remove a variable.
          example: unset here
        use TYPE
          Set the current record type (for check, and query/explain without a TYPE).
          example: use Place
        coredata [MODEL|off]
          Load a Core Data model (default: the one the container ships); query, explain, get and use then take
          its entities.
          example: coredata
        types
          The record types with their record counts in this database.
          example: types
        schema [TYPE]
          A type's fields, types and index options (without TYPE: the whole schema).
          example: schema Place
        get [TYPE] RECORDNAME
          Print one record (in the current zone).
          example: get Place louvre
        save TYPE RECORDNAME {FIELD: VALUE, …}
          Create or update a record; values are JSON or Web Services {"type", "value"}.
          example: save Place my-cafe {"name": "My Café", "kind": "cafe", "population": 12}
        delete [TYPE] RECORDNAME
          Delete a record (in the current zone).
          example: delete Place my-cafe
        zones
          The zones of this database.
          example: zones
        database public|private
          Switch database (private: the current user's).
          example: database private
        zone NAME|all
          Work in one zone, or in all zones (queries) and the default zone (records).
          example: zone Travel
        user NAME|anonymous
          Act as another user (private database: that user's).
          example: user _alice
        import FILE
          Import Web Services JSON Lines (gzip accepted) or a property list into this database.
          example: import places.jsonl
        timing [on|off]
          Show the time each command takes.
          example: timing on
        json [on|off]
          Print records and verdicts as JSON.
          example: json on
        width N
          Set the table width (default: the terminal's).
          example: width 120
        help [COMMAND]
          This list, or one command's help.
          example: help query
        quit
          Leave (also: exit, Ctrl-D).
          example: quit
        """

    /// The commands of `text`, laid out as `table` is; an indented line before the first
    /// command is left out.
    public static func commands(from text: String) -> [Command] {
        var out: [Command] = []
        for line in text.split(separator: "\n") {
            if !line.hasPrefix(" ") {
                let name = String(line.prefix { $0 != " " })
                out.append(Command(name: name, syntax: String(line), summary: "", example: ""))
            } else if out.isEmpty {
                continue
            } else if line.hasPrefix("  example: ") {
                out[out.count - 1].example = String(line.dropFirst("  example: ".count))
            } else {
                let summary = out[out.count - 1].summary
                out[out.count - 1].summary = (summary.isEmpty ? "" : summary + " ") + line.drop { $0 == " " }
            }
        }
        return out
    }

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

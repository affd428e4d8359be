// CloudKit's text schema language — the format `cktool export-schema` writes — read and written.
//
//     DEFINE SCHEMA
//         RECORD TYPE Place (
//             "___recordID" REFERENCE QUERYABLE,
//             name          STRING QUERYABLE SORTABLE SEARCHABLE,
//             tags          LIST<STRING> QUERYABLE,
//             location      LOCATION QUERYABLE,
//             GRANT WRITE TO "_creator",
//             GRANT CREATE TO "_icloud",
//             GRANT READ TO "_world"
//         );
//
// Names may be double-quoted; `//` and `--` start comments; keywords are case-insensitive.
// `CREATE ROLE r;` declares a custom security role (a letter, then letters, digits and `_`);
// a GRANT may name a declared role or a built-in one (`_world`, `_icloud`, `_creator`) only.
// Which users hold a role is not part of the text (it belongs to one environment).
// System fields (`___createTime`, …) take index options only; they are never typed fields.

/// A schema file that cannot be read, with the line and column of the problem.
public struct SchemaLanguageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong.
    public var message: String
    /// 1-based line of the problem.
    public var line: Int
    /// 1-based column of the problem.
    public var column: Int

    /// `line <line>, column <column>: <message>`.
    public var description: String { "line \(line), column \(column): \(message)" }
}

extension Schema {
    /// Reads a schema in CloudKit's schema language. The environment is not part of the text.
    public init(schemaLanguage text: String, environment: Environment) throws(SchemaLanguageError) {
        var p = SchemaParser(text)
        let types = try p.parse()
        self.init(environment: environment, recordTypes: types, roles: p.roles)
    }

    /// Writes the schema in CloudKit's schema language (record types and fields sorted by name).
    public var schemaLanguage: String {
        var out = "DEFINE SCHEMA\n"
        if !roles.isEmpty {
            out += "\n"
            for r in roles.sorted(by: { compareUTF8($0, $1) < 0 }) { out += "    CREATE ROLE \(quoted(r));\n" }
        }
        for t in sortedRecordTypes {
            out += "\n    RECORD TYPE \(quoted(t.name)) (\n"
            var lines: [String] = []
            for sys in SystemField.allCases {
                let opts = t.systemFieldOptions[sys] ?? []
                let typeName = sys.fieldType.scalar.schemaName
                lines.append(([quoted(sys.schemaName), typeName] + opts.names).joined(separator: " "))
            }
            for f in t.sortedFields {
                let typeName = f.type.isList ? "LIST<\(f.type.scalar.schemaName)>" : f.type.scalar.schemaName
                lines.append(([quoted(f.name), typeName] + f.options.names).joined(separator: " "))
            }
            for g in t.grants {
                lines.append("GRANT \(g.permissions.sorted().map(\.rawValue).joined(separator: ", ")) TO \"\(g.role)\"")
            }
            out += lines.map { "        " + $0 }.joined(separator: ",\n") + "\n    );\n"
        }
        return out
    }
}

private func quoted(_ name: String) -> String {
    let plain = name.first.map { $0.isLetter } == true && name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
    let reserved = ["RECORD", "TYPE", "GRANT", "TO", "DEFINE", "SCHEMA", "CREATE", "ROLE"].contains(name.uppercased())
    return plain && !reserved ? name : "\"" + name + "\""
}

private struct SchemaParser {
    enum Tok: Equatable {
        case word(String)
        case quoted(String)
        case punct(Character)
        case end
    }

    let chars: [Character]
    var i = 0
    var line = 1
    var col = 1
    var tokLine = 1
    var tokCol = 1

    /// Custom roles declared with `CREATE ROLE`.
    var roles = Set<String>()
    /// Custom roles named by grants, with the position of their first use.
    var grantedRoles: [String: (line: Int, column: Int)] = [:]

    init(_ text: String) { chars = Array(text) }

    func error(_ m: String) -> SchemaLanguageError { SchemaLanguageError(message: m, line: tokLine, column: tokCol) }

    mutating func advance() {
        if chars[i] == "\n" {
            line += 1
            col = 1
        } else {
            col += 1
        }
        i += 1
    }

    mutating func next() throws(SchemaLanguageError) -> Tok {
        while i < chars.count {
            if chars[i].isWhitespace {
                advance()
            } else if chars[i] == "/" && i + 1 < chars.count && chars[i + 1] == "/"
                || chars[i] == "-" && i + 1 < chars.count && chars[i + 1] == "-"
            {
                while i < chars.count && chars[i] != "\n" { advance() }
            } else {
                break
            }
        }
        tokLine = line
        tokCol = col
        guard i < chars.count else { return .end }
        let c = chars[i]
        if c == "\"" {
            advance()
            var s = ""
            while i < chars.count && chars[i] != "\"" {
                s.append(chars[i])
                advance()
            }
            guard i < chars.count else { throw error("unterminated quoted name") }
            advance()
            return .quoted(s)
        }
        if c.isLetter || c == "_" {
            var s = ""
            while i < chars.count && (chars[i].isLetter || chars[i].isNumber || chars[i] == "_") {
                s.append(chars[i])
                advance()
            }
            return .word(s)
        }
        if "(),;<>".contains(c) {
            advance()
            return .punct(c)
        }
        throw error("unexpected character '\(c)'")
    }

    mutating func peek() throws(SchemaLanguageError) -> Tok {
        let saved = (i, line, col)
        let t = try next()
        (i, line, col) = saved
        return t
    }

    mutating func expectWord(_ w: String) throws(SchemaLanguageError) {
        let t = try next()
        guard case .word(let s) = t, s.uppercased() == w else { throw error("expected \(w)") }
    }

    mutating func expect(_ p: Character) throws(SchemaLanguageError) {
        guard try next() == .punct(p) else { throw error("expected '\(p)'") }
    }

    mutating func name() throws(SchemaLanguageError) -> String {
        switch try next() {
        case .word(let s), .quoted(let s): return s
        default: throw error("expected a name")
        }
    }

    mutating func parse() throws(SchemaLanguageError) -> [RecordTypeSchema] {
        try expectWord("DEFINE")
        try expectWord("SCHEMA")
        var types: [RecordTypeSchema] = []
        var seen = Set<String>()
        while true {
            let t = try next()
            switch t {
            case .end:
                let undeclared = grantedRoles.filter { !roles.contains($0.key) }
                if let (role, at) = undeclared.min(by: {
                    ($0.value.line, $0.value.column) < ($1.value.line, $1.value.column)
                }) {
                    throw SchemaLanguageError(
                        message: "role \"\(role)\" is not defined; declare it with CREATE ROLE \(role); or grant to "
                            + "_world, _icloud or _creator",
                        line: at.line, column: at.column)
                }
                return types
            case .word(let w) where w.uppercased() == "CREATE":
                try expectWord("ROLE")
                let role = try name()
                guard Schema.isCustomRoleName(role) else {
                    throw error(
                        "role name \"\(role)\": a custom role's name is a letter, then letters, digits or '_' (at "
                            + "most 255)")
                }
                guard roles.insert(role).inserted else { throw error("role \(role) is defined twice") }
                try expect(";")
            case .word(let w) where w.uppercased() == "RECORD":
                try expectWord("TYPE")
                let typeName = try name()
                guard seen.insert(typeName).inserted else { throw error("record type \(typeName) is defined twice") }
                types.append(try recordType(typeName))
                let after = try peek()
                if after == .punct(";") { _ = try next() }
            default:
                throw error("expected RECORD TYPE or CREATE ROLE")
            }
        }
    }

    mutating func recordType(_ typeName: String) throws(SchemaLanguageError) -> RecordTypeSchema {
        try expect("(")
        var fields: [FieldSchema] = []
        var system: [SystemField: IndexOptions] = [:]
        var grants: [Grant] = []
        var names = Set<String>()
        while true {
            if try peek() == .punct(")") {
                _ = try next()
                break
            }
            if case .word(let w) = try peek(), w.uppercased() == "GRANT" {
                _ = try next()
                grants.append(try grant())
            } else {
                let fieldName = try name()
                let at = (tokLine, tokCol)
                func fieldError(_ m: String) -> SchemaLanguageError {
                    SchemaLanguageError(message: m, line: at.0, column: at.1)
                }
                guard names.insert(fieldName).inserted else {
                    throw fieldError("field \(fieldName) is defined twice in \(typeName)")
                }
                let type: FieldType
                do { type = try fieldType() } catch  where error.message == "lists cannot be nested" {
                    throw fieldError(error.message)
                }
                var options: IndexOptions = []
                while case .word(let w) = try peek() {
                    _ = try next()
                    switch w.uppercased() {
                    case "QUERYABLE": options.insert(.queryable)
                    case "SORTABLE": options.insert(.sortable)
                    case "SEARCHABLE": options.insert(.searchable)
                    default: throw error("unknown index option \(w); expected QUERYABLE, SORTABLE or SEARCHABLE")
                    }
                }
                if let sys = SystemField(name: fieldName), fieldName.hasPrefix("___") {
                    system[sys] = options
                } else {
                    if options.contains(.searchable) && (type.scalar != .string) {
                        throw fieldError(
                            "SEARCHABLE applies to STRING fields only (\(fieldName) is \(type.webServicesName))")
                    }
                    if type.scalar == .asset && !options.isEmpty {
                        throw fieldError("ASSET fields cannot be indexed (\(fieldName))")
                    }
                    fields.append(FieldSchema(name: fieldName, type: type, options: options))
                }
            }
            let sep = try next()
            if sep == .punct(")") { break }
            guard sep == .punct(",") else { throw error("expected ',' or ')'") }
        }
        return RecordTypeSchema(
            name: typeName, fields: fields, systemFieldOptions: system.filter { !$0.value.isEmpty },
            grants: grants.isEmpty ? Grant.defaults : grants)
    }

    mutating func fieldType() throws(SchemaLanguageError) -> FieldType {
        guard case .word(let w) = try next() else { throw error("expected a field type") }
        if w.uppercased() == "LIST" {
            try expect("<")
            let inner = try fieldType()
            try expect(">")
            guard !inner.isList else { throw error("lists cannot be nested") }
            return .list(inner.scalar)
        }
        guard let t = FieldType(webServicesName: w), !t.isList || w.uppercased().hasSuffix("_LIST") else {
            throw error(
                "unknown field type \(w); expected STRING, INT64, DOUBLE, TIMESTAMP, BYTES, LOCATION, REFERENCE, "
                    + "ASSET or LIST<…>"
            )
        }
        return t
    }

    mutating func grant() throws(SchemaLanguageError) -> Grant {
        var perms = Set<Permission>()
        while true {
            guard case .word(let w) = try next(), let p = Permission(rawValue: w.uppercased()) else {
                throw error("expected READ, CREATE or WRITE")
            }
            perms.insert(p)
            let more = try peek() == .punct(",")
            if more, try lookaheadIsPermission() { continue }
            break
        }
        try expectWord("TO")
        guard case .quoted(let role) = try next() else { throw error("expected a quoted role name") }
        if ![Grant.world, Grant.authenticated, Grant.creator].contains(role), grantedRoles[role] == nil {
            grantedRoles[role] = (tokLine, tokCol)
        }
        return Grant(perms, to: role)
    }

    /// Consumes `,` when the token after it is a permission name.
    mutating func lookaheadIsPermission() throws(SchemaLanguageError) -> Bool {
        let saved = (i, line, col)
        _ = try next()
        if case .word(let w) = try next(), Permission(rawValue: w.uppercased()) != nil {
            (i, line, col) = saved
            _ = try next()
            return true
        }
        (i, line, col) = saved
        return false
    }
}

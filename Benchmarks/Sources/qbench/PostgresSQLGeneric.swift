// PostgresSQLGeneric: the hand-written SQL yardstick for `--data FILE --queries FILE
// --postgres URL` — any record types, laid out from the schema Cirrus grew from the data as a
// careful PostgreSQL user would: a table per type (`t_<Type>`, record_name its primary key), a
// typed column per field (text COLLATE "C", bigint, float8, bigint milliseconds for dates, the
// target's record name for references, bytea, geography(Point,4326), arrays for lists), a
// tsvector of the SEARCHABLE strings (`to_tsvector('simple', unaccent(…))`: lower case, no
// diacritics), and per field the index its queries need — a B-tree per QUERYABLE or SORTABLE
// scalar, GIN per QUERYABLE list and over the tsvector, GiST per QUERYABLE location. Each
// checked query is translated filter by filter into one statement selecting the whole record
// (its name and every field's column), run as a prepared statement;
// a later page of a field sort continues after the previous page's last row (keyset, the
// values read before timing), of a nearest-first sort with OFFSET on the KNN scan.

import Foundation
import Indexes
import Logging
import PostgresNIO
import RecordModel

/// A prepared statement whose text is known at run time (postgres-nio prepares a statement by
/// its type's static name and text; these read them from a task-local value set around the call).
struct DynamicStatement: PostgresPreparedStatement {
    struct Text: Sendable {
        var name: String
        var sql: String
    }
    @TaskLocal static var current = Text(name: "", sql: "")
    static var name: String { current.name }
    static var sql: String { current.sql }
    typealias Row = PostgresRow
    var bindings: PostgresBindings
    func makeBindings() -> PostgresBindings { bindings }
    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}

/// One translated query: its text, a name to prepare it under, and its parameters.
struct GenericStatement: Sendable {
    var name: String
    var sql: String
    var binds: PostgresBindings
}

final class PostgresSQLGeneric {
    let peer: PostgresSQLPeer
    let schema: Schema

    init(peer: PostgresSQLPeer, schema: Schema) {
        self.peer = peer
        self.schema = schema
    }

    static func table(_ type: String) -> String { "\"t_\(type)\"" }
    static func col(_ f: String) -> String { "\"c_\(f)\"" }

    func fields(_ type: String) -> [FieldSchema] {
        (schema.recordTypes[type]?.sortedFields ?? []).filter { f in
            f.type.scalar != .asset && !(f.type.isList && f.type.scalar == .location)
        }
    }

    func searchable(_ type: String) -> [FieldSchema] {
        fields(type).filter { $0.options.contains(.searchable) && $0.type.scalar == .string }
    }

    static func sqlType(_ t: FieldType) -> String {
        let base: String =
            switch t.scalar {
            case .string: "text COLLATE \"C\""
            case .int64, .date: "bigint"
            case .double: "float8"
            case .bytes: "bytea"
            case .reference: "text COLLATE \"C\""
            case .location: "geography(Point, 4326)"
            case .asset: "text"
            }
        if t.isList {
            return switch t.scalar {
            case .string, .reference: "text[]"
            case .int64, .date: "bigint[]"
            case .double: "float8[]"
            default: "bytea[]"
            }
        }
        return base
    }

    func createTables() async throws {
        // In `public`, and called by that name: created in a run's own schema (the search path's
        // first), it stayed there, and the next run found it existing but could not call it.
        try await peer.exec(["CREATE EXTENSION IF NOT EXISTS unaccent SCHEMA public"])
        for type in schema.recordTypes.keys.sorted() where type != Schema.usersRecordType {
            let t = Self.table(type)
            var cols = ["record_name text COLLATE \"C\" PRIMARY KEY"]
            var ddl: [String] = []
            for f in fields(type) {
                cols.append("\(Self.col(f.name)) \(Self.sqlType(f.type))")
                let queried = !f.options.isDisjoint(with: [.queryable, .sortable])
                let index = "\"i_\(type)_\(f.name)\""
                if f.type.isList {
                    if f.options.contains(.queryable) {
                        ddl.append("CREATE INDEX \(index) ON \(t) USING gin (\(Self.col(f.name)))")
                    }
                } else if f.type.scalar == .location {
                    if f.options.contains(.queryable) {
                        ddl.append("CREATE INDEX \(index) ON \(t) USING gist (\(Self.col(f.name)))")
                    }
                } else if queried {
                    ddl.append("CREATE INDEX \(index) ON \(t) (\(Self.col(f.name)))")
                }
            }
            if !searchable(type).isEmpty {
                cols.append("tsv tsvector")
                ddl.append("CREATE INDEX \"i_\(type)_tsv\" ON \(t) USING gin (tsv)")
            }
            try await peer.exec(["CREATE TABLE \(t) (\(cols.joined(separator: ", ")))"] + ddl)
        }
    }

    /// Inserts `records` in statements of up to 1 000 rows of a type (INSERT … SELECT FROM unnest
    /// of one array literal per column).
    func insert(_ records: [Record]) async throws {
        var byType: [String: [Record]] = [:]
        for r in records where r.recordType != Schema.usersRecordType { byType[r.recordType, default: []].append(r) }
        for (type, rs) in byType.sorted(by: { $0.key < $1.key }) {
            let fs = fields(type)
            let text = searchable(type)
            var start = 0
            while start < rs.count {
                let chunk = rs[start..<min(rs.count, start + 1000)]
                start += chunk.count
                var names = ["record_name"]
                var exprs = ["u.c0"]
                var columns: [[String?]] = [chunk.map { $0.recordID.recordName }]
                func input() -> String { "u.c\(columns.count)" }
                for f in fs {
                    names.append(Self.col(f.name))
                    if f.type.scalar == .location && !f.type.isList {
                        exprs.append(
                            "ST_SetSRID(ST_MakePoint(\(input())::float8, u.c\(columns.count + 1)::float8), 4326)::geography"
                        )
                        columns.append(
                            chunk.map { r in if case .location(let l)? = r[f.name] { "\(l.longitude)" } else { nil } })
                        columns.append(
                            chunk.map { r in if case .location(let l)? = r[f.name] { "\(l.latitude)" } else { nil } })
                        continue
                    }
                    exprs.append(
                        "\(input())::\(Self.sqlType(f.type).replacingOccurrences(of: " COLLATE \"C\"", with: "").replacingOccurrences(of: "geography(Point, 4326)", with: "geography"))"
                    )
                    columns.append(
                        chunk.map { r in
                            guard let v = r[f.name] else { return nil }
                            if f.type.isList { return ArrayText.make(v.elements.map(Self.text)) }
                            return Self.text(v)
                        })
                }
                if !text.isEmpty {
                    names.append("tsv")
                    exprs.append("to_tsvector('simple', public.unaccent(\(input())))")
                    columns.append(
                        chunk.map { r in
                            text.flatMap { f in
                                (r[f.name]?.elements ?? []).compactMap { e in
                                    if case .string(let s) = e { s } else { nil }
                                }
                            }.joined(separator: " ")
                        })
                }
                var b = PostgresBindings()
                for c in columns { b.append(ArrayText.make(c)) }
                let inputs = columns.indices.map { "c\($0)" }
                let sql =
                    "INSERT INTO \(Self.table(type)) (\(names.joined(separator: ", "))) SELECT \(exprs.joined(separator: ", ")) "
                    + "FROM unnest(\(columns.indices.map { "$\($0 + 1)::text[]" }.joined(separator: ", "))) AS u(\(inputs.joined(separator: ", ")))"
                try await peer.client.query(PostgresQuery(unsafeSQL: sql, binds: b))
            }
        }
    }

    /// A value's text form for its column (an element's, for lists).
    static func text(_ v: FieldValue) -> String? {
        switch v {
        case .string(let s): s
        case .int64(let i): String(i)
        case .double(let d): "\(d)"
        case .date(let t): String(t.millisecondsSince1970)
        case .reference(let r): r.recordID.recordName
        case .bytes(let b): "\\x" + b.map { String(format: "%02x", $0) }.joined()
        default: nil
        }
    }

    // MARK: - queries

    /// The statement of a checked query (`limit` for sorted pages; `after`: the previous page's
    /// last row, for a keyset continuation of a field sort; `offset` for a nearest-first page).
    func translate(
        _ type: String, _ predicate: QueryPredicate, sort: [RecordModel.SortDescriptor], limit: Int?,
        after: Record? = nil, offset: Int = 0
    ) throws -> GenericStatement {
        var b = PostgresBindings()
        var conds: [String] = []
        switch predicate {
        case .none: conds.append("FALSE")
        case .all: break
        case .filters(let filters):
            for f in filters { conds.append(try condition(type, f, &b)) }
        }
        var order: [String] = []
        var keyset: [(expr: String, value: FieldValue?, ascending: Bool)] = []
        for s in sort {
            switch s {
            case .field(let name, let asc):
                let c = name == "recordName" ? "record_name" : Self.col(name)
                order.append("\(c) \(asc ? "ASC" : "DESC")")
                keyset.append((c, after?[name], asc))
            case .distance(let name, let from):
                b.append(from.longitude)
                b.append(from.latitude)
                order.append(
                    "\(Self.col(name)) <-> ST_SetSRID(ST_MakePoint($\(b.count - 1), $\(b.count)), 4326)::geography")
            }
        }
        if let after, !keyset.isEmpty, keyset.count == sort.count {
            // (k1, …, record_name) after the last row's, in each key's direction.
            b.append(after.recordID.recordName)
            var tail = "record_name > $\(b.count)"
            for k in keyset.reversed() {
                guard let v = k.value, let t = Self.text(v) else { continue }
                b.append(t)
                let p = "$\(b.count)::\(Self.castType(v))"
                tail = "(\(k.expr) \(k.ascending ? ">" : "<") \(p) OR (\(k.expr) = \(p) AND \(tail)))"
            }
            conds.append(tail)
        }
        // The whole record, as Cirrus returns whole records and the SQLite peer reads `p.*`:
        // the name and every field's column (not the tsvector, the search index's input).
        let columns = ["record_name"] + fields(type).map { Self.col($0.name) }
        var sql = "SELECT \(columns.joined(separator: ", ")) FROM \(Self.table(type))"
        if !conds.isEmpty { sql += " WHERE " + conds.joined(separator: " AND ") }
        if !order.isEmpty {
            // A distance sort is the KNN scan alone (a tie-breaker would end the index's order).
            sql += " ORDER BY " + order.joined(separator: ", ")
            if !sort.contains(where: { if case .distance = $0 { true } else { false } }) { sql += ", record_name" }
        }
        if let limit { sql += " LIMIT \(limit)" }
        if offset > 0 { sql += " OFFSET \(offset)" }
        return GenericStatement(name: "q" + String(Compare.fnv1a(sql), radix: 16), sql: sql, binds: b)
    }

    static func castType(_ v: FieldValue) -> String {
        switch v {
        case .int64, .date: "bigint"
        case .double: "float8"
        case .bytes: "bytea"
        default: "text"
        }
    }

    /// One filter as SQL over `b`'s parameters.
    func condition(_ type: String, _ f: QueryFilter, _ b: inout PostgresBindings) throws -> String {
        let v = f.fieldValue
        let field = schema.recordTypes[type]?.fields[f.fieldName]
        func param(_ x: FieldValue) -> String {
            b.append(Self.text(x))
            return "$\(b.count)::\(Self.castType(x))"
        }
        func array(_ xs: [FieldValue]) -> String {
            b.append(ArrayText.make(xs.map(Self.text)))
            let t = xs.first.map(Self.castType) ?? "text"
            return "$\(b.count)::\(t)[]"
        }
        if f.comparator.isTokenSearch {
            guard case .string(let words) = v, !searchable(type).isEmpty else {
                throw GenericError(message: "text search on \(type) without SEARCHABLE fields")
            }
            let groups = TextTokenizer.groups(words).map { g in "(" + g.joined(separator: " & ") + ")" }
            b.append(groups.joined(separator: f.comparator == .containsAllTokens ? " & " : " | "))
            return "tsv @@ to_tsquery('simple', $\(b.count))"
        }
        let c = f.fieldName == "recordName" || f.fieldName == "___recordID" ? "record_name" : Self.col(f.fieldName)
        if f.comparator == .near {
            guard case .location(let l) = v, let metres = f.distance else {
                throw GenericError(message: "NEAR without a location")
            }
            b.append(l.longitude)
            b.append(l.latitude)
            b.append(metres)
            return
                "ST_DWithin(\(c), ST_SetSRID(ST_MakePoint($\(b.count - 2), $\(b.count - 1)), 4326)::geography, $\(b.count), false)"
        }
        if field?.type.isList == true {
            switch f.comparator {
            case .listContains: return "\(c) @> \(array([v]))"
            case .notListContains: return "NOT (\(c) @> \(array([v])))"
            case .listContainsAny: return "\(c) && \(array(v.elements))"
            case .notListContainsAny: return "NOT (\(c) && \(array(v.elements)))"
            case .listContainsAll: return "\(c) @> \(array(v.elements))"
            case .listMemberBeginsWith:
                guard case .string(let p) = v else { break }
                return
                    "EXISTS (SELECT 1 FROM unnest(\(c)) AS e WHERE e >= \(param(.string(p))) AND e < \(param(.string(SQLiteGeneric.successor(p)))))"
            default: break
            }
            throw GenericError(message: "no hand-written SQL for \(f.comparator.rawValue) on list field \(f.fieldName)")
        }
        switch f.comparator {
        case .equals: return "\(c) = \(param(v))"
        case .notEquals: return "\(c) <> \(param(v))"
        case .lessThan: return "\(c) < \(param(v))"
        case .lessThanOrEquals: return "\(c) <= \(param(v))"
        case .greaterThan: return "\(c) > \(param(v))"
        case .greaterThanOrEquals: return "\(c) >= \(param(v))"
        case .in: return "\(c) = ANY(\(array(v.elements)))"
        case .notIn: return "NOT (\(c) = ANY(\(array(v.elements))))"
        case .beginsWith:
            guard case .string(let p) = v else { break }
            return "(\(c) >= \(param(v)) AND \(c) < \(param(.string(SQLiteGeneric.successor(p)))))"
        default: break
        }
        throw GenericError(message: "no hand-written SQL for \(f.comparator.rawValue) on \(f.fieldName)")
    }

    /// Runs a statement (prepared) and returns the record names of its rows (the first column;
    /// the rest of each row, every field, is received whole, as the SQLite peer reads each row
    /// whole). The names are what is compared.
    func run(_ s: GenericStatement) async throws -> [String] {
        let rows = try await DynamicStatement.$current.withValue(DynamicStatement.Text(name: s.name, sql: s.sql)) {
            try await peer.client.execute(DynamicStatement(bindings: s.binds), logger: PostgresSQLPeer.logger)
        }
        var out: [String] = []
        for try await r in rows {
            for cell in r where cell.columnIndex == 0 { out.append(try cell.decode(String.self)) }
        }
        return out
    }
}

/// A PostgreSQL array literal of texts (NULL elements unquoted), for a text parameter cast to an array.
enum ArrayText {
    /// `{"a","b\"c",NULL}`. Escaped byte by byte: `replacingOccurrences` compares by characters,
    /// and a quote followed by a combining mark (a GeoNames alternate name has one) is another
    /// character, so it went unescaped and PostgreSQL refused the literal.
    static func make(_ items: [String?]) -> String {
        var out: [UInt8] = [UInt8(ascii: "{")]
        for (i, item) in items.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            guard let item else {
                out += Array("NULL".utf8)
                continue
            }
            out.append(UInt8(ascii: "\""))
            for b in item.utf8 {
                if b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") { out.append(UInt8(ascii: "\\")) }
                out.append(b)
            }
            out.append(UInt8(ascii: "\""))
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }
}

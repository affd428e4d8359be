// SQLiteGeneric: the SQLite peer for `--data` files — any record types, laid out from the
// schema Cirrus derived on import: a table per type (one column per scalar field; a location as
// lat/lon plus an R*Tree; a reference as the target's record name; a date as milliseconds),
// each list field in a side table (id, value) with an index, an FTS5 table over the SEARCHABLE
// string fields, and a B-tree index per QUERYABLE/SORTABLE field. A checked predicate (a
// conjunction of Web Services filters) translates filter by filter into SQL; what has no SQL
// equivalent here (bytes, assets, comparisons on list fields other than membership) is
// refused with a clear error rather than guessed.

import Foundation
import Indexes
import RecordModel

struct GenericError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

final class SQLiteGeneric {
    let peer: SQLitePeer
    let schema: Schema
    private var nextID: [String: Int64] = [:]

    init(peer: SQLitePeer, schema: Schema) {
        self.peer = peer
        self.schema = schema
    }

    static func table(_ type: String) -> String { "\"t_\(type)\"" }
    static func side(_ type: String, _ field: String) -> String { "\"l_\(type)_\(field)\"" }
    static func fts(_ type: String) -> String { "\"f_\(type)\"" }
    static func rtree(_ type: String, _ field: String) -> String { "\"r_\(type)_\(field)\"" }
    static func col(_ f: String) -> String { "\"c_\(f)\"" }

    func fields(_ type: String) -> [FieldSchema] { schema.recordTypes[type]?.sortedFields ?? [] }
    func searchable(_ type: String) -> [FieldSchema] {
        fields(type).filter { $0.options.contains(.searchable) && $0.type.scalar == .string }
    }

    func createTables() throws {
        for type in schema.recordTypes.keys.sorted() where type != Schema.usersRecordType {
            var cols = ["id INTEGER PRIMARY KEY", "recordName TEXT NOT NULL UNIQUE"]
            var ddl: [String] = []
            for f in fields(type) {
                if f.type.isList {
                    ddl.append("CREATE TABLE \(Self.side(type, f.name))(id INTEGER NOT NULL, value)")
                    ddl.append("CREATE INDEX \"i_\(type)_\(f.name)\" ON \(Self.side(type, f.name))(value, id)")
                    cols.append("\(Self.col(f.name)) INTEGER")  // element count; NULL when the field is missing
                    continue
                }
                switch f.type.scalar {
                case .location:
                    cols.append("\(Self.col(f.name + "_lat")) REAL")
                    cols.append("\(Self.col(f.name + "_lon")) REAL")
                    ddl.append(
                        "CREATE VIRTUAL TABLE \(Self.rtree(type, f.name)) USING rtree(id, minLat, maxLat, minLon, maxLon)"
                    )
                default:
                    cols.append(Self.col(f.name))
                    if !f.options.isDisjoint(with: [.queryable, .sortable]) {
                        ddl.append("CREATE INDEX \"i_\(type)_\(f.name)\" ON \(Self.table(type))(\(Self.col(f.name)))")
                    }
                }
            }
            try peer.db.exec("CREATE TABLE \(Self.table(type))(\(cols.joined(separator: ", ")))")
            let text = searchable(type)
            if !text.isEmpty {
                try peer.db.exec(
                    "CREATE VIRTUAL TABLE \(Self.fts(type)) USING fts5(\(text.map { Self.col($0.name) }.joined(separator: ", ")), tokenize='unicode61 remove_diacritics 2')"
                )
            }
            for d in ddl { try peer.db.exec(d) }
        }
    }

    static func sqlValue(_ v: FieldValue) -> SQLValue {
        switch v {
        case .string(let s): .text(s)
        case .int64(let i): .int(i)
        case .double(let d): .double(d)
        case .date(let t): .int(t.millisecondsSince1970)
        case .reference(let r): .text(r.recordID.recordName)
        default: .null
        }
    }

    /// Inserts records in one transaction.
    func insert(_ records: [Record]) throws {
        try peer.db.exec("BEGIN")
        for r in records where r.recordType != Schema.usersRecordType {
            let type = r.recordType
            let id = (nextID[type] ?? 0) + 1
            nextID[type] = id
            var names = ["id", "recordName"]
            var values: [SQLValue] = [.int(id), .text(r.recordID.recordName)]
            var after: [(String, [SQLValue])] = []
            for f in fields(type) {
                guard let v = r[f.name] else { continue }
                if f.type.isList {
                    names.append(Self.col(f.name))
                    values.append(.int(Int64(v.elements.count)))
                    for e in v.elements {
                        after.append(
                            (
                                "INSERT INTO \(Self.side(type, f.name))(id, value) VALUES (?, ?)",
                                [.int(id), Self.sqlValue(e)]
                            ))
                    }
                } else if case .location(let l) = v {
                    names += [Self.col(f.name + "_lat"), Self.col(f.name + "_lon")]
                    values += [.double(l.latitude), .double(l.longitude)]
                    after.append(
                        (
                            "INSERT INTO \(Self.rtree(type, f.name)) VALUES (?, ?, ?, ?, ?)",
                            [
                                .int(id), .double(l.latitude), .double(l.latitude), .double(l.longitude),
                                .double(l.longitude),
                            ]
                        ))
                } else {
                    names.append(Self.col(f.name))
                    values.append(Self.sqlValue(v))
                }
            }
            let text = searchable(type)
            if !text.isEmpty {
                let docs = text.map { f -> SQLValue in
                    .text(
                        r[f.name].map {
                            $0.elements.compactMap { e in if case .string(let s) = e { s } else { nil } }.joined(
                                separator: " ")
                        } ?? "")
                }
                after.append(
                    (
                        "INSERT INTO \(Self.fts(type))(rowid, \(text.map { Self.col($0.name) }.joined(separator: ", "))) VALUES (?\(String(repeating: ", ?", count: text.count)))",
                        [.int(id)] + docs
                    ))
            }
            try peer.statement(
                "INSERT INTO \(Self.table(type))(\(names.joined(separator: ", "))) VALUES (\(names.map { _ in "?" }.joined(separator: ", ")))"
            ).run(values)
            for (sql, args) in after { try peer.statement(sql).run(args) }
        }
        try peer.db.exec("COMMIT")
    }

    /// SQL (WHERE … ORDER BY … LIMIT) and its arguments for a checked query. It selects whole
    /// rows (`p.*`: id, recordName, then the fields), as Cirrus returns whole records.
    func translate(
        _ type: String, _ predicate: QueryPredicate, sort: [RecordModel.SortDescriptor], limit: Int?
    ) throws -> (String, [SQLValue]) {
        let t = Self.table(type)
        var conds: [String] = []
        var args: [SQLValue] = []
        var distance: (String, Location)? = nil
        switch predicate {
        case .none: conds.append("0")
        case .all: break
        case .filters(let filters):
            for f in filters {
                let (c, a) = try condition(type, f)
                conds.append(c)
                args += a
            }
        }
        var order: [String] = []
        for s in sort {
            switch s {
            case .field(let name, let asc): order.append("p.\(Self.col(name)) \(asc ? "ASC" : "DESC")")
            case .distance(let name, let from):
                distance = (name, from)
                order.append(
                    "dist_km(p.\(Self.col(name + "_lat")), p.\(Self.col(name + "_lon")), \(from.latitude), \(from.longitude))"
                )
            }
        }
        _ = distance
        var sql =
            "SELECT p.* FROM \(t) p" + (conds.isEmpty ? "" : " WHERE " + conds.joined(separator: " AND "))
        if !order.isEmpty { sql += " ORDER BY " + (order + ["p.recordName"]).joined(separator: ", ") }
        if let limit { sql += " LIMIT \(limit)" }
        return (sql, args)
    }

    func condition(_ type: String, _ f: QueryFilter) throws -> (String, [SQLValue]) {
        let c = "p." + Self.col(f.fieldName)
        let v = f.fieldValue
        let field = schema.recordTypes[type]?.fields[f.fieldName]
        if f.fieldName == "recordName" || f.fieldName == "___recordID" {
            return try scalar("p.recordName", f.comparator, v)
        }
        if f.comparator.isTokenSearch {
            guard case .string(let words) = v, !searchable(type).isEmpty else {
                throw GenericError(message: "text search on \(type) without SEARCHABLE fields")
            }
            let groups = TextTokenizer.groups(words).map { g in
                "(" + g.map { "\"\($0)\"" }.joined(separator: " AND ") + ")"
            }
            let match = groups.joined(separator: f.comparator == .containsAllTokens ? " AND " : " OR ")
            return (
                "p.id IN (SELECT rowid FROM \(Self.fts(type)) WHERE \(Self.fts(type)) MATCH ?)",
                [.text(match.isEmpty ? "\"\"" : match)]
            )
        }
        if f.comparator == .near {
            guard case .location(let l) = v, let metres = f.distance else {
                throw GenericError(message: "NEAR without a location")
            }
            let km = metres / 1000
            let boxes = SQLitePeer.boxes(lat: l.latitude, lon: l.longitude, km: km).map {
                "(r.maxLat >= \($0.0) AND r.minLat <= \($0.1) AND r.maxLon >= \($0.2) AND r.minLon <= \($0.3))"
            }
            let lat = "p." + Self.col(f.fieldName + "_lat"), lon = "p." + Self.col(f.fieldName + "_lon")
            return (
                "p.id IN (SELECT r.id FROM \(Self.rtree(type, f.fieldName)) r WHERE \(boxes.joined(separator: " OR "))) AND dist_km(\(lat), \(lon), ?, ?) <= ?",
                [.double(l.latitude), .double(l.longitude), .double(km)]
            )
        }
        if field?.type.isList == true {
            let side = Self.side(type, f.fieldName)
            let elems = v.elements.map(Self.sqlValue)
            let marks = elems.map { _ in "?" }.joined(separator: ", ")
            switch f.comparator {
            case .listContains: return ("p.id IN (SELECT id FROM \(side) WHERE value = ?)", [Self.sqlValue(v)])
            case .notListContains:
                return ("\(c) IS NOT NULL AND p.id NOT IN (SELECT id FROM \(side) WHERE value = ?)", [Self.sqlValue(v)])
            case .listContainsAny: return ("p.id IN (SELECT id FROM \(side) WHERE value IN (\(marks)))", elems)
            case .notListContainsAny:
                return ("\(c) IS NOT NULL AND p.id NOT IN (SELECT id FROM \(side) WHERE value IN (\(marks)))", elems)
            case .listContainsAll:
                return (
                    "p.id IN (SELECT id FROM \(side) WHERE value IN (\(marks)) GROUP BY id HAVING COUNT(DISTINCT value) = \(Set(v.elements).count))",
                    elems
                )
            case .listMemberBeginsWith:
                guard case .string(let p) = v else { break }
                return (
                    "p.id IN (SELECT id FROM \(side) WHERE value >= ? AND value < ?)",
                    [.text(p), .text(Self.successor(p))]
                )
            default: break
            }
            throw GenericError(
                message: "the SQLite peer has no translation of \(f.comparator.rawValue) on list field \(f.fieldName)")
        }
        return try scalar(c, f.comparator, v)
    }

    func scalar(_ c: String, _ op: RecordModel.Comparator, _ v: FieldValue) throws -> (String, [SQLValue]) {
        let elems = v.elements.map(Self.sqlValue)
        let marks = elems.map { _ in "?" }.joined(separator: ", ")
        switch op {
        case .equals: return ("\(c) = ?", [Self.sqlValue(v)])
        case .notEquals: return ("\(c) <> ?", [Self.sqlValue(v)])
        case .lessThan: return ("\(c) < ?", [Self.sqlValue(v)])
        case .lessThanOrEquals: return ("\(c) <= ?", [Self.sqlValue(v)])
        case .greaterThan: return ("\(c) > ?", [Self.sqlValue(v)])
        case .greaterThanOrEquals: return ("\(c) >= ?", [Self.sqlValue(v)])
        case .in: return ("\(c) IN (\(marks))", elems)
        case .notIn: return ("\(c) NOT IN (\(marks))", elems)
        case .beginsWith, .notBeginsWith:
            guard case .string(let p) = v else { break }
            return (
                op == .beginsWith ? "(\(c) >= ? AND \(c) < ?)" : "NOT (\(c) >= ? AND \(c) < ?)",
                [.text(p), .text(Self.successor(p))]
            )
        default: break
        }
        throw GenericError(message: "the SQLite peer has no translation of \(op.rawValue) on \(c)")
    }

    /// The least string greater than every string starting with `p` (binary order).
    static func successor(_ p: String) -> String {
        var scalars = Array(p.unicodeScalars)
        while let last = scalars.popLast() {
            if let next = Unicode.Scalar(last.value + 1) { return String(String.UnicodeScalarView(scalars + [next])) }
        }
        return "\u{10FFFF}"
    }
}

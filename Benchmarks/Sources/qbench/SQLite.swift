// SQLite: a thin, throwing wrapper over the C API for the SQLite peer — a connection, prepared
// statements (prepared once, reset and rebound per call), and the `dist_km` SQL function, which
// calls GeoMath.distanceKm so both engines use the same great-circle formula (R = 6371.0088 km).
// Owns nothing about the schema or the queries (SQLitePeer.swift).

import CSQLite
import Foundation
import Indexes

struct SQLiteError: Error, CustomStringConvertible {
    var message: String
    var description: String { "SQLite: \(message)" }
}

/// SQLITE_TRANSIENT: SQLite copies bound text before the call returns.
private let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

/// One connection. Not shared between threads (each thread opens its own).
final class SQLiteDB {
    let handle: OpaquePointer

    init(path: String) throws {
        var h: OpaquePointer?
        let rc = sqlite3_open_v2(path, &h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard rc == SQLITE_OK, let h else {
            if let h { sqlite3_close_v2(h) }
            throw SQLiteError(message: "cannot open \(path) (code \(rc))")
        }
        handle = h
        sqlite3_busy_timeout(h, 10_000)
        guard
            sqlite3_create_function_v2(
                h, "dist_km", 4, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil,
                { ctx, _, argv in
                    guard let argv, let a0 = argv[0], let a1 = argv[1], let a2 = argv[2], let a3 = argv[3] else {
                        return
                    }
                    let d = GeoMath.distanceKm(
                        latitude1: sqlite3_value_double(a0), longitude1: sqlite3_value_double(a1),
                        latitude2: sqlite3_value_double(a2), longitude2: sqlite3_value_double(a3))
                    sqlite3_result_double(ctx, d)
                }, nil, nil, nil) == SQLITE_OK
        else {
            throw SQLiteError(message: "cannot register dist_km")
        }
    }

    deinit { sqlite3_close_v2(handle) }

    var errorMessage: String { String(cString: sqlite3_errmsg(handle)) }

    func exec(_ sql: String) throws {
        var err: UnsafeMutablePointer<CChar>?
        if sqlite3_exec(handle, sql, nil, nil, &err) != SQLITE_OK {
            let m = err.map { String(cString: $0) } ?? errorMessage
            sqlite3_free(err)
            throw SQLiteError(message: "\(m) in: \(sql.prefix(200))")
        }
    }

    func prepare(_ sql: String) throws -> Statement { try Statement(self, sql) }

    static var version: String { String(cString: sqlite3_libversion()) }
}

/// A prepared statement, reused: `bind` from index 1, `step` rows, `reset` happens on bind(1…).
final class Statement {
    let db: SQLiteDB
    let stmt: OpaquePointer
    let sql: String

    init(_ db: SQLiteDB, _ sql: String) throws {
        var s: OpaquePointer?
        guard sqlite3_prepare_v3(db.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &s, nil) == SQLITE_OK, let s
        else {
            throw SQLiteError(message: "\(db.errorMessage) in: \(sql)")
        }
        self.db = db
        self.stmt = s
        self.sql = sql
    }

    deinit { sqlite3_finalize(stmt) }

    /// Resets the statement and binds `values` to parameters 1…n.
    func bind(_ values: [SQLValue]) {
        sqlite3_reset(stmt)
        sqlite3_clear_bindings(stmt)
        for (i, v) in values.enumerated() {
            let k = Int32(i + 1)
            switch v {
            case .int(let x): sqlite3_bind_int64(stmt, k, x)
            case .double(let x): sqlite3_bind_double(stmt, k, x)
            case .text(let x): sqlite3_bind_text(stmt, k, x, -1, transient)
            case .null: sqlite3_bind_null(stmt, k)
            }
        }
    }

    /// Steps once: true when a row is available.
    func step() throws -> Bool {
        let rc = sqlite3_step(stmt)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        throw SQLiteError(message: "\(db.errorMessage) (code \(rc)) in: \(sql.prefix(200))")
    }

    /// Runs to completion (inserts, updates).
    func run(_ values: [SQLValue]) throws {
        bind(values)
        while try step() {}
    }

    func int(_ col: Int32) -> Int64 { sqlite3_column_int64(stmt, col) }
    func double(_ col: Int32) -> Double { sqlite3_column_double(stmt, col) }
    func text(_ col: Int32) -> String {
        guard let p = sqlite3_column_text(stmt, col) else { return "" }
        return String(cString: p)
    }

    /// Every column of the current row as a value (what an application reading the whole row
    /// builds); BLOBs are read as their byte count.
    func row() -> [SQLValue] {
        let n = sqlite3_column_count(stmt)
        var out: [SQLValue] = []
        out.reserveCapacity(Int(n))
        for c in 0..<n {
            switch sqlite3_column_type(stmt, c) {
            case SQLITE_INTEGER: out.append(.int(int(c)))
            case SQLITE_FLOAT: out.append(.double(double(c)))
            case SQLITE_TEXT: out.append(.text(text(c)))
            case SQLITE_BLOB: out.append(.int(Int64(sqlite3_column_bytes(stmt, c))))
            default: out.append(.null)
            }
        }
        return out
    }
}

enum SQLValue {
    case int(Int64)
    case double(Double)
    case text(String)
    case null
}

// PreparedSQL: the store's statements as server-side prepared statements.
//
// A statement's text depends on the tenant's namespace, the record type's table and the shape of
// a query (its filters and sort), never on values (SQLBuilder binds every value as a parameter),
// so a handful of texts serve every request. Each runs as a named prepared statement: the server
// parses (and after a few runs plans) it once per pooled session instead of at every call.
//
// postgres-nio (1.33) prepares a `PostgresPreparedStatement` once per connection, by the
// statement type's static `name` and `sql`; the store's texts are known only at run time, so
// `Dynamic` reads both from a task-local value set around the call (`withValue`), which
// postgres-nio reads synchronously in the same task. The name is `c` and 32 hex digits of the
// text's SHA-256: equal texts share a statement, different texts never do.
//
// Bounds: a store prepares at most `PreparedSQL.limit` distinct texts (per-session statements
// stay on the server for the session's life); past it, new texts run unprepared (the unnamed
// statement, parsed at each call), as every statement did before. A predicate's shape is chosen
// by its author, so without the bound a stream of distinct shapes would grow each session.
//
// Not pipelining: postgres-nio sends a connection's next statement when the previous one is
// answered (ReadyForQuery). A request's round trips are cut by sending fewer statements: multi-row
// statements over arrays, and data-modifying CTEs (PostgresStore+Batch.swift).

import Crypto
import Logging
import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO

enum PreparedSQL {
    /// Most distinct statement texts a store prepares (see the header).
    static let limit = 256

    /// The text and name of the statement `Dynamic` runs in the current task.
    struct Text: Sendable {
        var name: String
        var sql: String
    }

    /// A prepared statement whose text is given at run time (see the header).
    struct Dynamic: PostgresPreparedStatement {
        @TaskLocal static var current = Text(name: "", sql: "")
        static var name: String { current.name }
        static var sql: String { current.sql }
        typealias Row = PostgresRow

        var bindings: PostgresBindings
        func makeBindings() -> PostgresBindings { bindings }
        func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
    }

    /// The statement name of `sql`: `c` and 32 hex digits of its SHA-256.
    static func name(_ sql: String) -> String {
        let digest = SHA256.hash(data: Array(sql.utf8))
        let hex = digest.prefix(16).map { b -> String in
            let s = String(b, radix: 16)
            return b < 16 ? "0" + s : s
        }
        return "c" + hex.joined()
    }

    /// Which texts a store has prepared (shared by its copies; see `limit`).
    final class Registry: Sendable {
        private let names = NIOLockedValueBox<Set<String>>([])

        /// The statement name to prepare `sql` under, or nil to run it unprepared (the limit is
        /// reached and `sql` is new).
        func name(for sql: String) -> String? {
            let n = PreparedSQL.name(sql)
            return names.withLockedValue { s in
                if s.contains(n) { return n }
                if s.count >= PreparedSQL.limit { return nil }
                s.insert(n)
                return n
            }
        }
    }
}

extension PostgresConnection {
    /// Runs `sql` with `binds` as a prepared statement (when `registry` is given and allows;
    /// otherwise as the unnamed statement, planned with these values) and returns its rows.
    func run(
        _ sql: String, _ binds: PostgresBindings, registry: PreparedSQL.Registry?, logger: Logger
    ) async throws -> [PostgresRow] {
        guard let name = registry?.name(for: sql) else {
            return try await query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger).collect()
        }
        let rows = try await PreparedSQL.Dynamic.$current.withValue(PreparedSQL.Text(name: name, sql: sql)) {
            try await self.execute(PreparedSQL.Dynamic(bindings: binds), logger: logger)
        }
        return try await rows.reduce(into: []) { $0.append($1) }
    }
}

extension PostgresClient {
    /// Runs `sql` with `binds` on a pooled connection as a prepared statement (see
    /// `PostgresConnection.run`) and returns its rows. The connection is held until every row is
    /// read, as the pool's own `execute` and `query` hold it until their row sequence ends.
    func run(
        _ sql: String, _ binds: PostgresBindings, registry: PreparedSQL.Registry?, logger: Logger
    ) async throws -> [PostgresRow] {
        try await withConnection { conn in
            try await conn.run(sql, binds, registry: registry, logger: logger)
        }
    }
}

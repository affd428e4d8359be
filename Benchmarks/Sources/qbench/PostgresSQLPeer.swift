// PostgresSQLPeer: the yardstick for Cirrus-on-PostgreSQL — the same places in a table of its
// own on the same server, queried with hand-written SQL as a careful PostgreSQL user would:
// typed columns (text COLLATE "C", bigint, geography(Point,4326), text[], a tsvector of name and
// description in the 'simple' configuration), the index each query needs in PostgreSQL's best
// form for it — a B-tree per queried scalar field (the fields a CloudKit schema marks QUERYABLE
// or SORTABLE, one index per field as CloudKit declares them), GIN over the tsvector and over the
// tags array, GiST over the geography (`ST_DWithin` for radii, `<->` for nearest-first) —,
// prepared statements (postgres-nio's `PostgresPreparedStatement`, prepared once per pooled
// connection), VACUUM ANALYZE after the load, keyset paging for the deep page and `OFFSET` on
// the KNN scan for later nearest pages (a KNN scan has no cheaper way to skip rows). Rows are
// read whole into `Place` values, as Cirrus builds whole records. The table lives in a schema
// of its own (`qbench_sql_…`), left in the database like Cirrus-on-PostgreSQL's tables.
//
// Its answers are compared with the embedded engine's; a difference is reported (not fatal:
// PostGIS measures distances on its own sphere, so a row on a radius's boundary may differ).

import Foundation
import Logging
import PostgresNIO

/// The places on PostgreSQL, in hand-written SQL.
final class PostgresSQLPeer {
    let client: PostgresClient
    let runTask: Task<Void, Never>
    /// The schema (namespace) holding the peer's tables; on every session's `search_path`.
    let namespace: String
    /// `host:port/database`.
    let address: String
    static let logger = Logger(label: "qbench.postgres-sql")

    /// Connects to `url` (`postgres://user[:password]@host[:port]/database`) with a schema of its
    /// own (`qbench_sql_<pid>_<ms>`, or `namespace`), created when missing.
    init(url: String, namespace: String? = nil) async throws {
        guard let c = URLComponents(string: url), let host = c.host, let user = c.user else {
            throw GenericError(message: "--postgres: expected postgres://user@host:port/database, got \(url)")
        }
        let database = String(c.path.drop(while: { $0 == "/" }))
        self.namespace =
            namespace
            ?? "qbench_sql_\(ProcessInfo.processInfo.processIdentifier)_\(UInt64(Date().timeIntervalSince1970 * 1000))"
        address = "\(host):\(c.port ?? 5432)/\(database)"
        var config = PostgresClient.Configuration(
            host: host, port: c.port ?? 5432, username: user, password: c.password,
            database: database.isEmpty ? user : database, tls: .disable)
        config.options.maximumConnections = 4
        // Unqualified names in the statements resolve to the peer's schema, PostGIS's in public.
        config.options.additionalStartupParameters = [
            ("search_path", "\(self.namespace), public"), ("jit", "off"), ("application_name", "qbench sql"),
        ]
        client = PostgresClient(configuration: config)
        let client = self.client
        runTask = Task { await client.run() }
        try await client.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA IF NOT EXISTS \"\(self.namespace)\""))
    }

    func close() async {
        runTask.cancel()
        _ = await runTask.value
    }

    /// Runs statements one after the other (DDL, maintenance).
    func exec(_ statements: [String]) async throws {
        for s in statements {
            do { try await client.query(PostgresQuery(unsafeSQL: s)) } catch {
                throw GenericError(
                    message: "PostgreSQL (hand-written SQL) refused: \(String(reflecting: error))\n  \(s)")
            }
        }
    }

    // MARK: - the places table

    func createPlaces() async throws {
        try await exec([
            """
            CREATE TABLE place (
                record_name text COLLATE "C" PRIMARY KEY, name text COLLATE "C" NOT NULL,
                kind text COLLATE "C" NOT NULL, population bigint NOT NULL, country text COLLATE "C" NOT NULL,
                location geography(Point, 4326) NOT NULL, tags text[] NOT NULL, description text NOT NULL,
                tsv tsvector NOT NULL)
            """,
            "CREATE INDEX place_name ON place (name)",
            "CREATE INDEX place_kind ON place (kind)",
            "CREATE INDEX place_population ON place (population)",
            "CREATE INDEX place_country ON place (country)",
            "CREATE INDEX place_location ON place USING gist (location)",
            "CREATE INDEX place_tags ON place USING gin (tags)",
            "CREATE INDEX place_tsv ON place USING gin (tsv)",
        ])
    }

    /// Inserts `places` in statements of `batch` rows (one multi-row INSERT over arrays each,
    /// its own transaction), calling `progress(n)` after each.
    func ingest(_ places: [Place], batch: Int, progress: (Int) -> Void) async throws {
        var i = 0
        while i < places.count {
            let end = min(places.count, i + batch)
            let rows = places[i..<end]
            var b = PostgresBindings()
            b.append(rows.map(\.recordName))
            b.append(rows.map(\.name))
            b.append(rows.map(\.kind))
            b.append(rows.map(\.population))
            b.append(rows.map(\.country))
            b.append(rows.map(\.longitude))
            b.append(rows.map(\.latitude))
            // text[][] must be rectangular: each row's tags as one text, split on the server.
            b.append(rows.map { $0.tags.joined(separator: "\u{1F}") })
            b.append(rows.map(\.description))
            let sql = """
                INSERT INTO place (record_name, name, kind, population, country, location, tags, description, tsv)
                SELECT r, n, k, p, c, ST_SetSRID(ST_MakePoint(x, y), 4326)::geography,
                    CASE WHEN t = '' THEN ARRAY[]::text[] ELSE string_to_array(t, chr(31)) END, d,
                    to_tsvector('simple', n || ' ' || d)
                FROM unnest($1::text[], $2::text[], $3::text[], $4::int8[], $5::text[], $6::float8[], $7::float8[],
                    $8::text[], $9::text[]) AS u(r, n, k, p, c, x, y, t, d)
                """
            try await client.query(PostgresQuery(unsafeSQL: sql, binds: b))
            i = end
            progress(i)
        }
    }

    /// A hand-written bulk load: a table like `place` (its tsvector a generated column), filled by
    /// one `COPY … FROM STDIN` (text format), then its indexes built (PostgreSQL's advice for a
    /// bulk load into an empty table), in one transaction.
    func copyPlaces(_ places: [Place], table: String = "place_bulk") async throws {
        try await exec([
            """
            CREATE TABLE \(table) (
                record_name text COLLATE "C" PRIMARY KEY, name text COLLATE "C" NOT NULL,
                kind text COLLATE "C" NOT NULL, population bigint NOT NULL, country text COLLATE "C" NOT NULL,
                location geography(Point, 4326) NOT NULL, tags text[] NOT NULL, description text NOT NULL,
                tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', name || ' ' || description)) STORED)
            """
        ])
        let indexes = [
            "CREATE INDEX ON \(table) (name)", "CREATE INDEX ON \(table) (kind)",
            "CREATE INDEX ON \(table) (population)", "CREATE INDEX ON \(table) (country)",
            "CREATE INDEX ON \(table) USING gist (location)", "CREATE INDEX ON \(table) USING gin (tags)",
            "CREATE INDEX ON \(table) USING gin (tsv)",
        ]
        func esc(_ s: String) -> String {
            s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\t", with: "\\t")
                .replacingOccurrences(of: "\n", with: "\\n")
        }
        var text = ""
        for p in places {
            let tags = "{" + p.tags.map { "\"" + $0 + "\"" }.joined(separator: ",") + "}"
            text += "\(esc(p.recordName))\t\(esc(p.name))\t\(esc(p.kind))\t\(p.population)\t\(esc(p.country))\t"
            text += "SRID=4326;POINT(\(p.longitude) \(p.latitude))\t\(esc(tags))\t\(esc(p.description))\n"
        }
        let bytes = Array(text.utf8)
        try await client.withConnection { conn in
            try await conn.withTransaction(logger: Self.logger) { conn in
                try await conn.copyFrom(
                    table: table,
                    columns: [
                        "record_name", "name", "kind", "population", "country", "location", "tags", "description",
                    ],
                    logger: Self.logger
                ) { writer in
                    var start = 0
                    while start < bytes.count {
                        let end = min(bytes.count, start + (1 << 20))
                        try await writer.write(ByteBuffer(bytes: bytes[start..<end]))
                        start = end
                    }
                }
                for sql in indexes { try await conn.query(PostgresQuery(unsafeSQL: sql), logger: Self.logger) }
            }
        }
    }

    /// VACUUM ANALYZE: statistics, and the GIN indexes' pending lists merged (a fresh GIN's
    /// pending list makes the planner cost the index as expensive until VACUUM).
    func analyze() async throws { try await exec(["VACUUM ANALYZE place"]) }

    // MARK: - queries (prepared statements)

    static let columns =
        "record_name, name, kind, population, country, ST_Y(location::geometry), ST_X(location::geometry), tags, description"

    typealias PlaceRow = (String, String, String, Int64, String, Double, Double, [String], String)

    static func place(_ r: PlaceRow) -> Place {
        Place(
            recordName: r.0, name: r.1, kind: r.2, population: r.3, country: r.4, latitude: r.5, longitude: r.6,
            tags: r.7, description: r.8)
    }

    /// Runs a prepared statement and reads its rows as places.
    func places<S: PostgresPreparedStatement>(_ s: S) async throws -> [Place] where S.Row == PlaceRow {
        var out: [Place] = []
        for try await r in try await client.execute(s, logger: Self.logger) { out.append(Self.place(r)) }
        return out
    }

    func point(_ name: String) async throws -> [Place] { try await places(Point(name: name)) }

    struct Point: PostgresPreparedStatement {
        static let sql = "SELECT \(PostgresSQLPeer.columns) FROM place WHERE record_name = $1"
        typealias Row = PlaceRow
        var name: String
        func makeBindings() -> PostgresBindings {
            var b = PostgresBindings()
            b.append(name)
            return b
        }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    struct KindByPopulation: PostgresPreparedStatement {
        static let sql =
            "SELECT \(PostgresSQLPeer.columns) FROM place WHERE kind = $1 ORDER BY population DESC, record_name LIMIT 20"
        typealias Row = PlaceRow
        var kind: String
        func makeBindings() -> PostgresBindings {
            var b = PostgresBindings()
            b.append(kind)
            return b
        }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    struct CountryByName: PostgresPreparedStatement {
        static let sql =
            "SELECT \(PostgresSQLPeer.columns) FROM place WHERE country = $1 ORDER BY name, record_name LIMIT 20"
        typealias Row = PlaceRow
        var country: String
        func makeBindings() -> PostgresBindings {
            var b = PostgresBindings()
            b.append(country)
            return b
        }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    struct RangeByPopulation: PostgresPreparedStatement {
        static let sql =
            "SELECT \(PostgresSQLPeer.columns) FROM place WHERE population >= $1 AND population < $2 "
            + "ORDER BY population DESC, record_name LIMIT 20"
        typealias Row = PlaceRow
        var lo: Int64
        var hi: Int64
        func makeBindings() -> PostgresBindings {
            var b = PostgresBindings()
            b.append(lo)
            b.append(hi)
            return b
        }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    struct RangeByName: PostgresPreparedStatement {
        static let sql =
            "SELECT \(PostgresSQLPeer.columns) FROM place WHERE population >= $1 AND population < $2 ORDER BY name, record_name LIMIT 20"
        typealias Row = PlaceRow
        var lo: Int64
        var hi: Int64
        func makeBindings() -> PostgresBindings {
            var b = PostgresBindings()
            b.append(lo)
            b.append(hi)
            return b
        }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    struct KindsByPopulation: PostgresPreparedStatement {
        static let sql =
            "SELECT \(PostgresSQLPeer.columns) FROM place WHERE kind = ANY($1) ORDER BY population DESC, record_name LIMIT 20"
        typealias Row = PlaceRow
        var kinds: [String]
        func makeBindings() -> PostgresBindings {
            var b = PostgresBindings()
            b.append(kinds)
            return b
        }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    struct Prefix: PostgresPreparedStatement {
        static let sql =
            "SELECT \(PostgresSQLPeer.columns) FROM place WHERE name >= $1 AND name < $2 ORDER BY name, record_name LIMIT 20"
        typealias Row = PlaceRow
        var lo: String
        var hi: String
        func makeBindings() -> PostgresBindings {
            var b = PostgresBindings()
            b.append(lo)
            b.append(hi)
            return b
        }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    struct TagByPopulation: PostgresPreparedStatement {
        static let sql =
            "SELECT \(PostgresSQLPeer.columns) FROM place WHERE tags @> ARRAY[$1::text] ORDER BY population DESC, record_name LIMIT 20"
        typealias Row = PlaceRow
        var tag: String
        func makeBindings() -> PostgresBindings {
            var b = PostgresBindings()
            b.append(tag)
            return b
        }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// `tsv @@ to_tsquery('simple', $1)`: `$1` is `a | b` or `a & b`.
    struct Text: PostgresPreparedStatement {
        static let sql = "SELECT \(PostgresSQLPeer.columns) FROM place WHERE tsv @@ to_tsquery('simple', $1)"
        typealias Row = PlaceRow
        var query: String
        func makeBindings() -> PostgresBindings {
            var b = PostgresBindings()
            b.append(query)
            return b
        }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    struct TextRange: PostgresPreparedStatement {
        static let sql =
            "SELECT \(PostgresSQLPeer.columns) FROM place WHERE tsv @@ to_tsquery('simple', $1) AND population BETWEEN $2 AND $3"
        typealias Row = PlaceRow
        var query: String
        var lo: Int64
        var hi: Int64
        func makeBindings() -> PostgresBindings {
            var b = PostgresBindings()
            b.append(query)
            b.append(lo)
            b.append(hi)
            return b
        }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// Within `metres` of (lon, lat) on PostGIS's sphere.
    struct Radius: PostgresPreparedStatement {
        static let sql =
            "SELECT \(PostgresSQLPeer.columns) FROM place WHERE ST_DWithin(location, ST_SetSRID(ST_MakePoint($1, $2), 4326)::geography, $3, false)"
        typealias Row = PlaceRow
        var longitude: Double
        var latitude: Double
        var metres: Double
        func makeBindings() -> PostgresBindings {
            var b = PostgresBindings()
            b.append(longitude)
            b.append(latitude)
            b.append(metres)
            return b
        }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    struct RadiusKind: PostgresPreparedStatement {
        static let sql =
            "SELECT \(PostgresSQLPeer.columns) FROM place WHERE ST_DWithin(location, ST_SetSRID(ST_MakePoint($1, $2), 4326)::geography, $3, false) AND kind = $4"
        typealias Row = PlaceRow
        var longitude: Double
        var latitude: Double
        var metres: Double
        var kind: String
        func makeBindings() -> PostgresBindings {
            var b = PostgresBindings()
            b.append(longitude)
            b.append(latitude)
            b.append(metres)
            b.append(kind)
            return b
        }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// Nearest first: the GiST index's KNN order (`<->`), `OFFSET` for later pages.
    struct Nearest: PostgresPreparedStatement {
        static let sql =
            "SELECT \(PostgresSQLPeer.columns) FROM place ORDER BY location <-> ST_SetSRID(ST_MakePoint($1, $2), 4326)::geography LIMIT 20 OFFSET $3"
        typealias Row = PlaceRow
        var longitude: Double
        var latitude: Double
        var offset: Int64
        func makeBindings() -> PostgresBindings {
            var b = PostgresBindings()
            b.append(longitude)
            b.append(latitude)
            b.append(offset)
            return b
        }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// The page after (population, record name) of `kind` by population descending: keyset.
    struct KindAfter: PostgresPreparedStatement {
        static let sql =
            "SELECT \(PostgresSQLPeer.columns) FROM place WHERE kind = $1 AND (population < $2 OR (population = $2 AND record_name > $3)) "
            + "ORDER BY population DESC, record_name LIMIT 20"
        typealias Row = PlaceRow
        var kind: String
        var population: Int64
        var recordName: String
        func makeBindings() -> PostgresBindings {
            var b = PostgresBindings()
            b.append(kind)
            b.append(population)
            b.append(recordName)
            return b
        }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }
}

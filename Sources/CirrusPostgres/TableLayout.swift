// TableLayout: the table of one record type, generated from its CloudKit schema, and its DDL.
//
// Layout (docs/scale-out.md) — one table per record type in the container's namespace:
//
//     tenant text, zone_name text, zone_owner text, record_name text   PRIMARY KEY, in this order
//     record_type text, change_tag text, created_at / modified_at bigint (ms since 1970),
//     created_by / modified_by text (reference keys), data bytea (RecordLog's record codec:
//     every field type round-trips exactly), tokens tsvector (SEARCHABLE fields only)
//     f_<field> per schema field, typed by the field's value family:
//         number (INT64, DOUBLE) numeric (exact across Int64 and Double), STRING text COLLATE "C"
//         (byte order = Unicode scalar order), TIMESTAMP bigint, BYTES bytea, REFERENCE text
//         COLLATE "C" (the reference key), LOCATION geography(Point,4326) plus f_<field>_x/_y/_z
//         float8 (the unit vector the embedded engine orders distances by), lists as arrays
//
// Every field of the schema gets its column (development answers queries on any typed field);
// the index options decide the indexes: QUERYABLE or SORTABLE scalars a B-tree on (tenant,
// column), QUERYABLE lists a GIN, a QUERYABLE location a GiST, any SEARCHABLE field the GIN on
// `tokens`. ASSET fields and lists of locations have no column (never queryable here).

import RecordModel

/// The value family of a typed column: which SQL type holds it and which values compare.
typealias ColumnFamily = ValueFamily

extension ValueFamily {
    /// The family of a value (nil: an asset or a list).
    init?(of value: FieldValue) {
        if case .list = value { return nil }
        guard let scalar = value.scalarType else { return nil }
        self.init(scalar)
    }

    /// The SQL type of one value.
    var sqlType: String {
        switch self {
        case .number: "numeric"
        case .string, .reference: "text COLLATE \"C\""
        case .date: "bigint"
        case .bytes: "bytea"
        case .location: "geography(Point,4326)"
        }
    }

    /// The SQL type of an array of values (no collation clause: arrays take the column's).
    var sqlElementType: String {
        switch self {
        case .number: "numeric"
        case .string, .reference: "text"
        case .date: "bigint"
        case .bytes: "bytea"
        case .location: "geography"
        }
    }
}

/// One typed column.
struct Column: Sendable, Hashable {
    var field: String
    var name: String
    var family: ColumnFamily
    var isList: Bool
    var options: IndexOptions

    /// The quoted column name.
    var sql: String { SQLName.quote(name) }
    /// The unit-vector columns of a scalar location.
    var vectorColumns: [String] { ["_x", "_y", "_z"].map { SQLName.quote(SQLName.make("", name + $0)) } }
}

/// The table of one record type.
struct TableLayout: Sendable, Hashable {
    var recordType: String
    var namespace: String
    var table: String
    /// Typed columns by field name.
    var columns: [String: Column]
    /// Fields whose words go into `tokens` (SEARCHABLE strings and string lists), sorted.
    var searchableFields: [String]
    /// Every field of the type's schema (with or without a column).
    var fieldNames: Set<String>
    /// ASSET fields (single or lists), sorted: their content hashes go into `asset_refs`, which
    /// keeps the tenant's assets (`cirrus_assets`) from being swept while a record refers to them.
    var assetFields: [String]

    /// Whether the type has asset fields (and so the `asset_refs` column and its index).
    var hasAssets: Bool { !assetFields.isEmpty }

    init(namespace: String, schema: RecordTypeSchema) {
        recordType = schema.name
        self.namespace = namespace
        table = SQLName.make("r_", schema.name)
        var cols: [String: Column] = [:]
        for f in schema.sortedFields {
            guard let family = ColumnFamily(f.type.scalar), !(family == .location && f.type.isList) else { continue }
            cols[f.name] = Column(
                field: f.name, name: SQLName.make("f_", f.name), family: family, isList: f.type.isList,
                options: f.options)
        }
        columns = cols
        fieldNames = Set(schema.fields.keys)
        searchableFields = schema.sortedFields.filter { $0.options.contains(.searchable) && $0.type.scalar == .string }
            .map(\.name)
        assetFields = schema.sortedFields.filter { $0.type.scalar == .asset }.map(\.name)
    }

    /// `"namespace"."r_Type"`.
    var qualifiedTable: String { SQLName.qualified(namespace, table) }

    /// Columns in a stable order (by field name).
    var sortedColumns: [Column] { columns.values.sorted { compareUTF8($0.field, $1.field) < 0 } }

    /// `CREATE TABLE IF NOT EXISTS` with the system columns.
    var createTable: String {
        """
        CREATE TABLE IF NOT EXISTS \(qualifiedTable) (
            tenant text NOT NULL, zone_name text COLLATE "C" NOT NULL, zone_owner text COLLATE "C" NOT NULL,
            record_name text COLLATE "C" NOT NULL, record_type text NOT NULL, change_tag text NOT NULL,
            created_at bigint, modified_at bigint, created_by text COLLATE "C", modified_by text COLLATE "C",
            data bytea NOT NULL, tokens tsvector,
            PRIMARY KEY (tenant, zone_name, zone_owner, record_name))
        """
    }

    /// `ALTER TABLE … ADD COLUMN IF NOT EXISTS` for every typed column (and `asset_refs`).
    var addColumns: [String] {
        sortedColumns.flatMap { c -> [String] in
            let type = c.isList ? c.family.sqlElementType + "[]" : c.family.sqlType
            var out = ["ALTER TABLE \(qualifiedTable) ADD COLUMN IF NOT EXISTS \(c.sql) \(type)"]
            if c.family == .location {
                out += c.vectorColumns.map { "ALTER TABLE \(qualifiedTable) ADD COLUMN IF NOT EXISTS \($0) float8" }
            }
            return out
        } + (hasAssets ? ["ALTER TABLE \(qualifiedTable) ADD COLUMN IF NOT EXISTS asset_refs text[]"] : [])
    }

    /// The indexes the options ask for, by name → `CREATE INDEX IF NOT EXISTS` statement.
    var indexes: [String: String] {
        var out: [String: String] = [:]
        func add(_ suffix: String, _ body: String) {
            let name = SQLName.make("i_", table + "_" + suffix)
            out[name] = "CREATE INDEX IF NOT EXISTS \(SQLName.quote(name)) ON \(qualifiedTable) \(body)"
        }
        for c in sortedColumns where !c.options.isDisjoint(with: [.queryable, .sortable]) {
            switch (c.family, c.isList) {
            case (.location, _): if c.options.contains(.queryable) { add(c.field, "USING gist (\(c.sql))") }
            case (_, true): if c.options.contains(.queryable) { add(c.field, "USING gin (\(c.sql))") }
            default: add(c.field, "(tenant, \(c.sql))")
            }
        }
        if !searchableFields.isEmpty { add("tokens", "USING gin (tokens)") }
        // A field name starts with a letter: "_assets" names no field's index.
        if hasAssets { add("_assets", "USING gin (asset_refs)") }
        return out
    }
}

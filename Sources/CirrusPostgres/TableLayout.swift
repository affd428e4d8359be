// TableLayout: the table of one record type, generated from its CloudKit schema, and its DDL.
//
// Layout (docs/scale-out.md) — one table per record type in the container's namespace:
//
//     tenant text, zone_name text, zone_owner text, record_name text   PRIMARY KEY, in this order
//     record_type text, change_tag text, created_at / modified_at bigint (ms since 1970),
//     created_by / modified_by text (reference keys), data bytea (RecordLog's record codec:
//     every field type round-trips exactly), tokens tsvector (SEARCHABLE fields only)
//     f_<field> per schema field, typed by the field's type:
//         INT64 bigint, DOUBLE float8 (compared exactly across the two: ColumnType.bound), STRING text COLLATE "C"
//         (byte order = Unicode scalar order), TIMESTAMP bigint, BYTES bytea, REFERENCE text
//         COLLATE "C" (the reference key), LOCATION geography(Point,4326) plus f_<field>_x/_y/_z
//         float8 (the unit vector the embedded engine orders distances by), lists as arrays
//
// Every field of the schema gets its column (development answers queries on any typed field);
// the index options decide the indexes: QUERYABLE or SORTABLE scalars a B-tree on (tenant,
// column), QUERYABLE lists a GIN, a QUERYABLE location a GiST, any SEARCHABLE field the GIN on
// `tokens`. ASSET fields and lists of locations have no column (never queryable here).

import RecordModel

/// The value family of a typed column: which values compare.
typealias ColumnFamily = ValueFamily

extension ValueFamily {
    /// The family of a value (nil: an asset or a list).
    init?(of value: FieldValue) {
        if case .list = value { return nil }
        guard let scalar = value.scalarType else { return nil }
        self.init(scalar)
    }
}

/// The SQL type of a column's values: the field's value family and, for numbers, its kind —
/// INT64 `bigint`, DOUBLE `float8`: fixed-width keys that B-tree deduplication merges and that
/// compare natively, where a `numeric` key (once used for both kinds) is variable-length, never
/// deduplicated and compared digit group by digit group (docs/scale-out.md "Table layout").
/// Tables made with `numeric` are retyped when a store connects.
struct ColumnType: Sendable, Hashable {
    var family: ColumnFamily
    /// An INT64 field (`bigint`); false for DOUBLE (`float8`) and every other family.
    var isInteger: Bool

    /// The column type of a field's scalar type (nil: an asset, which has no column).
    init?(_ scalar: ScalarType) {
        guard let family = ColumnFamily(scalar) else { return nil }
        self.family = family
        isInteger = scalar == .int64
    }

    /// The type of a column of another family than numbers (a system field's; a location's).
    init(system family: ColumnFamily) {
        self.family = family
        isInteger = false
    }

    /// The SQL type of one value.
    var sqlType: String {
        switch family {
        case .number: isInteger ? "bigint" : "float8"
        case .string, .reference: "text COLLATE \"C\""
        case .date: "bigint"
        case .bytes: "bytea"
        case .location: "geography(Point,4326)"
        }
    }

    /// The SQL type of an array of values (no collation clause: arrays take the column's).
    var sqlElementType: String {
        switch family {
        case .number: isInteger ? "bigint" : "float8"
        case .string, .reference: "text"
        case .date: "bigint"
        case .bytes: "bytea"
        case .location: "geography"
        }
    }

    /// The cast of a value's text form (SQLBuilder).
    var castType: String {
        switch family {
        case .location: "geography"
        default: sqlType
        }
    }

    /// `v` as a value of this column's type when it is exactly one: the same value (`5.0` in an
    /// INT64 column is `5`; `2^53 + 1` in a DOUBLE column has no exact form), or nil — a value of
    /// another family, or a number this type cannot hold (such a value equals no stored one).
    func exact(_ v: FieldValue) -> FieldValue? {
        guard ColumnFamily(of: v) == family else { return nil }
        guard family == .number else { return v }
        switch (v, isInteger) {
        case (.int64, true), (.double, false): return v
        case (.double(let d), _) where !d.isFinite: return nil  // stored numbers are finite
        case (.double(let d), true): return Int64(exactly: d).map(FieldValue.int64)
        case (.int64(let i), false): return Double(exactly: i).map(FieldValue.double)
        default: return nil
        }
    }

    /// How `column op t` reads in this number column's type (op one of `<`, `<=`, `>`, `>=`; `t`
    /// a number): the comparison with a bound of the column's type that keeps exactly the same
    /// values, or whether every stored value passes or none does. `1.5` against INT64 values:
    /// `> 1.5` is `>= 2`; `2^53 + 1` against DOUBLE values: `<= 2^53 + 1` is `<= 2^53`.
    func bound(_ op: String, _ t: FieldValue) -> NumberBound {
        let up = op == ">" || op == ">="
        if case .double(let d) = t, !d.isFinite {
            // Stored numbers are finite; NaN orders below every number (compareNumbers).
            return (d.isNaN || d < 0) == up ? .everyValue : .noValue
        }
        if let e = exact(t) { return .compare(op, e) }
        switch t {
        case .double(let d):  // an INT64 column; d is not an Int64
            if d >= 9_223_372_036_854_775_808.0 { return up ? .noValue : .everyValue }
            if d < -9_223_372_036_854_775_808.0 { return up ? .everyValue : .noValue }
            // Not integral, so |d| < 2^52 and both roundings are Int64s.
            return up ? .compare(">=", .int64(Int64(d.rounded(.up)))) : .compare("<=", .int64(Int64(d.rounded(.down))))
        case .int64(let i):  // a DOUBLE column; i is not a Double (|i| > 2^53)
            let n = Double(i)  // the nearest Double, an integer
            let above = n >= 9_223_372_036_854_775_808.0 || Int64(n) > i
            let hi = above ? n : n.nextUp, lo = above ? n.nextDown : n
            return up ? .compare(">=", .double(hi)) : .compare("<=", .double(lo))
        default:
            return .noValue
        }
    }
}

/// A number comparison in a column's type (`ColumnType.bound`).
enum NumberBound: Equatable {
    /// `column op value`, the value of the column's type.
    case compare(String, FieldValue)
    /// Every stored value passes (`column IS NOT NULL`).
    case everyValue
    /// No value passes.
    case noValue
}

/// One typed column.
struct Column: Sendable, Hashable {
    let field: String
    let name: String
    let type: ColumnType
    let isList: Bool
    let options: IndexOptions
    /// The quoted column name (made once: every statement's text names it).
    let sql: String
    /// The unit-vector columns of a scalar location, quoted.
    let vectorColumns: [String]

    init(field: String, name: String, type: ColumnType, isList: Bool, options: IndexOptions) {
        self.field = field
        self.name = name
        self.type = type
        self.isList = isList
        self.options = options
        sql = SQLName.quote(name)
        vectorColumns = ["_x", "_y", "_z"].map { SQLName.quote(SQLName.make("", name + $0)) }
    }

    /// The family of the column's values.
    var family: ColumnFamily { type.family }
}

/// The table of one record type.
struct TableLayout: Sendable, Hashable {
    let recordType: String
    let namespace: String
    let table: String
    /// Typed columns by field name.
    let columns: [String: Column]
    /// The columns in a stable order (by field name): a batch's row texts follow it.
    let sortedColumns: [Column]
    /// `"namespace"."r_Type"`.
    let qualifiedTable: String
    /// The key of the namespace's public database: its rows have B-trees of their own (`indexes`).
    let publicTenantKey: String
    /// `publicTenantKey` as an SQL literal.
    let publicTenant: String
    /// Fields whose words go into `tokens` (SEARCHABLE strings and string lists), sorted.
    var searchableFields: [String]
    /// Every field of the type's schema (with or without a column).
    var fieldNames: Set<String>
    /// ASSET fields (single or lists), sorted: their content hashes go into `asset_refs`, which
    /// keeps the tenant's assets (`cirrus_assets`) from being swept while a record refers to them.
    var assetFields: [String]

    /// Whether the type has asset fields (and so the `asset_refs` column and its index).
    var hasAssets: Bool { !assetFields.isEmpty }

    init(namespace: String, publicTenant: String, schema: RecordTypeSchema) {
        recordType = schema.name
        self.namespace = namespace
        table = SQLName.make("r_", schema.name)
        var cols: [String: Column] = [:]
        for f in schema.sortedFields {
            guard let type = ColumnType(f.type.scalar), !(type.family == .location && f.type.isList) else { continue }
            cols[f.name] = Column(
                field: f.name, name: SQLName.make("f_", f.name), type: type, isList: f.type.isList,
                options: f.options)
        }
        columns = cols
        sortedColumns = cols.values.sorted { compareUTF8($0.field, $1.field) < 0 }
        qualifiedTable = SQLName.qualified(namespace, table)
        publicTenantKey = publicTenant
        self.publicTenant = SQLName.literal(publicTenant)
        fieldNames = Set(schema.fields.keys)
        searchableFields = schema.sortedFields.filter { $0.options.contains(.searchable) && $0.type.scalar == .string }
            .map(\.name)
        assetFields = schema.sortedFields.filter { $0.type.scalar == .asset }.map(\.name)
    }

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
            let type = c.isList ? c.type.sqlElementType + "[]" : c.type.sqlType
            var out = ["ALTER TABLE \(qualifiedTable) ADD COLUMN IF NOT EXISTS \(c.sql) \(type)"]
            if c.family == .location {
                out += c.vectorColumns.map { "ALTER TABLE \(qualifiedTable) ADD COLUMN IF NOT EXISTS \($0) float8" }
            }
            return out
        } + (hasAssets ? ["ALTER TABLE \(qualifiedTable) ADD COLUMN IF NOT EXISTS asset_refs text[]"] : [])
    }

    /// The predicate of the public database's B-tree on `field`: its rows, written as
    /// `tenant IN (<public key>, <public key>#<field>)`. The second key is no tenant's (a public
    /// key ends in `/public`, a private one holds `/private:`); it only makes each index's
    /// predicate a clause of its own. PostgreSQL leaves a bitmap path out of an AND when one of
    /// its index-predicate clauses equals one of the paths already chosen
    /// (`choose_bitmap_and`), so B-trees that shared `tenant = <public key>` were never ANDed:
    /// `timezone == … AND population > …` read one and filtered the other on the heap. A page's
    /// `tenant = <public key>` implies each of these predicates, and the planner proves it.
    /// (Indexes made with the shared predicate were named `<field>.public`; a store that
    /// connects replaces them: `PostgresStore.start`.)
    func publicPredicate(_ field: String) -> String {
        "tenant IN (\(publicTenant), \(SQLName.literal(publicTenantKey + "#" + field)))"
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
            default:
                // Two partial B-trees that split the rows: the public database's without the
                // tenant (about half the pages: a shared database is where the large tables
                // are), the private databases' led by it. (A "." never occurs in a field name.)
                // The private ones never AND with each other: they all lead with `tenant = $1`
                // (publicPredicate says why that keeps PostgreSQL from ANDing them).
                add(c.field + ".pub", "(\(c.sql)) WHERE \(publicPredicate(c.field))")
                add(c.field + ".private", "(tenant, \(c.sql)) WHERE tenant <> \(publicTenant)")
            }
        }
        if !searchableFields.isEmpty { add("tokens", "USING gin (tokens)") }
        // A field name starts with a letter: "_assets" names no field's index.
        if hasAssets { add("_assets", "USING gin (asset_refs)") }
        return out
    }
}

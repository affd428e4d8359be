// Number columns: INT64 fields are `bigint`, DOUBLE fields `float8`; a table made when numbers
// were one `numeric` column, with B-trees not split by database, is brought to the current
// layout when a store connects, and answers as before.

import CirrusFacade
import CirrusPostgres
import PostgresNIO
import RecordModel
import Testing

@Suite(.enabled(if: PG.available, PG.disabledReason))
struct PostgresNumberColumnTests {
    static let schema = Schema(
        environment: .development,
        recordTypes: [
            RecordTypeSchema(
                name: "Reading",
                fields: [
                    FieldSchema(name: "count", type: .int64, options: [.queryable, .sortable]),
                    FieldSchema(name: "ratio", type: .double, options: [.queryable, .sortable]),
                    FieldSchema(name: "counts", type: .list(.int64), options: [.queryable]),
                    FieldSchema(name: "ratios", type: .list(.double), options: [.queryable]),
                ])
        ])

    static func record(_ name: String, _ count: Int64, _ ratio: Double, _ counts: [Int64]) -> Record {
        var r = Record(recordType: "Reading", recordID: RecordID(recordName: name))
        r["count"] = .int64(count)
        r["ratio"] = .double(ratio)
        r["counts"] = .list(counts.map(FieldValue.int64))
        r["ratios"] = .list([.double(ratio), .double(ratio * 2)])
        return r
    }

    /// Two text columns of a catalog query, as first → second.
    static func catalog(_ query: PostgresQuery) async throws -> [String: String] {
        try await Shards.withConnection(PG.url!) { c in
            var out: [String: String] = [:]
            for try await (k, v) in try await c.query(query, logger: Shards.logger).decode((String, String).self) {
                out[k] = v
            }
            return out
        }
    }

    /// The columns' types as the catalog has them (`int8`, `float8`, `_int8`, …).
    static func columnTypes(_ namespace: String) async throws -> [String: String] {
        try await catalog(
            "SELECT column_name, udt_name FROM information_schema.columns WHERE table_schema = \(namespace) AND table_name = 'r_Reading' AND column_name LIKE 'f\\_%'"
        )
    }

    /// The `i_` indexes of the namespace, name → definition.
    static func indexes(_ namespace: String) async throws -> [String: String] {
        try await catalog(
            "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = \(namespace) AND indexname LIKE 'i\\_%'")
    }

    static func names(_ store: PostgresStore, _ predicate: String) async throws -> [String] {
        try await store.records(matching: store.query("Reading", predicate)).records.map(\.recordID.recordName).sorted()
    }

    @Test func numbersHaveTheirKindsColumnsAndCompareExactlyAcrossKinds() async throws {
        let store = try await PG.store(PG.freshContainer("numbers"))
        try await store.apply(schema: Self.schema)
        let types = try await Self.columnTypes(store.tenant.namespace)
        #expect(types == ["f_count": "int8", "f_ratio": "float8", "f_counts": "_int8", "f_ratios": "_float8"])
        var big = Self.record("big", (1 << 53) + 1, 9_007_199_254_740_992, [])
        big["count"] = .double(4)  // an integral Double is stored in the INT64 column as 4
        _ = try await store.modify(
            saving: [Self.record("a", 1, 0.1, [1, 2]), Self.record("b", 2, 2.5, [3]), big], policy: .allKeys,
            atomically: true)
        #expect(try await Self.names(store, "count > 1.5") == ["b", "big"])
        #expect(try await Self.names(store, "count <= 1.99") == ["a"])
        #expect(try await Self.names(store, "count == 2.0") == ["b"])
        #expect(try await Self.names(store, "count == 2.5").isEmpty)
        #expect(try await Self.names(store, "count != 2.5") == ["a", "b", "big"])
        #expect(try await Self.names(store, "count < 1e30") == ["a", "b", "big"])
        #expect(try await Self.names(store, "count IN {1.0, 4.5}") == ["a"])
        #expect(try await Self.names(store, "ratio == 0.1") == ["a"])
        #expect(try await Self.names(store, "ratio > 9007199254740991") == ["big"])
        #expect(try await Self.names(store, "ratio >= 9007199254740993").isEmpty)
        #expect(try await Self.names(store, "counts CONTAINS 2.0") == ["a"])
        #expect(try await Self.names(store, "counts CONTAINS 2.5").isEmpty)
        #expect(try await Self.names(store, "ratios CONTAINS 5") == ["b"])
        // A value with no exact form in its field's kind is refused, naming the field.
        var bad = Self.record("bad", 1, 1, [])
        bad["count"] = .double(1.5)
        await #expect(throws: CirrusError.self) {
            _ = try await store.modify(saving: [bad], policy: .allKeys, atomically: true)
        }
        bad = Self.record("bad", 1, 1, [])
        bad["ratio"] = .int64((1 << 53) + 1)
        await #expect(throws: CirrusError.self) {
            _ = try await store.modify(saving: [bad], policy: .allKeys, atomically: true)
        }
        #expect(try await Self.names(store, "TRUEPREDICATE") == ["a", "b", "big"])
        await store.close()
    }

    /// The public database's B-trees each have a predicate clause of their own (PostgreSQL ANDs
    /// two bitmap paths only when no predicate clause of one equals one of the other:
    /// TableLayout.publicPredicate); ones made with the shared `tenant = <public key>` are
    /// replaced when a store connects, and queries answer as before.
    @Test func publicBTreesHavePredicatesOfTheirOwnAndOldOnesAreReplacedAtConnect() async throws {
        let container = PG.freshContainer("predicates")
        let store = try await PG.store(container)
        try await store.apply(schema: Self.schema)
        _ = try await store.modify(
            saving: [Self.record("a", 1, 0.5, [1]), Self.record("b", 2, 2.5, [3]), Self.record("c", 3, 0.5, [])],
            policy: .allKeys, atomically: true)
        let namespace = store.tenant.namespace
        let key = store.tenant.publicKey
        await store.close()
        let table = "\"\(namespace)\".\"r_Reading\""
        try await Shards.withConnection(PG.url!) { c in
            // The public B-trees as the version before made them: one predicate for all.
            for (name, _) in try await Self.indexes(namespace) where name.hasSuffix(".pub") {
                try await Shards.exec(c, "DROP INDEX \"\(namespace)\".\"\(name)\"")
            }
            for f in ["count", "ratio"] {
                try await Shards.exec(
                    c, "CREATE INDEX \"i_r_Reading_\(f).public\" ON \(table) (f_\(f)) WHERE tenant = '\(key)'")
            }
        }
        let reopened = try await PG.store(container)
        let indexes = try await Self.indexes(namespace)
        #expect(indexes.keys.filter { $0.hasSuffix(".public") }.isEmpty)
        let predicates = ["count", "ratio"].compactMap { f -> String? in
            guard let definition = indexes["i_r_Reading_\(f).pub"], let at = definition.range(of: " WHERE ") else {
                return nil
            }
            return String(definition[at.upperBound...])
        }
        #expect(predicates.count == 2)
        #expect(Set(predicates).count == 2)  // no clause in common
        #expect(predicates.allSatisfy { $0.contains("'\(key)'::text") })
        #expect(try await Self.names(reopened, "count > 1 AND ratio == 0.5") == ["c"])
        #expect(try await Self.names(reopened, "count < 3 AND ratio > 0") == ["a", "b"])
        await reopened.close()
    }

    @Test func aTableMadeWithNumericColumnsIsRetypedAtConnect() async throws {
        let container = PG.freshContainer("numeric")
        let store = try await PG.store(container)
        try await store.apply(schema: Self.schema)
        _ = try await store.modify(
            saving: [Self.record("a", 1, 0.1, [1, 2]), Self.record("b", 2, 2.5, [3]), Self.record("c", 7, -3, [])],
            policy: .allKeys, atomically: true)
        let namespace = store.tenant.namespace
        await store.close()
        // The table as an earlier version made it: every number column `numeric`; and a
        // non-integral number in the INT64 column, which that version accepted.
        let table = "\"\(namespace)\".\"r_Reading\""
        try await Shards.withConnection(PG.url!) { c in
            try await Shards.exec(
                c,
                "ALTER TABLE \(table) ALTER COLUMN f_count TYPE numeric, ALTER COLUMN f_ratio TYPE numeric, "
                    + "ALTER COLUMN f_counts TYPE numeric[], ALTER COLUMN f_ratios TYPE numeric[]")
            try await Shards.exec(c, "UPDATE \(table) SET f_count = 6.5 WHERE record_name = 'c'")
            // And its B-trees as that version made them: one per field, led by the tenant.
            for (name, _) in try await Self.indexes(namespace) where name.contains(".") {
                try await Shards.exec(c, "DROP INDEX \"\(namespace)\".\"\(name)\"")
            }
            try await Shards.exec(c, "CREATE INDEX \"i_r_Reading_count\" ON \(table) (tenant, f_count)")
        }
        #expect(try await Self.columnTypes(namespace)["f_count"] == "numeric")
        let reopened = try await PG.store(container)
        let types = try await Self.columnTypes(namespace)
        #expect(types == ["f_count": "int8", "f_ratio": "float8", "f_counts": "_int8", "f_ratios": "_float8"])
        #expect(try await Self.names(reopened, "count > 0") == ["a", "b"])  // c's 6.5 had no bigint form
        #expect(try await Self.names(reopened, "ratio == 0.1") == ["a"])
        #expect(try await Self.names(reopened, "ratio < 0") == ["c"])
        #expect(try await Self.names(reopened, "counts CONTAINS 2") == ["a"])
        #expect(try await Self.names(reopened, "ratios CONTAINS 5") == ["b"])
        #expect(try await reopened.record(for: RecordID(recordName: "c"))["count"] == .int64(7))
        // Two partial B-trees per field now, split by database; the old one is gone.
        let indexes = try await Self.indexes(namespace)
        #expect(indexes["i_r_Reading_count"] == nil)
        let key = reopened.tenant.publicKey
        #expect(
            indexes["i_r_Reading_count.pub"]?.contains(
                "(f_count) WHERE (tenant = ANY (ARRAY['\(key)'::text, '\(key)#count'::text]))") == true)
        #expect(
            indexes["i_r_Reading_count.private"]?.contains("(tenant, f_count) WHERE (tenant <> '\(key)'::text)") == true
        )
        #expect(try await Self.names(reopened, "count > 0 AND ratio > 0") == ["a", "b"])
        await reopened.close()
    }
}

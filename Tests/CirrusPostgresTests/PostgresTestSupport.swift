// What the CirrusPostgres tests share: the server URL from CIRRUS_POSTGRES_URL (tests that need
// a server are disabled without it — `make test-postgres` brings a throwaway cluster up), a
// fresh container per test (its own namespace, so tests run in parallel and leave nothing
// behind that another test reads), and a clock that advances on every read.

import CirrusPostgres
import CirrusTestSupport
import Foundation
import NIOConcurrencyHelpers
import QueryChecker
import RecordModel
import Testing

enum PG {
    /// The server, from `CIRRUS_POSTGRES_URL`.
    static let url: String? = ProcessInfo.processInfo.environment["CIRRUS_POSTGRES_URL"]

    /// Whether a server is configured.
    static var available: Bool { url != nil }

    static let disabledReason: Comment =
        "CIRRUS_POSTGRES_URL is not set: run `make test-postgres` (throwaway PostgreSQL + PostGIS cluster)"

    /// A random checked query of Place: up to two of the generator's filters ANDed, its sorts.
    static func randomPlaceQuery(_ data: inout PlaceGenerator) throws -> Query {
        var format: [String] = []
        var args: [PredicateArgument] = []
        for _ in 0..<(data.rng.below(3)) {
            let (f, a) = data.filter()
            format.append(f)
            args += a
        }
        let text = format.isEmpty ? "TRUEPREDICATE" : format.joined(separator: " AND ")
        let checked = try QueryChecker.check(text, context: CheckContext(arguments: args))
        return Query(recordType: "Place", predicate: checked.predicate, sortDescriptors: data.sorts())
    }

    /// `r` with each number that has no exact form in its field's kind (a non-integral Double in an
    /// INT64 field; an Int64 beyond 2^53 that no Double equals in a DOUBLE field) replaced by the
    /// nearest value of the kind: the store refuses those (its columns are `bigint` and `float8`),
    /// the generators make them on purpose for the embedded engine's tests.
    static func conforming(_ r: Record, to type: RecordTypeSchema) -> Record {
        func fit(_ v: FieldValue, _ kind: ScalarType) -> FieldValue {
            switch (v, kind) {
            case (.double(let d), .int64) where Int64(exactly: d) == nil: .int64(Int64(d.rounded(.down)))
            case (.int64(let i), .double) where Double(exactly: i) == nil: .double(Double(i))
            case (.list(let items), _): .list(items.map { fit($0, kind) })
            default: v
            }
        }
        var out = r
        for (name, v) in r.fields {
            if let f = type.fields[name] { out.fields[name] = fit(v, f.type.scalar) }
        }
        return out
    }

    /// A container id no other test uses.
    static func freshContainer(_ name: String) -> String {
        "iCloud.test.\(name).\(UInt64.random(in: 0..<UInt64.max) % 1_000_000_000)"
    }

    /// A clock giving 1000, 2000, 3000, … ms.
    static func steppingClock() -> @Sendable () -> Timestamp {
        let n = NIOLockedValueBox<Int64>(0)
        return {
            n.withLockedValue {
                $0 += 1000
                return Timestamp(millisecondsSince1970: $0)
            }
        }
    }

    /// A store for `database` of `container` in development. Its deadline (60 s unless a test
    /// asks for another) is not a speed test: on a slow 2-core host, with the suites running in
    /// parallel on one cluster, a 400-record batch into a table with GiST, GIN and B-tree
    /// indexes went past the library's 15 s default twice.
    static func store(
        _ container: String, _ database: PostgresTenant.Database = .public, timeout: Duration = .seconds(60),
        clock: @escaping @Sendable () -> Timestamp = steppingClock()
    ) async throws -> PostgresStore {
        try await PostgresStore.connect(
            url: url!,
            tenant: PostgresTenant(containerID: container, environment: .development, database: database),
            timeout: timeout, clock: clock)
    }
}

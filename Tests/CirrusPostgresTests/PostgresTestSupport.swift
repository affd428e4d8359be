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

// swift-tools-version: 6.1
//
// Cirrus — a CloudKit-compatible predicate query engine.
// Module layout and data flow: docs/ARCHITECTURE.md.

import PackageDescription

// Concrete generic types (a dictionary keyed by a type of ours, a `Set<UInt64>`) get their
// metadata from direct accessor calls, not from mangled names: a mangled name is demangled at its
// first use and each of its conformances looked up by the runtime, which on a miss scans every
// conformance record of the process. In a fresh process that first use is the open, and it was
// about 40% of opening a container and answering the first lookup (docs/benchmarks.md, "Fresh
// open: type metadata without mangled names"). The flag is an unsafe flag, which SwiftPM refuses
// in a package resolved by version, so a checkout of this package as a dependency (SwiftPM's and
// Xcode's `checkouts/` directories) builds without it, as does CIRRUS_PORTABLE_BUILD=1.
let directMetadata: [SwiftSetting] =
    Context.packageDirectory.contains("/checkouts/") || Context.environment["CIRRUS_PORTABLE_BUILD"] == "1"
    ? [] : [.unsafeFlags(["-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors"])]

let strict: [SwiftSetting] =
    [
        .swiftLanguageMode(.v6),
        .enableUpcomingFeature("ExistentialAny"),
    ] + directMetadata

let package = Package(
    name: "Cirrus",
    // Linux first; on Apple platforms, the Synchronization module's Mutex (RecordModel) needs these.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "PredicateSyntax", targets: ["PredicateSyntax"]),
        .library(name: "RecordModel", targets: ["RecordModel"]),
        .library(name: "CirrusIO", targets: ["CirrusIO"]),
        .library(name: "RecordLog", targets: ["RecordLog"]),
        .library(name: "QueryChecker", targets: ["QueryChecker"]),
        .library(name: "Indexes", targets: ["Indexes"]),
        .library(name: "QueryPlanner", targets: ["QueryPlanner"]),
        .library(name: "QueryExecution", targets: ["QueryExecution"]),
        .library(name: "CirrusFacade", targets: ["CirrusFacade"]),
        .library(name: "CirrusEmbedded", targets: ["CirrusEmbedded"]),
        .library(name: "Cirrus", targets: ["Cirrus"]),
        .library(name: "CoreDataMirror", targets: ["CoreDataMirror"]),
        .library(name: "CirrusShell", targets: ["CirrusShell"]),
        .library(name: "CirrusServer", targets: ["CirrusServer"]),
        .library(name: "CirrusPostgres", targets: ["CirrusPostgres"]),
        .library(name: "CirrusKit", targets: ["CirrusKit"]),
        .executable(name: "cirrus", targets: ["CirrusCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // SHA-256 for asset names and HMAC-SHA256 for cursor tokens.
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        // HTTP for `cirrus serve` (CloudKit Web Services).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        // `cirrus serve`'s metrics: the swift-metrics API, exported in the Prometheus text format.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // A channel handler counting open connections (NIOCore, which Hummingbird is built on).
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // The PostgreSQL backend's client (pure Swift, no libpq). docs/scale-out.md.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // CirrusKit's remote backend: Web Services requests over HTTP (docs/cirruskit.md).
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    ],
    targets: [
        // Tokens, lexer, parser, SyntaxTree, printer. Depends on nothing.
        .target(name: "PredicateSyntax", swiftSettings: strict),
        // Values, records, schema, the checked query. Depends on nothing but Foundation.
        .target(name: "RecordModel", swiftSettings: strict),
        // The GEOS C API (libgeos_c) as a system library; planar geometry and the STRtree.
        .systemLibrary(name: "CGEOS", pkgConfig: "geos", providers: [.apt(["libgeos-dev"])]),
        // OrderedIndex (counted B+tree), TextIndex (tokenizer + postings), SpatialIndex (geohash, R-tree).
        .target(name: "Indexes", dependencies: ["RecordModel", "CGEOS", "CPrefetch"], swiftSettings: strict),
        // The I/O seam and byte coding, below the store: the FileSystem protocol (POSIX, and the
        // fault-injecting in-memory fake), mapped files, the clock, ByteReader/ByteWriter, CRC-32C
        // and the record codec. What the shell, the server and the query layers need of the disk
        // and of bytes, without the store; and the record reader both engines' imports use (JSON
        // Lines, gzip, property lists).
        .target(name: "CirrusIO", dependencies: ["RecordModel", "CZlib", "CCRC32C"], swiftSettings: strict),
        // CRC-32C with the CPU's instruction (SSE 4.2 or the Arm CRC extension), for CirrusIO's CRC32C.
        .target(name: "CCRC32C"),
        // The record store: append-only log, group-commit writer, recovery, compaction, data
        // segments, checkpoints, repair, import/export. Format: docs/log-format.md.
        .target(
            name: "RecordLog",
            dependencies: [
                "CirrusIO", "RecordModel", "CPrefetch", .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        // The compiler's prefetch hint (a header-only C function), for reading mapped rows ahead.
        .target(name: "CPrefetch"),
        // zlib (system library) for gzip-compressed imports (CirrusIO's RecordTransfer).
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // Kill-test child: writes with .everyCommit and prints every acknowledged commit.
        .executableTarget(
            name: "cirrus-logwriter", dependencies: ["CirrusIO", "RecordLog", "RecordModel"], swiftSettings: strict),
        // Measurements of the log (bulk append, reopen, commit latency, group commit).
        .executableTarget(
            name: "cirrus-logbench", dependencies: ["CirrusIO", "RecordLog", "RecordModel"], swiftSettings: strict),
        // SyntaxTree + arguments + Schema → checked predicate (the CKQuery subset).
        .target(name: "QueryChecker", dependencies: ["PredicateSyntax", "RecordModel"], swiftSettings: strict),
        // The façade: Container → Database (public / private per user) → zones, records, changes,
        // subscriptions, user discovery; the backend protocols every engine implements, the one
        // CloudKit error type, access and subscription rules. No storage. docs/database.md.
        .target(
            name: "CirrusFacade",
            dependencies: ["RecordModel", "QueryChecker", "QueryPlanner", "QueryExecution", "PredicateSyntax"],
            swiftSettings: strict),
        // The embedded engine: a container directory — the record log and segments, Cirrus's own
        // indexes, planner and executor, caches, read merges, the write path, subscriptions and
        // user accounts on disk, checkpoints, import, repair — as the façade's backend.
        .target(
            name: "CirrusEmbedded",
            dependencies: [
                "CirrusFacade", "CirrusIO", "RecordModel", "RecordLog", "Indexes", "QueryChecker", "QueryPlanner",
                "QueryExecution", "PredicateSyntax", "CPrefetch", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        // What users import: the façade and the embedded engine, re-exported (`Container.open(at:)`).
        .target(name: "Cirrus", dependencies: ["CirrusFacade", "CirrusEmbedded"], swiftSettings: strict),
        // The command line and REPL as a library, so tests drive it without a terminal.
        .target(
            name: "CirrusShell",
            dependencies: [
                "PredicateSyntax", "RecordModel", "QueryChecker", "QueryExecution", "CirrusIO", "RecordLog", "Cirrus",
                "CoreDataMirror",
            ],
            swiftSettings: strict),
        // `cirrus serve`: CloudKit Web Services over HTTP (Hummingbird), API tokens, web auth tokens
        // and server-to-server signatures. docs/web-services.md.
        .target(
            name: "CirrusServer",
            dependencies: [
                "Cirrus", "RecordModel", "QueryChecker", "QueryPlanner", "QueryExecution", "CirrusIO",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            // The dashboard: plain HTML, CSS and ES modules served at `/`.
            resources: [.copy("Dashboard")],
            swiftSettings: strict),
        // libedit (readline-compatible API) for the REPL's line editing, history and completion.
        .systemLibrary(name: "CEditLine", pkgConfig: "libedit", providers: [.apt(["libedit-dev"])]),
        // main only: ArgumentParser → CirrusShell.
        .executableTarget(
            name: "CirrusCLI",
            dependencies: [
                "CirrusPostgres",
                "CirrusShell", "CirrusServer", "Cirrus", "QueryChecker", "RecordModel", "CEditLine",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict),

        // Core Data models (.xcdatamodeld XML) → the CloudKit schema mirroring produces, its rules.
        .target(name: "CoreDataMirror", dependencies: ["RecordModel", "PredicateSyntax"], swiftSettings: strict),
        // Checked query + index statistics → the cheapest QueryPlan, explain, index advisor. No I/O.
        .target(name: "QueryPlanner", dependencies: ["RecordModel"], swiftSettings: strict),
        // Operators, the single-record evaluator (the full-scan oracle), cursors.
        .target(
            name: "QueryExecution",
            dependencies: [
                "RecordModel", "Indexes", "QueryPlanner", "CirrusIO",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        // Records and checked queries on PostgreSQL + PostGIS, one tenant per store: typed columns
        // from the schema, checked filters as parameterized SQL, keyset cursors. docs/scale-out.md.
        .target(
            name: "CirrusPostgres",
            dependencies: [
                "CirrusFacade", "QueryExecution", "RecordModel", "QueryChecker", "PredicateSyntax", "CirrusIO", "Indexes",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: strict),
        // CloudKit's own Swift API (CKContainer, CKDatabase, CKRecord, CKQuery, operations, CKError,
        // NSPredicate(format:) on Linux) as an adapter over the façade (embedded) or over Web
        // Services JSON (remote). docs/cirruskit.md.
        .target(
            name: "CirrusKit",
            dependencies: [
                "Cirrus", "RecordModel", "QueryChecker", "PredicateSyntax", "QueryExecution",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        // Shared test helpers: a seeded, printable random source.
        .target(
            name: "CirrusTestSupport",
            dependencies: ["Cirrus", "RecordModel", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict),

        .testTarget(
            name: "PredicateSyntaxTests", dependencies: ["PredicateSyntax", "CirrusTestSupport"],
            swiftSettings: strict),
        .testTarget(name: "IndexesTests", dependencies: ["Indexes", "CirrusTestSupport"], swiftSettings: strict),
        .testTarget(
            name: "RecordLogTests", dependencies: ["CirrusIO", "RecordLog", "RecordModel", "CirrusTestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "RecordModelTests", dependencies: ["RecordModel", "CirrusTestSupport"], swiftSettings: strict),
        .testTarget(
            name: "QueryCheckerTests", dependencies: ["QueryChecker", "PredicateSyntax", "CirrusTestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "QueryExecutionTests",
            dependencies: ["QueryExecution", "QueryChecker", "QueryPlanner", "Indexes", "CirrusTestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "QueryPlannerTests", dependencies: ["QueryPlanner", "QueryChecker", "CirrusTestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "CirrusTests",
            dependencies: [
                "Cirrus", "CirrusEmbedded", "CirrusFacade", "CirrusPostgres", "CirrusIO", "RecordLog", "RecordModel", "Indexes", "CirrusTestSupport",
            ],
            swiftSettings: strict),
        .testTarget(
            name: "CoreDataMirrorTests", dependencies: ["CoreDataMirror", "RecordModel"], exclude: ["Models"],
            swiftSettings: strict),
        .testTarget(
            name: "CirrusServerTests",
            dependencies: [
                "CirrusServer", "Cirrus", "CirrusEmbedded", "CirrusFacade", "RecordModel", "CirrusIO",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "CirrusPostgresTests",
            dependencies: [
                "CirrusPostgres", "Cirrus", "CirrusEmbedded", "CirrusFacade", "CirrusServer", "CirrusIO", "RecordLog", "QueryExecution", "QueryChecker",
                "PredicateSyntax",
                "RecordModel",
                "Indexes",
                "CirrusTestSupport", .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "CirrusKitTests",
            dependencies: [
                "CirrusKit", "CirrusServer", "CirrusShell", "Cirrus", "CirrusEmbedded", "CirrusFacade", "RecordModel", "QueryChecker",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "CirrusShellTests",
            dependencies: ["CirrusShell", "Cirrus", "CirrusEmbedded", "CirrusFacade", "CirrusIO", "RecordLog", "RecordModel", "CirrusTestSupport"],
            exclude: ["Transcripts"], swiftSettings: strict),
    ]
)

// The documentation build (`make docs`, run in CI) adds swift-docc-plugin; everyday builds and
// users of the library do not resolve it.
if Context.environment["CIRRUS_DOCS"] != nil {
    package.dependencies.append(.package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"))
}

// swift-tools-version: 6.1
//
// qbench — Cirrus's performance suites, kept out of the library build (own package, depends on
// Cirrus by path), with SQLite as a system library for the cross-engine suites.
// Run: swift run -c release --package-path Benchmarks qbench            (Cirrus vs SQLite)
//      swift run -c release --package-path Benchmarks qbench indexes    (the Indexes module alone)
//      qbench --postgres URL: Cirrus-on-PostgreSQL (CirrusPostgres) as a third engine

import PackageDescription

let package = Package(
    name: "CirrusBenchmarks",
    dependencies: [
        // `name:` pins the identity, which otherwise follows the checkout directory's name.
        .package(name: "Cirrus", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // The hand-written SQL yardstick of `--postgres` (PostgresSQLPeer): the client CirrusPostgres uses.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // SQLite 3 (Debian's libsqlite3 has FTS5 and R*Tree compiled in).
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .executableTarget(
            name: "qbench",
            dependencies: [
                .product(name: "Indexes", package: "Cirrus"),
                .product(name: "RecordModel", package: "Cirrus"),
                .product(name: "Cirrus", package: "Cirrus"),
                .product(name: "QueryChecker", package: "Cirrus"),
                .product(name: "RecordLog", package: "Cirrus"),
                .product(name: "CirrusIO", package: "Cirrus"),
                .product(name: "QueryExecution", package: "Cirrus"),
                .product(name: "CirrusPostgres", package: "Cirrus"),
                "CSQLite",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)

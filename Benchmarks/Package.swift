// swift-tools-version: 6.1
//
// qbench — Cirrus's performance suites, kept out of the library build (own package, depends on
// Cirrus by path). Run: swift run -c release --package-path Benchmarks qbench indexes --size 1000000

import PackageDescription

let package = Package(
    name: "CirrusBenchmarks",
    dependencies: [
        // `name:` pins the identity, which otherwise follows the checkout directory's name.
        .package(name: "Cirrus", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        .executableTarget(
            name: "qbench",
            dependencies: [
                .product(name: "Indexes", package: "Cirrus"),
                .product(name: "RecordModel", package: "Cirrus"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        )
    ]
)

// swift-tools-version:5.9
//
// The outside check of CirrusKit (docs/cirruskit.md): a program written only against CloudKit's
// Swift API — `import CloudKit` replaced by `import CirrusKit`, nothing else changed — in a
// package that depends on the project by path, in Swift 5 language mode. Not part of the
// project's build; run it as docs/cirruskit.md says:
//
//   swift run --package-path Tests/CirrusKitOutside NotesCheck
//
// with CIRRUS_CONTAINERS + CIRRUS_USER (embedded) or CIRRUS_SERVER + CIRRUS_API_TOKEN +
// CIRRUS_WEB_AUTH_TOKEN (against `cirrus serve`).

import PackageDescription

let package = Package(
    name: "CirrusKitOutside",
    dependencies: [.package(name: "Cirrus", path: "../..")],
    targets: [
        .executableTarget(
            name: "NotesCheck",
            dependencies: [.product(name: "CirrusKit", package: "Cirrus")],
            swiftSettings: [.unsafeFlags(["-swift-version", "5"])]),
        // The same names in Swift 6 language mode, beside `import Foundation`: does
        // NSPredicate(format:) resolve to CirrusKit's and not corelibs' unavailable one?
        .executableTarget(
            name: "Swift6Check",
            dependencies: [.product(name: "CirrusKit", package: "Cirrus")],
            swiftSettings: [.unsafeFlags(["-swift-version", "6"])]),
        // The README's example, as it is printed there.
        .executableTarget(
            name: "ReadmeExample",
            dependencies: [.product(name: "CirrusKit", package: "Cirrus")],
            swiftSettings: [.unsafeFlags(["-swift-version", "5"])]),
    ]
)

// swift-tools-version:6.0
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "purchase-ledger",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "LedgerCore", targets: ["LedgerCore"]),
        .library(name: "LedgerDomain", targets: ["LedgerDomain"]),
        .library(name: "LedgerStore", targets: ["LedgerStore"]),
        .executable(name: "ledger", targets: ["LedgerCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    ],
    targets: [
        // libpq, as the system provides it (Debian: libpq-dev).
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        // The one module that talks to libpq.
        .target(
            name: "LedgerPostgres",
            dependencies: ["CLibPQ", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        // Pure ledger logic: JSON, canonical bytes, hashing, event envelopes. No database import.
        .target(name: "LedgerCore", swiftSettings: strict),
        // Pure purchase domain: typed facts, binding, projections as folds. No database import.
        .target(name: "LedgerDomain", dependencies: ["LedgerCore"], swiftSettings: strict),
        // Audit reports: table, JSON, CSV and self-contained HTML. Pure.
        .target(name: "LedgerReport", dependencies: ["LedgerDomain", "LedgerCore"], swiftSettings: strict),
        // The twelve scenarios of domain.md section 8 as deterministic fact sequences with expected outcomes.
        .target(name: "LedgerScenarios", dependencies: ["LedgerDomain", "LedgerCore"], swiftSettings: strict),
        // The event log over PostgreSQL: migrations, append, read, subscribe, verify, embedded server.
        .target(
            name: "LedgerStore",
            dependencies: ["LedgerCore", "LedgerDomain", "LedgerPostgres", .product(name: "Logging", package: "swift-log")],
            resources: [.copy("Migrations")],
            swiftSettings: strict
        ),
        // Test helpers: a private PostgreSQL and one fresh schema per test.
        .target(
            name: "LedgerTesting",
            dependencies: ["LedgerStore", "LedgerPostgres", "LedgerCore"],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "LedgerCLI",
            dependencies: [
                "LedgerCore", "LedgerDomain", "LedgerReport", "LedgerScenarios", "LedgerStore", "LedgerPostgres",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(name: "LedgerCoreTests", dependencies: ["LedgerCore"], swiftSettings: strict),
        .testTarget(name: "LedgerDomainTests", dependencies: ["LedgerDomain", "LedgerCore", "LedgerScenarios"], swiftSettings: strict),
        .testTarget(
            name: "LedgerStoreTests",
            dependencies: ["LedgerStore", "LedgerCore", "LedgerDomain", "LedgerScenarios", "LedgerPostgres", "LedgerTesting"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "LedgerCLITests",
            dependencies: ["LedgerStore", "LedgerPostgres", "LedgerTesting", "LedgerCore"],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)

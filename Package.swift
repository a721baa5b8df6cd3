// swift-tools-version:6.0
import CompilerPluginSupport
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

let package = Package(
    name: "purchase-ledger",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "LedgerCore", targets: ["LedgerCore"]),
        .library(name: "LedgerFoldStore", targets: ["LedgerFoldStore"]),
        .library(name: "LedgerDomain", targets: ["LedgerDomain"]),
        .library(name: "LedgerLog", targets: ["LedgerLog"]),
        .library(name: "LedgerProjection", targets: ["LedgerProjection"]),
        .library(name: "LedgerServer", targets: ["LedgerServer"]),
        .executable(name: "ledger", targets: ["LedgerCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based", exact: "2.0.1"),
        // The HTTP service and the store notification verifiers.
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio", exact: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-extras", exact: "1.35.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", exact: "2.13.0"),
        .package(url: "https://github.com/apple/swift-http-types", exact: "1.8.0"),
        .package(url: "https://github.com/apple/swift-metrics", exact: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", exact: "2.4.1"),
        // The platform's SHA-256 (the hash chain), and the notification verifiers.
        .package(url: "https://github.com/apple/swift-crypto", exact: "3.12.3"),
        .package(url: "https://github.com/apple/swift-certificates", exact: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", exact: "1.7.4"),
        // The one macro: a fact's public memberwise initializer.
        .package(url: "https://github.com/swiftlang/swift-syntax", exact: "603.0.1"),
    ],
    targets: [
        // libpq, as the system provides it (Debian: libpq-dev).
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        // glibc's allocator settings: a fold that spills returns big freed buffers to the system.
        .systemLibrary(name: "CMalloc"),
        // The one module that talks to libpq.
        .target(
            name: "LedgerPostgres",
            dependencies: ["CLibPQ", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        // Pure ledger logic: JSON, canonical bytes, hashing (the platform's SHA-256), event envelopes. No database import.
        .target(
            name: "LedgerCore", dependencies: [.product(name: "Crypto", package: "swift-crypto")], swiftSettings: strict
        ),
        // The fold's storage engine, knowing no facts: views in pages behind a compact key index, spilled to a file
        // beyond a memory limit, and the binary form of its snapshots. Pure.
        .target(name: "LedgerFoldStore", dependencies: ["LedgerCore"], swiftSettings: strict),
        // `@PublicInit`: a struct's public memberwise initializer, so that a fact lists its fields once.
        .macro(
            name: "LedgerMacros",
            dependencies: [
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
            ],
            swiftSettings: strict
        ),
        // Pure purchase domain: typed facts, binding, projections as folds. No database import.
        .target(
            name: "LedgerDomain", dependencies: ["LedgerCore", "LedgerFoldStore", "LedgerMacros"], swiftSettings: strict
        ),
        // Audit reports: table, JSON, CSV and self-contained HTML. Pure.
        .target(name: "LedgerReport", dependencies: ["LedgerDomain", "LedgerCore"], swiftSettings: strict),
        // The stores' own statement files (WeChat Pay bills, App Store history and financial reports, Google Play
        // voided purchases and earnings): parsed and validated into statement facts, and written back (the simulator). Pure.
        .target(
            name: "LedgerStatements",
            dependencies: ["LedgerDomain", "LedgerCore", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict
        ),
        // The release scenarios (docs/domain.md) as deterministic fact sequences with expected outcomes; the simulator,
        // whose store notifications go through the same translators as the service's.
        .target(
            name: "LedgerScenarios", dependencies: ["LedgerDomain", "LedgerCore", "LedgerNotifications"],
            swiftSettings: strict),
        // The event log over PostgreSQL: append (a pure plan, a thin executor), read, subscribe,
        // verify, and the migrator with the log's migration. Knows no facts and no projections.
        .target(
            name: "LedgerLog",
            dependencies: ["LedgerCore", "LedgerPostgres", .product(name: "Logging", package: "swift-log")],
            resources: [.copy("Migrations"), .copy("Functions")],
            swiftSettings: strict
        ),
        // The read models over the log: projector, rebuild, fact scan, audit run, and their migrations.
        .target(
            name: "LedgerProjection",
            dependencies: [
                "LedgerLog", "LedgerCore", "LedgerDomain", "LedgerPostgres", "CMalloc",
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.copy("Migrations")],
            swiftSettings: strict
        ),
        // A private PostgreSQL cluster under a local folder, and the child-process runner it uses.
        .target(name: "LedgerServer", dependencies: ["LedgerCore", "LedgerPostgres"], swiftSettings: strict),
        // What `ledger bench` measures with: the bulk loader and the benchmark workloads. Not a product.
        .target(
            name: "LedgerBench",
            dependencies: ["LedgerLog", "LedgerCore", "LedgerDomain", "LedgerScenarios", "LedgerPostgres"],
            swiftSettings: strict
        ),
        // Test helpers: a private PostgreSQL and one fresh schema per test.
        .target(
            name: "LedgerTesting",
            dependencies: ["LedgerLog", "LedgerProjection", "LedgerServer", "LedgerPostgres", "LedgerCore"],
            swiftSettings: strict
        ),
        // Store notifications: verifiers (Apple JWS x5c, Google Pub/Sub OIDC, WeChat Pay v3) and pure
        // translators from a verified notification to facts. No network, no database.
        .target(
            name: "LedgerNotifications",
            dependencies: [
                "LedgerCore", "LedgerDomain",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: strict
        ),
        // `ledger serve`: the HTTP API over the log and the read models (Hummingbird). No domain logic.
        .target(
            name: "LedgerService",
            dependencies: [
                "LedgerCore", "LedgerDomain", "LedgerLog", "LedgerProjection", "LedgerReport", "LedgerPostgres",
                "LedgerNotifications",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // Test helpers: certificate chains, keys and signed store notifications that tests make themselves.
        .target(
            name: "LedgerNotificationTesting",
            dependencies: [
                "LedgerNotifications", "LedgerCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "LedgerCLI",
            dependencies: [
                "LedgerCore", "LedgerDomain", "LedgerReport", "LedgerScenarios", "LedgerStatements", "LedgerLog",
                "LedgerProjection", "LedgerServer",
                "LedgerBench", "LedgerPostgres", "LedgerService", "LedgerNotifications",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(name: "LedgerCoreTests", dependencies: ["LedgerCore"], swiftSettings: strict),
        .testTarget(
            name: "LedgerMacrosTests",
            dependencies: [
                "LedgerMacros",
                .product(name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "LedgerScenariosTests",
            dependencies: ["LedgerScenarios", "LedgerDomain", "LedgerCore", "LedgerFoldStore"],
            swiftSettings: strict
        ),
        .testTarget(name: "LedgerPostgresTests", dependencies: ["LedgerPostgres"], swiftSettings: strict),
        .testTarget(
            name: "LedgerFoldStoreTests", dependencies: ["LedgerFoldStore", "LedgerCore"], swiftSettings: strict),
        .testTarget(
            name: "LedgerDomainTests",
            dependencies: [
                "LedgerDomain", "LedgerCore", "LedgerScenarios", "LedgerStatements",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strict
        ),
        // No PostgreSQL: the append plan, the COPY text codec, the row writers, migration loading.
        .testTarget(
            name: "LedgerUnitTests",
            dependencies: ["LedgerLog", "LedgerProjection", "LedgerPostgres", "LedgerCore", "LedgerDomain"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "LedgerLogTests",
            dependencies: ["LedgerLog", "LedgerProjection", "LedgerCore", "LedgerPostgres", "LedgerTesting"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "LedgerProjectionTests",
            dependencies: [
                "LedgerProjection", "LedgerLog", "LedgerCore", "LedgerDomain", "LedgerScenarios", "LedgerPostgres",
                "LedgerTesting",
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "LedgerStatementsTests",
            dependencies: ["LedgerStatements", "LedgerDomain", "LedgerCore"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "LedgerReportTests",
            dependencies: ["LedgerReport", "LedgerDomain", "LedgerCore"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "LedgerServerTests",
            dependencies: ["LedgerServer", "LedgerLog", "LedgerProjection", "LedgerCore", "LedgerTesting"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "LedgerCLITests",
            dependencies: [
                "LedgerLog", "LedgerProjection", "LedgerServer", "LedgerPostgres", "LedgerTesting", "LedgerCore",
                "LedgerNotificationTesting", .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "LedgerNotificationsTests",
            dependencies: [
                "LedgerNotifications", "LedgerNotificationTesting", "LedgerCore", "LedgerDomain",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "LedgerServiceTests",
            dependencies: [
                "LedgerService", "LedgerNotifications", "LedgerNotificationTesting", "LedgerLog", "LedgerProjection",
                "LedgerCore", "LedgerDomain", "LedgerPostgres", "LedgerTesting",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)

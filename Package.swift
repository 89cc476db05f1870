// swift-tools-version:6.2
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "hearth",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "HearthCore", targets: ["HearthCore"]),
        .library(name: "HearthProtocol", targets: ["HearthProtocol"]),
        .library(name: "HearthRules", targets: ["HearthRules"]),
        .library(name: "HearthOutbox", targets: ["HearthOutbox"]),
        .library(name: "HearthStore", targets: ["HearthStore"]),
        .library(name: "HearthFunctions", targets: ["HearthFunctions"]),
        .library(name: "HearthSpawn", targets: ["HearthSpawn"]),
        .library(name: "HearthAuth", targets: ["HearthAuth"]),
        .library(name: "HearthFiles", targets: ["HearthFiles"]),
        .library(name: "HearthEngine", targets: ["HearthEngine"]),
        .library(name: "HearthBackup", targets: ["HearthBackup"]),
        .library(name: "HearthServer", targets: ["HearthServer"]),
        .library(name: "HearthWeb", targets: ["HearthWeb"]),
        .library(name: "HearthClient", targets: ["HearthClient"]),
        .library(name: "HearthSocial", targets: ["HearthSocial"]),
        .library(name: "HearthTesting", targets: ["HearthTesting"]),
        .library(name: "HearthCluster", targets: ["HearthCluster"]),
        .library(name: "HearthHosting", targets: ["HearthHosting"]),
        .executable(name: "hearth", targets: ["hearth"]),
        .executable(name: "hearth-bench", targets: ["hearth-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/hummingbird-project/swift-websocket.git", from: "1.6.2"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.1"),
        // Already in the graph through jwt-kit; used to serve the signing key as Google serves its keys (X.509).
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.15.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
    ],
    targets: [
        .target(
            name: "HearthCore",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        // Firebase Hosting's firebase.json and how it answers a request; pure, files asked for
        // through a protocol.
        .target(name: "HearthHosting", swiftSettings: swiftSettings),
        // The system's zlib and Brotli encoder, for hosted files sent compressed (Debian:
        // zlib1g-dev, libbrotli-dev).
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]),
        .systemLibrary(name: "CBrotli", providers: [.apt(["libbrotli-dev"]), .brew(["brotli"])]),
        // Child processes with posix_spawn (not Foundation's Process, see ChildProcess), and the
        // C library's spawn actions Swift's Glibc module does not show.
        .target(name: "CSpawn"),
        .target(name: "HearthSpawn", dependencies: ["CSpawn"], swiftSettings: swiftSettings),
        .target(
            name: "HearthProtocol",
            dependencies: ["HearthCore"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HearthRules",
            dependencies: ["HearthCore"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HearthOutbox",
            dependencies: [.product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HearthStore",
            dependencies: [
                "HearthCore",
                "HearthOutbox",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HearthFunctions",
            dependencies: [
                "HearthCore",
                "HearthSpawn",
                "HearthAuth",
                "HearthOutbox",
                "HearthStore",
                "HearthFiles",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HearthAuth",
            dependencies: [
                "HearthCore",
                "HearthOutbox",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HearthFiles",
            dependencies: [
                "HearthCore",
                "HearthOutbox",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "_NIOFileSystem", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HearthClient",
            dependencies: [
                "HearthCore",
                "HearthProtocol",
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HearthSocialServer",
            dependencies: [
                "HearthCore", "HearthStore", "HearthFiles", "HearthAuth", "HearthFunctions", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"), .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HearthSocial",
            dependencies: ["HearthClient"],
            exclude: ["Resources"],
            swiftSettings: swiftSettings,
            plugins: ["EmbedResources"]
        ),
        .target(
            name: "HearthEngine",
            dependencies: [
                "HearthCore",
                "HearthProtocol",
                "HearthRules",
                "HearthStore",
                "HearthAuth",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HearthBackup",
            dependencies: [
                "HearthCore",
                "HearthStore",
                "HearthFiles",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HearthServer",
            dependencies: [
                "HearthCore",
                "HearthProtocol",
                "HearthEngine",
                "HearthBackup",
                "HearthRules",
                "HearthStore",
                "HearthAuth",
                "HearthFiles",
                "HearthFunctions",
                "HearthOutbox",
                "HearthCluster",
                "HearthHosting",
                "CZlib",
                "CBrotli",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "_NIOFileSystem", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: swiftSettings
        ),
        // The web app and console (`Resources/`, `Web/` at the top), compiled in by EmbedResources.
        .target(
            name: "HearthWeb",
            exclude: ["Resources"],
            swiftSettings: swiftSettings,
            plugins: ["EmbedResources"]
        ),
        // Compiles a target's `Resources` folder into the target, so the program carries it.
        .plugin(name: "EmbedResources", capability: .buildTool(), dependencies: ["hearth-embed"]),
        .executableTarget(name: "hearth-embed", swiftSettings: swiftSettings),
        .target(
            name: "HearthCluster",
            dependencies: [
                "HearthCore",
                "HearthStore",
                "HearthOutbox",
                "HearthAuth",
                "HearthFiles",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HearthTesting",
            dependencies: [
                "HearthCore", "HearthStore", "HearthEngine", "HearthServer", "HearthAuth", "HearthFunctions",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "hearth",
            dependencies: [
                "HearthCore",
                "HearthEngine",
                "HearthBackup",
                "HearthRules",
                "HearthStore",
                "HearthAuth",
                "HearthFiles",
                "HearthServer",
                "HearthSocial",
                "HearthSocialServer",
                "HearthCluster",
                "HearthWeb",
                "HearthFunctions",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "_NIOFileSystem", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // docs/functions.md's example: Hearth embedded, with a function written in Swift.
        .executableTarget(
            name: "hearth-functions-example",
            dependencies: [
                "HearthCore", "HearthFunctions", "HearthServer", "HearthStore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            path: "Examples/EmbeddedFunctions",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "hearth-bench",
            dependencies: [
                "HearthCore",
                "HearthSpawn",
                "HearthProtocol",
                "HearthStore",
                "HearthClient",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "HearthCoreTests", dependencies: ["HearthCore"], swiftSettings: swiftSettings),
        .testTarget(
            name: "HearthHostingTests",
            dependencies: [
                "HearthHosting", "HearthServer", "HearthTesting",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HearthFunctionsTests",
            dependencies: [
                "HearthFunctions", "HearthCore", "HearthOutbox", "HearthStore", "HearthTesting",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HearthEngineTests",
            dependencies: [
                "HearthEngine", "HearthCore", "HearthRules", "HearthStore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "HearthProtocolTests", dependencies: ["HearthProtocol", "HearthCore"], swiftSettings: swiftSettings),
        .testTarget(name: "HearthRulesTests", dependencies: ["HearthRules", "HearthCore"], swiftSettings: swiftSettings),
        .testTarget(
            name: "HearthAuthTests",
            dependencies: ["HearthAuth", "HearthCore", "HearthTesting"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HearthFilesTests",
            dependencies: [
                "HearthFiles", "HearthCore", "HearthTesting",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HearthClientTests",
            dependencies: ["HearthClient", "HearthCore", "HearthServer", "HearthTesting"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HearthSocialServerTests",
            dependencies: [
                "HearthSocialServer", "HearthCore", "HearthStore", "HearthFiles", "HearthFunctions", "HearthServer", "HearthTesting", "HearthSpawn",
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HearthSocialTests",
            dependencies: ["HearthSocial", "HearthSocialServer", "HearthFunctions", "HearthClient", "HearthServer", "HearthTesting"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HearthStoreTests",
            dependencies: [
                "HearthCore", "HearthStore", "HearthOutbox", "HearthTesting",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HearthServerTests",
            dependencies: [
                "HearthCore", "HearthProtocol", "HearthStore", "HearthEngine", "HearthBackup", "HearthServer", "HearthTesting",
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "HearthToolTests", dependencies: ["HearthTesting", "HearthSpawn", "hearth"], swiftSettings: swiftSettings),
        .testTarget(name: "HearthSpawnTests", dependencies: ["HearthSpawn"], swiftSettings: swiftSettings),
        .testTarget(
            name: "HearthClusterTests",
            dependencies: [
                "HearthCluster", "HearthTesting", "HearthStore", "HearthCore", "HearthOutbox",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)

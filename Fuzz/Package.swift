// swift-tools-version:6.2
import Foundation
import PackageDescription

// libFuzzer targets for Hearth's parsers of hostile input, kept out of the main package: they
// link only when built with `-sanitize=fuzzer`. Build and run them with `scripts/fuzz`; the
// seeds are in `corpus/<target>/`.

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// The main package, by its identity: the name of its folder (a checkout may be named anything).
let hearth = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().lastPathComponent.lowercased()

let core: Target.Dependency = .product(name: "HearthCore", package: hearth)
let rules: Target.Dependency = .product(name: "HearthRules", package: hearth)
let engine: Target.Dependency = .product(name: "HearthEngine", package: hearth)
let realtimeProtocol: Target.Dependency = .product(name: "HearthProtocol", package: hearth)
let files: Target.Dependency = .product(name: "HearthFiles", package: hearth)
let server: Target.Dependency = .product(name: "HearthServer", package: hearth)
let hummingbird: Target.Dependency = .product(name: "Hummingbird", package: "hummingbird")
let httpTypes: Target.Dependency = .product(name: "HTTPTypes", package: "swift-http-types")
let nioCore: Target.Dependency = .product(name: "NIOCore", package: "swift-nio")
let logging: Target.Dependency = .product(name: "Logging", package: "swift-log")

/// The targets, each `fuzz-<name>` (`scripts/fuzz <name>`), with what they use.
let fuzzTargets: [(name: String, dependencies: [Target.Dependency])] = [
    ("json", [core]),
    ("path", [core, engine, server, hummingbird, httpTypes]),
    ("query", [core, engine, rules, server, hummingbird, httpTypes]),
    ("rules", [core, rules]),
    ("storage-rules", [core, files]),
    ("realtime", [core, realtimeProtocol, engine, rules, server]),
    ("websocket", [
        core, realtimeProtocol, engine, rules, server, logging, nioCore,
        .product(name: "HearthAuth", package: hearth),
        .product(name: "HearthStore", package: hearth),
        .product(name: "NIOEmbedded", package: "swift-nio"),
        .product(name: "NIOWebSocket", package: "swift-nio"),
    ]),
    ("multipart", [files, engine, server, hummingbird, nioCore]),
    ("realtime-session", [
        core, realtimeProtocol, engine, rules, server, logging, nioCore,
        .product(name: "HearthAuth", package: hearth),
        .product(name: "HearthStore", package: hearth),
    ]),
]

let package = Package(
    name: "hearth-fuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        .target(name: "FuzzDriver"),
        .target(name: "FuzzSupport", dependencies: ["FuzzDriver"], swiftSettings: swiftSettings),
    ] + fuzzTargets.map { target in
        .executableTarget(
            name: "fuzz-\(target.name)", dependencies: ["FuzzSupport"] + target.dependencies, swiftSettings: swiftSettings)
    }
)

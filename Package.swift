// swift-tools-version: 6.0
// MAMLab: an emulator of mobile app-protection (MAM) data-sharing decisions on Linux.
import PackageDescription

let package = Package(
    name: "MAMLab",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "MAMPolicy", targets: ["MAMPolicy"]),
        .executable(name: "mamlaunch", targets: ["mamlaunch"]),
        .executable(name: "mamconfigurator", targets: ["mamconfigurator"]),
        .executable(name: "mambroker", targets: ["mambroker"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        // The engine: pure decisions over value types. Foundation only, no I/O beyond the
        // loaders' input `Data`, no clock, no globals.
        .target(name: "MAMPolicy"),
        // File-system side of the engine: reading tenants, policy files and app manifests from
        // disk and turning them into MAMPolicy inputs. Shared by the command-line tools.
        .target(name: "MAMCatalog", dependencies: ["MAMPolicy"]),
        .executableTarget(
            name: "mamlaunch",
            dependencies: [
                "MAMPolicy", "MAMCatalog", "MAMSandbox", "CMAMSandbox", "MAMWire",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The broker protocol: frames, strict decoding, descriptors and sealed documents.
        .target(name: "CMAMWire"),
        .target(name: "MAMWire", dependencies: ["CMAMWire"]),
        .testTarget(name: "MAMWireTests", dependencies: ["MAMWire"]),
        .testTarget(name: "MAMBrokerTests", dependencies: ["MAMWire"]),
        // The broker as a library: registry, routing, pasteboard, share, locations, audit, state.
        .target(name: "MAMBroker", dependencies: [
            "MAMPolicy", "MAMWire", "CMAMWire", "MAMCatalog",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "GRDB", package: "GRDB.swift"),
        ]),
        .executableTarget(name: "mambroker", dependencies: [
            "MAMBroker", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The sandbox: libseccomp from the system (pkg-config), the fork/exec-safe part in C.
        .systemLibrary(name: "CSeccomp", pkgConfig: "libseccomp", providers: [.apt(["libseccomp-dev"])]),
        .target(name: "CMAMSandbox", dependencies: ["CSeccomp"]),
        .target(name: "MAMSandbox", dependencies: ["CMAMSandbox", "CSeccomp", "MAMPolicy"]),
        // The Info.plist / entitlements configurator: ordered plist editing, pure.
        .target(name: "MAMConfigurator", dependencies: ["MAMPolicy"]),
        .executableTarget(
            name: "mamconfigurator",
            dependencies: ["MAMConfigurator", "MAMPolicy", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // Apps/Hostile: no SDK; tries every escape it can (its probes are C: raw system calls).
        .target(name: "CHostileProbes", path: "Apps/Hostile/Probes"),
        .executableTarget(name: "Hostile", dependencies: ["CHostileProbes"], path: "Apps/Hostile", exclude: ["Info.plist", "Probes"]),
        // Apps/Courier: a scriptable MAMWire client the broker tests launch as two apps.
        .executableTarget(name: "Courier", dependencies: ["MAMWire"], path: "Apps/Courier", exclude: ["Info.plist"]),
        .testTarget(name: "MAMConfiguratorTests", dependencies: ["MAMConfigurator", "MAMPolicy", "MAMCatalog"], exclude: ["Golden"]),
        .testTarget(name: "MAMSandboxTests", dependencies: ["CMAMSandbox", "MAMSandbox"]),
        .testTarget(name: "MAMPolicyTests", dependencies: ["MAMPolicy", "MAMCatalog"]),
        .testTarget(name: "MAMLaunchTests", dependencies: ["MAMCatalog"]),
    ],
    swiftLanguageModes: [.v6]
)

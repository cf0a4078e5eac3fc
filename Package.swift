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
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
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
                "MAMPolicy", "MAMCatalog",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The Info.plist / entitlements configurator: ordered plist editing, pure.
        .target(name: "MAMConfigurator", dependencies: ["MAMPolicy"]),
        .executableTarget(
            name: "mamconfigurator",
            dependencies: ["MAMConfigurator", "MAMPolicy", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        .testTarget(name: "MAMConfiguratorTests", dependencies: ["MAMConfigurator", "MAMPolicy", "MAMCatalog"]),
        .testTarget(name: "MAMPolicyTests", dependencies: ["MAMPolicy", "MAMCatalog"]),
        .testTarget(name: "MAMLaunchTests", dependencies: ["MAMCatalog"]),
    ],
    swiftLanguageModes: [.v6]
)

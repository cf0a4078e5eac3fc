// swift-tools-version: 6.0
// MAMLab: an emulator of mobile app-protection (MAM) data-sharing decisions on Linux.
import PackageDescription

let package = Package(
    name: "MAMLab",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "MAMPolicy", targets: ["MAMPolicy"]),
        .library(name: "MAMBrokerCore", targets: ["MAMBrokerCore"]),
        .library(name: "MAMBrokerEmbedded", targets: ["MAMBrokerEmbedded"]),
        .library(name: "MAMBroker", targets: ["MAMBroker"]),
        .executable(name: "mamlaunch", targets: ["mamlaunch"]),
        .executable(name: "mamconfigurator", targets: ["mamconfigurator"]),
        .executable(name: "mambroker", targets: ["mambroker"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
    ],
    targets: [
        // The engine: pure decisions over value types. Foundation only, no I/O beyond the
        // loaders' input `Data`, no clock, no globals.
        .target(name: "MAMPolicy"),
        // File-system side of the engine: reading tenants, policy files and app manifests from
        // disk and turning them into MAMPolicy inputs. Shared by the command-line tools.
        // (Crypto: the SHA-256 that binds an installed bundle id to the program built for it.)
        // (MAMWire: the owned Descriptor of a program opened to be hashed and run.)
        .target(name: "MAMCatalog", dependencies: ["MAMPolicy", "MAMWire", .product(name: "Crypto", package: "swift-crypto"),
                                                   .product(name: "_CryptoExtras", package: "swift-crypto")]),
        .executableTarget(
            name: "mamlaunch",
            dependencies: [
                "MAMLauncher", "MAMMatrixLive", "MAMPolicy", "MAMCatalog", "MAMSandbox", "CMAMSandbox", "MAMWire", "CMAMBench", "MAMMatrix", "MAMScript",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // What mamlaunch does to launch, as a library its commands and the tests call: the tenant
        // and apps a command works with (World), the one way an app is started against a broker
        // (BrokerLink, the hand-off), interruption, stand-ins.
        .target(name: "MAMLauncher", dependencies: [
            "MAMPolicy", "MAMCatalog", "MAMSandbox", "CMAMSandbox", "MAMWire", "MAMMatrix", "MAMScript",
            .product(name: "Crypto", package: "swift-crypto"), .product(name: "SystemPackage", package: "swift-system"),
        ]),
        // The matrix's live shell: its setup from the author's files, a broker per device, the
        // apps in their sandboxes (started through MAMLauncher), the scheduler's lanes on threads,
        // the broker's log read back. The plan, scheduler and cell logic are MAMMatrix's.
        .target(name: "MAMMatrixLive", dependencies: [
            "MAMLauncher", "MAMMatrix", "MAMPolicy", "MAMCatalog", "MAMSandbox", "CMAMSandbox", "MAMWire", "MAMScript",
            .product(name: "Crypto", package: "swift-crypto"), .product(name: "SystemPackage", package: "swift-system"),
        ]),
        // The broker protocol: frames, strict decoding, descriptors and sealed documents; the
        // owned descriptor and the one system-call helper (SystemPackage: its Errno).
        .target(name: "CMAMWire"),
        .target(name: "MAMWire", dependencies: ["CMAMWire", .product(name: "SystemPackage", package: "swift-system")]),
        .testTarget(name: "MAMWireTests", dependencies: ["MAMWire", .product(name: "SystemPackage", package: "swift-system")]),
        .testTarget(name: "MAMBrokerTests", dependencies: ["MAMWire", "CMAMWire", "MAMProtect", "MAMTestSupport", .product(name: "GRDB", package: "GRDB.swift"), .product(name: "SystemPackage", package: "swift-system")],
                    // A version-1 Python client kept as it was, run by PythonClientTests.
                    exclude: ["Fixtures"]),
        // The tenant's emulated MAM service (enrollment, check-in, wipe, app config, conditional
        // access): pure, with an injected clock; the broker carries it out.
        .target(name: "MAMService", dependencies: ["MAMPolicy"]),
        .testTarget(name: "MAMServiceTests", dependencies: ["MAMService", "MAMPolicy", "MAMCatalog", "MAMTestSupport"]),
        // What several test targets share (a seeded random generator).
        .target(name: "MAMTestSupport", dependencies: ["MAMScript", "MAMWire"], path: "Tests/Support"),
        // Encrypted documents (AES-256-GCM, chunked): made by the broker, read by MAMKit.
        // The scripted mode every sample app shares (docs/SCRIPTING.md): command lines in, JSON
        // lines out. Foundation only, so the matrix and the SDK-less Notes app can use it.
        .target(name: "MAMScript"),
        // Sharing-matrix experiments: the experiment model and loader, cells, the engine's
        // prediction, live observations turned into outcomes, diff and the reports. Pure; the
        // live runner is in MAMLauncher.
        .target(name: "MAMMatrix", dependencies: ["MAMPolicy", "MAMScript"]),
        // The matrix's embedded shell: its cells performed on the broker's core in memory
        // (MAMBrokerEmbedded), the apps modelled on the kit, as the live shell performs them on
        // processes; what the matrix's property tests run on.
        .target(name: "MAMMatrixEmbedded", dependencies: ["MAMMatrix", "MAMBrokerEmbedded", "MAMBrokerCore", "MAMPolicy", "MAMScript", "MAMWire",
                                                          .product(name: "Crypto", package: "swift-crypto")]),
        .testTarget(name: "MAMMatrixTests", dependencies: ["MAMMatrix", "MAMMatrixEmbedded", "MAMPolicy", "MAMCatalog", "MAMScript", "MAMTestSupport"]),
        .testTarget(name: "MAMScriptTests", dependencies: ["MAMScript"]),
        // Encrypted documents, protected data, file owners, encrypted files, wipe of an
        // account's files (docs/PROTECTION.md). Keys come in as parameters: no lookup, no network.
        .target(name: "CMAMProtect"),
        .target(name: "MAMProtect", dependencies: ["CMAMProtect", .product(name: "Crypto", package: "swift-crypto"), .product(name: "SystemPackage", package: "swift-system")]),
        // Benchmarks/protect: protect and unprotect against bare AES-256-GCM, release build.
        .executableTarget(name: "mamprotectbench", dependencies: [
            "MAMProtect", .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .testTarget(name: "MAMProtectTests", dependencies: ["MAMProtect", "CMAMProtect", "MAMTestSupport", .product(name: "Crypto", package: "swift-crypto"), .product(name: "SystemPackage", package: "swift-system")]),
        // The broker's core: no I/O, no clock of its own (messages in, effects out), and the one
        // interpreter of its effects (BrokerShell). The engine, the service and the wire only.
        .target(name: "MAMBrokerCore", dependencies: ["MAMPolicy", "MAMService", "MAMWire"]),
        // The core in a shell made of memory (as NIOEmbedded beside NIOCore): no process, socket
        // or file, every effect recorded; what the core's tests and properties run on.
        .target(name: "MAMBrokerEmbedded", dependencies: ["MAMBrokerCore", "MAMPolicy", "MAMService", "MAMWire"]),
        // The broker's shell around the core: event loop, sockets, locations, audit, state, the
        // machine's clock. It is handed a tenant, manifests and an app starter; it finds nothing
        // on disk by itself.
        .target(name: "MAMBroker", dependencies: [
            // (MAMCatalog: a tenant user's credential is checked against its salted SHA-256.)
            "MAMBrokerCore", "MAMPolicy", "MAMWire", "CMAMWire", "MAMProtect", "MAMService", "MAMCatalog",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "GRDB", package: "GRDB.swift"),
            .product(name: "SystemPackage", package: "swift-system"),
        ]),
        .testTarget(name: "MAMBrokerCoreTests", dependencies: ["MAMBrokerCore", "MAMBrokerEmbedded", "MAMBroker", "MAMPolicy", "MAMCatalog", "MAMMatrix", "MAMMatrixEmbedded", "MAMWire", "CMAMWire", "MAMProtect", "MAMService", "MAMTestSupport",
                                                         .product(name: "Logging", package: "swift-log"), .product(name: "GRDB", package: "GRDB.swift"), .product(name: "SystemPackage", package: "swift-system")]),
        .executableTarget(name: "mambroker", dependencies: [
            "MAMBroker", "MAMBrokerCore", "MAMCatalog", "MAMPolicy", "MAMWire", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"), .product(name: "SystemPackage", package: "swift-system"),
        ]),
        // The sandbox: libseccomp from the system (pkg-config), the fork/exec-safe part in C.
        .systemLibrary(name: "CSeccomp", pkgConfig: "libseccomp", providers: [.apt(["libseccomp-dev"])]),
        .target(name: "CMAMSandbox", dependencies: ["CSeccomp"]),
        .target(name: "MAMSandbox", dependencies: ["CMAMSandbox", "CSeccomp", "MAMPolicy", "MAMWire", .product(name: "SystemPackage", package: "swift-system")]),
        // bench-broker's peers: a SEQPACKET echo and a D-Bus echo service (sd-bus from libsystemd)
        // run as their own processes; the D-Bus client and CPU pinning are C that mamlaunch calls.
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        .target(name: "CMAMBench", dependencies: ["CSystemd"]),
        .executableTarget(name: "mambenchpeer", dependencies: ["CSystemd"]),
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
        .executableTarget(name: "Courier", dependencies: ["MAMWire", .product(name: "SystemPackage", package: "swift-system")], path: "Apps/Courier", exclude: ["Info.plist"]),
        // MAMKit: the SDK an app links (identities, policy, channels, data protection, the
        // service's managers), over its broker connection. docs/MAMKIT.md maps it to the real SDK.
        // libdispatch's block entry points, defined in the app's executable so that queued work
        // keeps the identity of the code that queued it (Sources/MAMKit/QueuedIdentity.swift).
        .target(name: "CMAMKitQueues"),
        .target(name: "MAMKit", dependencies: [
            "CMAMKitQueues", "MAMPolicy", "MAMWire", "MAMProtect",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "SystemPackage", package: "swift-system"),
        ]),
        // The scripted mode over MAMKit (docs/SCRIPTING.md), which the SDK sample apps run.
        .target(name: "MAMKitScripting", dependencies: ["MAMKit", "MAMScript", "MAMPolicy", "MAMProtect", .product(name: "Crypto", package: "swift-crypto")]),
        // What the sample apps share: the mode choice, the interactive prompt, decisions in plain words.
        .target(name: "MAMSampleSupport", dependencies: ["MAMKit", "MAMKitScripting", "MAMPolicy"]),
        // The sample apps (Apps/*/README.md): each file a short story of the integration.
        .executableTarget(name: "Mail", dependencies: ["MAMSampleSupport", "MAMKit"], path: "Apps/Mail", exclude: ["Info.plist", "Mail.entitlements", "README.md"]),
        .executableTarget(name: "Docs", dependencies: ["MAMSampleSupport", "MAMKit", "MAMPolicy"], path: "Apps/Docs", exclude: ["Info.plist", "Docs.entitlements", "README.md"]),
        .executableTarget(name: "Chat", dependencies: ["MAMSampleSupport", "MAMKit", "MAMPolicy"], path: "Apps/Chat", exclude: ["Info.plist", "Chat.entitlements", "README.md"]),
        .executableTarget(name: "Edge", dependencies: ["MAMSampleSupport", "MAMKit"], path: "Apps/Edge", exclude: ["Info.plist", "Edge.entitlements", "README.md"]),
        .executableTarget(name: "Dialer", dependencies: ["MAMSampleSupport", "MAMKit"], path: "Apps/Dialer", exclude: ["Info.plist", "Dialer.entitlements", "README.md"]),
        // The sample apps driven as a person and an experiment would: scripted through the broker,
        // interactive through a pseudo-terminal; their manifests configured and checked.
        .testTarget(name: "SampleAppTests", dependencies: ["CMAMSandbox", "MAMSampleSupport", "MAMScript", "MAMTestSupport"]),
        // Apps/Notes: no SDK; the same scripted commands over raw MAMWire.
        .executableTarget(name: "Notes", dependencies: ["MAMWire", "MAMScript", .product(name: "Crypto", package: "swift-crypto"), .product(name: "SystemPackage", package: "swift-system")],
                          path: "Apps/Notes", exclude: ["Info.plist"]),
        // The cost of a policy query through MAMKit against the engine call it wraps.
        .executableTarget(name: "mamkitbench", dependencies: ["CMAMKitQueues", "MAMKit", "MAMPolicy", "MAMCatalog", "MAMWire"]),
        .testTarget(name: "MAMKitTests", dependencies: ["MAMKit", "MAMCatalog", "MAMPolicy", "MAMScript", "MAMWire", "MAMTestSupport", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "MAMConfiguratorTests", dependencies: ["MAMConfigurator", "MAMPolicy", "MAMCatalog", "MAMTestSupport"], exclude: ["Golden"]),
        .testTarget(name: "MAMSandboxTests", dependencies: ["CMAMSandbox", "MAMSandbox", "MAMWire", "MAMTestSupport", .product(name: "SystemPackage", package: "swift-system")]),
        .testTarget(name: "MAMPolicyTests", dependencies: ["MAMPolicy", "MAMCatalog", "MAMTestSupport"]),
        .testTarget(name: "MAMLaunchTests", dependencies: ["MAMLauncher", "MAMMatrixLive", "MAMCatalog", "MAMMatrix", "MAMTestSupport"]),
        // Fuzz/: a fuzz target per parser of bytes from an app or an author's file
        // (docs/FUZZING.md). Built here, each replays the files it is given through its function
        // (the corpus replay in FuzzCorpusTests); built by scripts/fuzz (-DMAMLAB_FUZZ, ASan and
        // coverage), the same function is driven by libFuzzer, declared in CLibFuzzer.
        .systemLibrary(name: "CLibFuzzer", path: "Fuzz/CLibFuzzer"),
        .target(name: "MAMFuzzing", dependencies: ["CLibFuzzer", "MAMPolicy", "MAMWire"], path: "Fuzz/Support"),
        .executableTarget(name: "FuzzWireFrame", dependencies: ["MAMFuzzing", "MAMWire"], path: "Fuzz/WireFrame"),
        .executableTarget(name: "FuzzLauncherMessage", dependencies: ["MAMFuzzing", "MAMWire"], path: "Fuzz/LauncherMessage"),
        .executableTarget(name: "FuzzAuditFile", dependencies: ["MAMFuzzing", "MAMWire"], path: "Fuzz/AuditFile"),
        .executableTarget(name: "FuzzJSON", dependencies: ["MAMFuzzing", "MAMPolicy"], path: "Fuzz/JSON"),
        .executableTarget(name: "FuzzManifest", dependencies: ["MAMFuzzing", "MAMPolicy"], path: "Fuzz/Manifest"),
        .executableTarget(name: "FuzzPlistDocument", dependencies: ["MAMFuzzing", "MAMConfigurator", "MAMPolicy"], path: "Fuzz/PlistDocument"),
        .executableTarget(name: "FuzzTenantFile", dependencies: ["MAMFuzzing", "MAMPolicy"], path: "Fuzz/TenantFile"),
        .executableTarget(name: "FuzzPolicyFile", dependencies: ["MAMFuzzing", "MAMPolicy"], path: "Fuzz/PolicyFile"),
        .executableTarget(name: "FuzzConditionalAccess", dependencies: ["MAMFuzzing", "MAMPolicy"], path: "Fuzz/ConditionalAccess"),
        .executableTarget(name: "FuzzCatalog", dependencies: ["MAMFuzzing", "MAMCatalog", "MAMPolicy"], path: "Fuzz/Catalog"),
        .executableTarget(name: "FuzzExperiment", dependencies: ["MAMFuzzing", "MAMMatrix", "MAMPolicy"], path: "Fuzz/Experiment"),
        .executableTarget(name: "FuzzYAML", dependencies: ["MAMFuzzing", "MAMMatrix", "MAMPolicy"], path: "Fuzz/YAML"),
        .executableTarget(name: "FuzzScriptCommand", dependencies: ["MAMFuzzing", "MAMScript"], path: "Fuzz/ScriptCommand"),
        .executableTarget(name: "FuzzJSONValue", dependencies: ["MAMFuzzing", "MAMMatrix", "MAMScript"], path: "Fuzz/JSONValue"),
        .executableTarget(name: "FuzzCredential", dependencies: ["MAMFuzzing", "MAMPolicy"], path: "Fuzz/Credential"),
        .executableTarget(name: "FuzzURLText", dependencies: ["MAMFuzzing", "MAMPolicy"], path: "Fuzz/URLText"),
        .testTarget(name: "FuzzCorpusTests", dependencies: ["MAMTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)

// swift-tools-version:6.1
import PackageDescription

/// A dependency of the server, its tools or the tests: resolved only with the `Server` trait (on by
/// default), so an app that adds Beckon with `traits: []` resolves the client SDK's dependencies
/// alone: GRDB and swift-crypto (docs/client-sdk.md, "Add the package").
func server(_ product: String, _ package: String) -> Target.Dependency {
    .product(name: product, package: package, condition: .when(traits: ["Server"]))
}

let package = Package(
    name: "Beckon",
    // iOS 16: the client SDK's clocks and durations (`Duration`, `Clock`).
    platforms: [.macOS(.v14), .iOS(.v16)],
    products: [
        .library(name: "BeckonJSON", targets: ["BeckonJSON"]),
        .library(name: "BeckonProtocol", targets: ["BeckonProtocol"]),
        .library(name: "APNSCore", targets: ["APNSCore"]),
        .library(name: "APNS", targets: ["APNS"]),
        .library(name: "APNSEmulator", targets: ["APNSEmulator"]),
        .executable(name: "beckon", targets: ["beckon"]),
        // The client SDK: a portable core, its thin iOS adapters, and its Linux transport.
        .library(name: "BeckonClient", targets: ["BeckonClient"]),
        // The adapters an app extension may link (the notification service extension links these).
        .library(name: "BeckonClientApple", targets: ["BeckonClientApple"]),
        // The app-only adapters: UIApplication.shared is unavailable in app extensions.
        .library(name: "BeckonClientAppleApp", targets: ["BeckonClientAppleApp"]),
        .library(name: "BeckonClientNIO", targets: ["BeckonClientNIO"]),
    ],
    traits: [
        .trait(name: "Server", description: "The server, the APNs emulator, the simulator and the tests.", enabledTraits: ["ClientNIO"]),
        .trait(name: "ClientNIO", description: "The client SDK's WebSocket transport for Linux (SwiftNIO)."),
        .default(enabledTraits: ["Server"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.8.1"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.0"),
    ],
    targets: [
        // One JSON value type, a strict parser and a writer, for every module. No dependencies.
        .target(name: "BeckonJSON", dependencies: []),
        // Markup as text: the one XML/HTML escaper and the one SVG writer (the XMPP stream, the
        // status page's charts, the simulator's timelines). No dependencies.
        .target(name: "BeckonMarkup", dependencies: []),
        .testTarget(name: "BeckonMarkupTests", dependencies: ["BeckonMarkup"]),
        // The wire contract shared by the server and the client SDK: sync frames, the push
        // payload's `beckon` key, message kinds, reasons, strategies, error codes. Foundation only.
        .target(name: "BeckonProtocol", dependencies: ["BeckonJSON"]),
        // Content sealed per device (AES-GCM): the server seals, the client's extension opens.
        .target(
            name: "BeckonSeal",
            dependencies: ["BeckonProtocol", "BeckonJSON", .product(name: "Crypto", package: "swift-crypto")]
        ),
        // The APNs model: typed notifications, payload encoding, responses. No networking.
        .target(name: "APNSCore", dependencies: ["BeckonJSON"]),
        // The provider client: tokens, HTTP/2 pool, retries, metrics.
        .target(
            name: "APNS",
            dependencies: [
                "APNSCore",
                server("NIOCore", "swift-nio"),
                server("NIOConcurrencyHelpers", "swift-nio"),
                server("NIOPosix", "swift-nio"),
                server("NIOHTTP2", "swift-nio-http2"),
                server("NIOHPACK", "swift-nio-http2"),
                server("NIOSSL", "swift-nio-ssl"),
                server("Crypto", "swift-crypto"),
                server("Logging", "swift-log"),
                server("Metrics", "swift-metrics"),
            ]
        ),
        // An APNs-compatible HTTP/2 server with Apple's validation and fault injection.
        .target(
            name: "APNSEmulator",
            dependencies: [
                "APNSCore", "BeckonJSON",
                server("NIOCore", "swift-nio"),
                server("NIOConcurrencyHelpers", "swift-nio"),
                server("NIOPosix", "swift-nio"),
                server("NIOHTTP1", "swift-nio"),
                server("NIOHTTP2", "swift-nio-http2"),
                server("NIOSSL", "swift-nio-ssl"),
                server("Crypto", "swift-crypto"),
                server("X509", "swift-certificates"),
                server("Logging", "swift-log"),
            ]
        ),
        // The composition root: one node assembled from the server, delivery and APNs routes.
        .target(
            name: "BeckonNode",
            dependencies: [
                "BeckonServer", "BeckonDelivery", "BeckonEvents", "BeckonStore", "APNS", "APNSCore", "APNSEmulator",
                server("Crypto", "swift-crypto"),
                server("Logging", "swift-log"),
                server("Metrics", "swift-metrics"),
                server("NIOSSL", "swift-nio-ssl"),
                server("Prometheus", "swift-prometheus"),
                server("ServiceLifecycle", "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "beckon",
            dependencies: [
                "APNSCore", "APNS", "APNSEmulator", "BeckonServer", "BeckonNode", "BeckonJSON", "BeckonProtocol",
                "BeckonSimulation", "BeckonStore",
                server("ArgumentParser", "swift-argument-parser"),
                server("Configuration", "swift-configuration"),
                server("ServiceLifecycle", "swift-service-lifecycle"),
                server("SystemPackage", "swift-system"),
                server("Prometheus", "swift-prometheus"),
                server("Metrics", "swift-metrics"),
                server("Logging", "swift-log"),
                server("NIOConcurrencyHelpers", "swift-nio"),
                server("NIOSSL", "swift-nio-ssl"),
                server("NIOCore", "swift-nio"),
                server("NIOPosix", "swift-nio"),
                server("NIOHTTP1", "swift-nio"),
                server("NIOWebSocket", "swift-nio"),
                server("Crypto", "swift-crypto"),
            ]
        ),
        // SQLite's process-wide settings (`sqlite3_config` is variadic: Swift cannot call it).
        .target(name: "CSQLiteSettings", dependencies: [server("GRDBSQLite", "GRDB.swift")]),
        // The durable store: apps, keys, devices, the per-user mailbox, cursors and read state.
        .target(
            name: "BeckonStore",
            dependencies: [
                "BeckonProtocol", "BeckonJSON", "APNSCore", "CSQLiteSettings",
                server("GRDB", "GRDB.swift"),
                server("PostgresNIO", "postgres-nio"),
                server("NIOConcurrencyHelpers", "swift-nio"),
                server("Crypto", "swift-crypto"),
                server("Logging", "swift-log"),
            ]
        ),
        // The server: configuration, HTTP API, health and metrics, lifecycle.
        .target(
            name: "BeckonServer",
            dependencies: [
                "BeckonStore", "BeckonDelivery", "BeckonEvents", "BeckonProtocol", "BeckonJSON", "BeckonSeal", "APNSCore", "BeckonXMPP",
                "BeckonMarkup",
                server("Hummingbird", "hummingbird"),
                server("NIOPosix", "swift-nio"),
                server("NIOConcurrencyHelpers", "swift-nio"),
                server("HummingbirdWebSocket", "hummingbird-websocket"),
                server("HummingbirdCore", "hummingbird"),
                server("HummingbirdTLS", "hummingbird"),
                server("NIOSSL", "swift-nio-ssl"),
                server("NIOWebSocket", "swift-nio"),
                server("NIOCore", "swift-nio"),
                server("NIOHTTP1", "swift-nio"),
                server("NIOHTTPTypes", "swift-nio-extras"),
                server("NIOHTTPTypesHTTP1", "swift-nio-extras"),
                server("Crypto", "swift-crypto"),
                server("ServiceLifecycle", "swift-service-lifecycle"),
                server("Prometheus", "swift-prometheus"),
                server("Configuration", "swift-configuration"),
                server("Logging", "swift-log"),
                server("Metrics", "swift-metrics"),
            ]
        ),
        .testTarget(
            name: "BeckonServerTests",
            dependencies: [
                "BeckonServer", "BeckonNode", "BeckonStore", "BeckonDelivery", "BeckonProtocol", "BeckonJSON", "BeckonSeal",
                "BeckonEvents", "APNSCore", "TestCapture", "WebhookTestSupport",
                "APNSEmulator",
                server("HummingbirdTesting", "hummingbird"),
                server("Prometheus", "swift-prometheus"),
                server("HummingbirdWSClient", "hummingbird-websocket"),
                server("HummingbirdWSTesting", "hummingbird-websocket"),
                server("NIOWebSocket", "swift-nio"),
                server("NIOSSL", "swift-nio-ssl"),
                server("NIOPosix", "swift-nio"),
                server("X509", "swift-certificates"),
                server("ServiceLifecycle", "swift-service-lifecycle"),
                server("Logging", "swift-log"),
                server("Crypto", "swift-crypto"),
                server("Configuration", "swift-configuration"),
            ]
        ),
        // Events out: each app's event log sent to its webhook (signed, in order, retried), and
        // the log's upkeep (expiries, backlog, lag).
        .target(
            name: "BeckonEvents",
            dependencies: [
                "BeckonStore", "BeckonJSON",
                server("Crypto", "swift-crypto"),
                server("Logging", "swift-log"),
                server("Metrics", "swift-metrics"),
                server("NIOCore", "swift-nio"),
                server("NIOPosix", "swift-nio"),
                server("NIOHTTP1", "swift-nio"),
                server("NIOSSL", "swift-nio-ssl"),
                server("ServiceLifecycle", "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "WebhookTestSupport",
            dependencies: [
                server("NIOCore", "swift-nio"),
                server("NIOPosix", "swift-nio"),
                server("NIOHTTP1", "swift-nio"),
                server("NIOConcurrencyHelpers", "swift-nio"),
            ],
            path: "Tests/WebhookTestSupport"
        ),
        .testTarget(
            name: "BeckonEventsTests",
            dependencies: [
                "BeckonEvents", "BeckonStore", "BeckonJSON", "WebhookTestSupport",
                server("Logging", "swift-log"),
                server("Metrics", "swift-metrics"),
                server("NIOCore", "swift-nio"),
                server("NIOPosix", "swift-nio"),
                server("NIOHTTP1", "swift-nio"),
                server("NIOConcurrencyHelpers", "swift-nio"),
            ]
        ),
        // Delivery: the planner (`Planner/`, a pure per-device state machine deciding which pushes
        // to send and when) and its runtime (`Runtime/`: the driver, the outbox dispatcher), which
        // sends through a `PushSender` the node gives it, so it knows APNs' model, not its transport.
        .target(
            name: "BeckonDelivery",
            dependencies: [
                "APNSCore", "BeckonProtocol", "BeckonSeal", "BeckonStore", "BeckonJSON",
                server("Logging", "swift-log"),
                server("Metrics", "swift-metrics"),
                server("NIOCore", "swift-nio"),
                server("NIOConcurrencyHelpers", "swift-nio"),
                server("ServiceLifecycle", "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "BeckonDeliveryTests",
            dependencies: [
                "BeckonDelivery", "APNSCore", "BeckonProtocol", "BeckonSeal", "BeckonJSON", "BeckonStore",
                server("Logging", "swift-log"),
                server("Metrics", "swift-metrics"),
                server("NIOConcurrencyHelpers", "swift-nio"),
            ]
        ),
        .testTarget(name: "BeckonJSONTests", dependencies: ["BeckonJSON"]),
        // XMPP for the XEP-0357 app server (issue 16): the stream's XML, free of sockets.
        .target(name: "BeckonXMPP", dependencies: ["BeckonMarkup", server("Crypto", "swift-crypto")]),
        .testTarget(name: "BeckonXMPPTests", dependencies: ["BeckonXMPP"]),
        .testTarget(name: "BeckonProtocolTests", dependencies: ["BeckonProtocol", "BeckonJSON"]),
        .testTarget(name: "APNSCoreTests", dependencies: ["APNSCore", "BeckonJSON"]),
        .testTarget(
            name: "BeckonStoreTests",
            dependencies: [
                "BeckonStore", "BeckonProtocol", "APNSCore", "TestCapture", server("GRDB", "GRDB.swift"),
                server("GRDBSQLite", "GRDB.swift"),
                server("PostgresNIO", "postgres-nio"), server("Logging", "swift-log"),
                server("NIOConcurrencyHelpers", "swift-nio"),
            ]
        ),
        .testTarget(
            name: "BeckonCLITests",
            dependencies: [
                "beckon", "APNSCore", "APNSEmulator", "EmulatorTestSupport", "TestCapture",
                server("Crypto", "swift-crypto"),
            ]
        ),
        // Every log line of the test process into one file, for scripts/scan-logs.py (issue 15).
        .target(
            name: "TestCapture",
            dependencies: [
                server("Logging", "swift-log"),
                server("NIOConcurrencyHelpers", "swift-nio"),
            ],
            path: "Tests/TestCapture"
        ),
        // The emulator harness every test target shares: start an emulator with keys and bundle
        // ids, a raw HTTP/2 client, a control API client, provider keys and a settable clock.
        .target(
            name: "EmulatorTestSupport",
            dependencies: [
                "APNSEmulator", "APNSCore", "TestCapture",
                server("Crypto", "swift-crypto"),
                server("NIOCore", "swift-nio"),
                server("NIOConcurrencyHelpers", "swift-nio"),
                server("NIOPosix", "swift-nio"),
                server("NIOHTTP2", "swift-nio-http2"),
                server("NIOSSL", "swift-nio-ssl"),
            ],
            path: "Tests/EmulatorTestSupport"
        ),
        .testTarget(
            name: "APNSEmulatorTests",
            dependencies: [
                "APNSEmulator", "APNSCore", "EmulatorTestSupport",
                server("Crypto", "swift-crypto"),
                server("NIOCore", "swift-nio"),
                server("NIOConcurrencyHelpers", "swift-nio"),
                server("NIOPosix", "swift-nio"),
                server("NIOHTTP2", "swift-nio-http2"),
                server("NIOSSL", "swift-nio-ssl"),
            ]
        ),
        .testTarget(
            name: "APNSTests",
            dependencies: [
                "APNS", "APNSCore", "APNSEmulator", "EmulatorTestSupport",
                server("Crypto", "swift-crypto"),
                server("NIOCore", "swift-nio"),
                server("NIOPosix", "swift-nio"),
                server("Metrics", "swift-metrics"),
                server("MetricsTestKit", "swift-metrics"),
                server("NIOSSL", "swift-nio-ssl"),
                server("NIOConcurrencyHelpers", "swift-nio"),
                server("NIOHTTP2", "swift-nio-http2"),
                server("NIOHPACK", "swift-nio-http2"),
            ]
        ),
        // The client SDK (docs/client-sdk.md). `BeckonClient` is the portable core (every
        // decision; Foundation, GRDB, the wire contract): it builds and is tested on Linux.
        // The thin iOS adapters are two modules, each file wrapped in `#if canImport(...)`, so both
        // are empty on Linux (scripts/typecheck-apple.sh type-checks them against a stand-in for
        // Apple's SDK): `BeckonClientApple` holds what an app extension may use, and
        // `BeckonClientAppleApp` what only the app may (UIApplication.shared, PushKit, CallKit), so
        // that the notification service extension links no extension-unavailable API.
        // `BeckonClientNIO` is the WebSocket transport for Linux (the tests, the device
        // simulator); NIO is a Linux-only dependency, so an iOS build never compiles or links it.
        .target(
            name: "BeckonClient",
            dependencies: [
                "BeckonProtocol", "BeckonJSON", "BeckonSeal",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .target(name: "BeckonClientApple", dependencies: ["BeckonClient", "BeckonProtocol", "BeckonJSON"]),
        .target(name: "BeckonClientAppleApp", dependencies: ["BeckonClient", "BeckonClientApple", "BeckonProtocol", "BeckonJSON"]),
        .target(
            name: "BeckonClientNIO",
            dependencies: [
                "BeckonClient",
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket", condition: .when(platforms: [.linux], traits: ["ClientNIO"])),
                .product(name: "NIOWebSocket", package: "swift-nio", condition: .when(platforms: [.linux], traits: ["ClientNIO"])),
                .product(name: "Logging", package: "swift-log", condition: .when(platforms: [.linux], traits: ["ClientNIO"])),
            ]
        ),
        // A second process for the cross-process lease tests: takes the lease in a shared SQLite
        // file and reports what it sees on stdout, so a test can kill it with SIGKILL mid-lease.
        .executableTarget(name: "BeckonClientLockProbe", dependencies: ["BeckonClient"], path: "Tests/BeckonClientLockProbe"),
        // Fakes of the ports and small helpers, shared by the two test targets below.
        .target(
            name: "BeckonClientTestSupport",
            dependencies: ["BeckonClient", "BeckonProtocol", "BeckonJSON"],
            path: "Tests/BeckonClientTestSupport"
        ),
        .testTarget(
            name: "BeckonClientTests",
            dependencies: [
                "BeckonClient", "BeckonClientTestSupport", "BeckonProtocol", "BeckonJSON", "BeckonSeal", "BeckonClientLockProbe",
                "TestCapture",
            ]
        ),
        // The SDK against a real node on loopback: server, store, built-in APNs emulator.
        .testTarget(
            name: "BeckonClientServerTests",
            dependencies: [
                "BeckonClient", "BeckonClientNIO", "BeckonClientTestSupport", "BeckonProtocol", "BeckonJSON", "BeckonSeal",
                "BeckonNode", "BeckonServer", "BeckonStore", "TestCapture", "APNSEmulator", "APNSCore",
                server("Logging", "swift-log"),
                server("Prometheus", "swift-prometheus"),
                server("ServiceLifecycle", "swift-service-lifecycle"),
                // The app backend's user tokens (HS256) in the registration tests.
                server("Crypto", "swift-crypto"),
            ]
        ),
        // The iOS device simulator (docs/simulator.md): a phone as iOS treats apps and pushes, as a
        // pure state machine, and the runtime that hosts the real client SDK inside it.
        .target(
            name: "DeviceSimulator",
            dependencies: ["BeckonClient", "BeckonClientNIO", "BeckonProtocol", "BeckonJSON"]
        ),
        .testTarget(
            name: "DeviceSimulatorTests",
            dependencies: ["DeviceSimulator", "BeckonClient", "BeckonProtocol", "BeckonJSON"]
        ),
        // `beckon simulate`: scenarios and fleets of simulated devices against a real node with the
        // built-in APNs emulator; reports and timelines.
        .target(
            name: "BeckonSimulation",
            dependencies: [
                "DeviceSimulator", "BeckonClient", "BeckonClientNIO", "BeckonNode", "BeckonServer", "BeckonStore",
                "BeckonDelivery", "BeckonProtocol", "BeckonJSON", "BeckonMarkup", "APNSEmulator", "APNSCore",
                server("Crypto", "swift-crypto"),
                server("Logging", "swift-log"),
                server("Prometheus", "swift-prometheus"),
                server("ServiceLifecycle", "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "BeckonSimulationTests",
            dependencies: ["BeckonSimulation", "DeviceSimulator", "BeckonJSON"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

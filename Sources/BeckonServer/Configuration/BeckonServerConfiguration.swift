import BeckonProtocol
import BeckonDelivery
import BeckonStore
import Configuration
import Foundation
import Logging

/// Everything `beckon serve` reads at start, with its defaults. Each key can come from the
/// configuration file, an environment variable or a flag (README.md, "Configuration").
public struct BeckonServerConfiguration: Sendable, Equatable {
    /// `http.host`, `http.port`: where the HTTP API listens.
    public var host: String
    public var port: Int
    /// `http.max-connections`: connections held open at once (HTTP and sync sessions together);
    /// beyond it new ones are closed at once. Unset: the open-files limit less 256, so the
    /// process never runs out of file descriptors (see `ConnectionLimitedChannel`).
    public var maximumConnections: Int?
    /// `http.request-head-seconds`: time a new connection has to send its first request head (TLS
    /// handshake included); a slower one is closed. Without it a client trickling header bytes
    /// (slowloris) holds a connection, and a slot of `http.max-connections`, for ever.
    public var requestHeadSeconds: Int = 10
    /// `http.idle-seconds`: a keep-alive HTTP connection with no request for this long is closed
    /// (sync sessions have their own pings).
    public var idleSeconds: Int = 60
    /// `http.body-seconds`: a request's whole body must arrive within this long of its head, or
    /// the connection is answered 408 and closed (also after an early answer such as a 401). A
    /// byte every few seconds would reset a read timeout for ever; 30 s leaves a 1 MiB body
    /// (`limits.body-bytes`) at 35 KB/s.
    public var bodySeconds: Int = 30
    /// `database.path`: the SQLite file (WAL mode); created on first start.
    public var databasePath: String
    /// `database.url`: `postgres://user[:password]@host[:port]/database` puts the store on
    /// PostgreSQL instead (one node or several, docs/cluster.md); `database.path` is then unused.
    public var databaseURL: String?
    /// `database.cache-mib`: SQLite's page cache, MiB per connection (the writer and each reader).
    public var databaseCacheMiB: Int = SQLiteStore.Memory.default.cacheMiB
    /// `database.mmap-mib`: how much of the SQLite file is read through a memory map, MiB (0:
    /// none, every page read is a copy from the kernel).
    public var databaseMmapMiB: Int = SQLiteStore.Memory.default.mmapMiB
    /// `limits.payload-bytes`: the largest message payload accepted (64 KiB by default).
    public var maximumPayloadBytes: Int
    /// `limits.body-bytes`: the largest HTTP request body accepted.
    public var maximumBodyBytes: Int
    /// `shutdown.grace-seconds`: how long sessions get to finish on SIGTERM.
    public var shutdownGraceSeconds: Int
    /// `apps.ids` and `apps.<id>.*`: the apps this server serves.
    public var apps: [AppDeclaration]
    /// `log.level`: the least severe log level written (`trace` … `critical`); `info` by default.
    public var logLevel: Logger.Level = .info
    /// `admin.token`: the bearer token of the admin routes (`/v1/admin/...`); nil disables them.
    public var adminToken: String?
    /// `limits.push-extras-bytes`: the most a drop-in's own keys (Matrix ids, gorush `data`) may
    /// take in a push, of Apple's 4,096 bytes (docs/drop-ins.md).
    public var maximumPushExtrasBytes: Int = 2048
    /// `xmpp.*`: the XEP-0357 app server's component, if configured.
    public var xmpp: XMPPSettings?
    /// `sync.max-window`: the largest in-flight window a sync session is granted
    /// (docs/sync-protocol.md, "Flow control"); 100 by default.
    public var syncMaximumWindow: Int = 100
    /// `sync.max-frame-bytes`: the largest WebSocket message a device may send on `/v1/sync`.
    public var syncMaximumFrameBytes: Int = 64 * 1024
    /// `sync.ping-interval-seconds`: WebSocket pings on idle sync sessions, to find dead
    /// connections (0 disables them).
    public var syncPingIntervalSeconds: Int = 60
    /// `limits.messages-per-second`: `POST /v1/messages` requests one app may make a second,
    /// as a token bucket that also allows that many at once; beyond it 429. 0 disables.
    public var messagesPerSecond: Int = 20_000
    /// `limits.registrations-per-minute`: `POST /v1/devices` per user a minute (a reinstall
    /// loop or a leaked user token cannot churn credentials without end). 0 disables.
    public var registrationsPerMinute: Int = 30
    /// `limits.sync-connects-per-minute`: sync sessions one device may open a minute (a client
    /// reconnecting in a tight loop). 0 disables.
    public var syncConnectsPerMinute: Int = 60
    /// `delivery.sends-per-app`: pushes of one app in flight to APNs at once (a bulkhead: an app
    /// whose pushes hang cannot take the others' slots). It also sizes what the dispatcher may
    /// hold (8 claimed pushes a slot): in a burst a push decided while the hold is full is saved
    /// pending and claimed later, a second write and a read of its device. With 200, 98% of a
    /// 100,000-device burst's pushes were claimed and its node CPU a push was 142-145 µs; with
    /// 800 none were, and 111-119 µs (BENCHMARKS.md). 800 in flight is 400 streams on each of
    /// the pool's two connections, under the 500-1,500 APNs has allowed one connection
    /// (docs/apns.md C.2).
    public var sendsPerApp: Int = 800
    /// `delivery.attempts`: attempts of a push in the outbox that keeps failing for transient
    /// reasons (429, 5xx, no answer), each after the APNs client's own retries.
    public var dispatcherAttempts: Int = 8
    /// `delivery.retry-base-seconds` and `delivery.retry-cap-seconds`: the backoff between those
    /// attempts (doubling, with full jitter).
    public var dispatcherRetryBaseSeconds: Int = 5
    public var dispatcherRetryCapSeconds: Int = 600
    /// `delivery.claim-lease-seconds`: how long a claimed push is held for sending; a node that
    /// dies holding it leaves it due again after this.
    public var claimLeaseSeconds: Int = 300
    /// `delivery.deadline-lease-seconds`: how long a claimed planner deadline (a reconnect window,
    /// a re-push, a call's ring) is held for planning; one that a dying node held fires this much
    /// later, on another node.
    public var deadlineLeaseSeconds: Int = 30
    /// Several nodes on PostgreSQL (docs/cluster.md): `cluster.heartbeat-seconds`, how often a
    /// node says it is alive; `cluster.node-timeout-seconds`, how long after its last heartbeat a
    /// node is taken for dead (its sessions are ended for the planner, its devices reconnect
    /// elsewhere); `cluster.poll-seconds`, how often a node checks the mailboxes of its sessions'
    /// users for messages whose wake-up hint was lost; `cluster.hint-delay-ms`, how long hints
    /// are gathered before one NOTIFY carries them.
    public var clusterHeartbeatSeconds: Int = 2
    public var clusterNodeTimeoutSeconds: Int = 10
    public var clusterPollSeconds: Int = 2
    public var clusterHintDelayMilliseconds: Int = 2
    /// `apns.emulator-port`: where the built-in APNs emulator listens (on 127.0.0.1) when an
    /// app has no Apple key; 0 picks a free port.
    public var apnsEmulatorPort: Int = 0
    /// `apns.emulator-control-port`: when set, the emulator's control API (docs/apns-emulator.md:
    /// what each device received) listens there on 127.0.0.1; 0 picks a free port.
    public var apnsEmulatorControlPort: Int?
    /// `tls.certificate-chain-path` and `tls.private-key-path` (PEM): when both are set the
    /// listener speaks HTTPS/WSS itself; otherwise plain HTTP behind a TLS-terminating proxy.
    public var tlsCertificateChainPath: String?
    public var tlsPrivateKeyPath: String?

    public static let defaults = BeckonServerConfiguration(
        host: "127.0.0.1", port: 8080, databasePath: "beckon.sqlite",
        maximumPayloadBytes: 64 * 1024, maximumBodyBytes: 1024 * 1024, shutdownGraceSeconds: 10
    )

    public init(
        host: String, port: Int, databasePath: String, maximumPayloadBytes: Int, maximumBodyBytes: Int,
        shutdownGraceSeconds: Int, apps: [AppDeclaration] = [], adminToken: String? = nil
    ) {
        self.host = host
        self.port = port
        self.databasePath = databasePath
        self.maximumPayloadBytes = maximumPayloadBytes
        self.maximumBodyBytes = maximumBodyBytes
        self.shutdownGraceSeconds = shutdownGraceSeconds
        self.apps = apps
        self.adminToken = adminToken
    }

    /// Reads every key, falling back to the defaults, and checks the values make sense.
    public init(reading config: ConfigReader) throws(BeckonConfigurationError) {
        let defaults = Self.defaults
        self.init(
            host: config.string(forKey: "http.host", default: defaults.host),
            port: config.int(forKey: "http.port", default: defaults.port),
            databasePath: config.string(forKey: "database.path", default: defaults.databasePath),
            maximumPayloadBytes: config.int(forKey: "limits.payload-bytes", default: defaults.maximumPayloadBytes),
            maximumBodyBytes: config.int(forKey: "limits.body-bytes", default: defaults.maximumBodyBytes),
            shutdownGraceSeconds: config.int(forKey: "shutdown.grace-seconds", default: defaults.shutdownGraceSeconds)
        )
        guard (0...65535).contains(port) else { throw .invalid(key: "http.port", "must be 0-65535") }
        databaseURL = config.string(forKey: "database.url")
        if let databaseURL, !(databaseURL.hasPrefix("postgres://") || databaseURL.hasPrefix("postgresql://")) {
            throw .invalid(key: "database.url", "must be postgres://user[:password]@host[:port]/database")
        }
        maximumConnections = config.int(forKey: "http.max-connections")
        if let maximumConnections, maximumConnections < 1 {
            throw .invalid(key: "http.max-connections", "must be at least 1")
        }
        guard maximumPayloadBytes > 0 else { throw .invalid(key: "limits.payload-bytes", "must be positive") }
        guard maximumBodyBytes >= maximumPayloadBytes else {
            throw .invalid(key: "limits.body-bytes", "must be at least limits.payload-bytes")
        }
        guard shutdownGraceSeconds >= 0 else { throw .invalid(key: "shutdown.grace-seconds", "must not be negative") }
        let level = config.string(forKey: "log.level", default: logLevel.rawValue)
        guard let logLevel = Logger.Level(rawValue: level) else {
            throw .invalid(key: "log.level", "must be one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        self.logLevel = logLevel
        syncMaximumWindow = config.int(forKey: "sync.max-window", default: syncMaximumWindow)
        guard (1...10_000).contains(syncMaximumWindow) else { throw .invalid(key: "sync.max-window", "must be 1-10000") }
        syncMaximumFrameBytes = config.int(forKey: "sync.max-frame-bytes", default: syncMaximumFrameBytes)
        guard syncMaximumFrameBytes >= 1024 else { throw .invalid(key: "sync.max-frame-bytes", "must be at least 1024") }
        syncPingIntervalSeconds = config.int(forKey: "sync.ping-interval-seconds", default: syncPingIntervalSeconds)
        guard syncPingIntervalSeconds >= 0 else {
            throw .invalid(key: "sync.ping-interval-seconds", "must not be negative (0 disables pings)")
        }
        for (key, value) in [
            ("limits.messages-per-second", \Self.messagesPerSecond),
            ("limits.registrations-per-minute", \Self.registrationsPerMinute),
            ("limits.sync-connects-per-minute", \Self.syncConnectsPerMinute),
            ("database.mmap-mib", \Self.databaseMmapMiB),
        ] as [(String, WritableKeyPath<Self, Int>)] {
            self[keyPath: value] = config.int(forKey: ConfigKey(key), default: self[keyPath: value])
            guard self[keyPath: value] >= 0 else { throw .invalid(key: key, "must not be negative (0 disables it)") }
        }
        for (key, value) in [
            ("delivery.sends-per-app", \Self.sendsPerApp),
            ("delivery.attempts", \Self.dispatcherAttempts),
            ("delivery.retry-base-seconds", \Self.dispatcherRetryBaseSeconds),
            ("delivery.retry-cap-seconds", \Self.dispatcherRetryCapSeconds),
            ("delivery.claim-lease-seconds", \Self.claimLeaseSeconds),
            ("delivery.deadline-lease-seconds", \Self.deadlineLeaseSeconds),
            ("cluster.heartbeat-seconds", \Self.clusterHeartbeatSeconds),
            ("cluster.node-timeout-seconds", \Self.clusterNodeTimeoutSeconds),
            ("cluster.poll-seconds", \Self.clusterPollSeconds),
            ("cluster.hint-delay-ms", \Self.clusterHintDelayMilliseconds),
            ("database.cache-mib", \Self.databaseCacheMiB),
            ("http.request-head-seconds", \Self.requestHeadSeconds),
            ("http.idle-seconds", \Self.idleSeconds),
            ("http.body-seconds", \Self.bodySeconds),
            ("limits.push-extras-bytes", \Self.maximumPushExtrasBytes),
        ] as [(String, WritableKeyPath<Self, Int>)] {
            self[keyPath: value] = config.int(forKey: ConfigKey(key), default: self[keyPath: value])
            guard self[keyPath: value] >= 1 else { throw .invalid(key: key, "must be at least 1") }
        }
        guard clusterNodeTimeoutSeconds > 2 * clusterHeartbeatSeconds else {
            throw .invalid(key: "cluster.node-timeout-seconds", "must be more than twice cluster.heartbeat-seconds")
        }
        apnsEmulatorPort = config.int(forKey: "apns.emulator-port", default: apnsEmulatorPort)
        guard (0...65535).contains(apnsEmulatorPort) else { throw .invalid(key: "apns.emulator-port", "must be 0-65535") }
        apnsEmulatorControlPort = config.int(forKey: "apns.emulator-control-port")
        if let port = apnsEmulatorControlPort, !(0...65535).contains(port) {
            throw .invalid(key: "apns.emulator-control-port", "must be 0-65535")
        }
        tlsCertificateChainPath = config.string(forKey: "tls.certificate-chain-path")
        tlsPrivateKeyPath = config.string(forKey: "tls.private-key-path")
        if (tlsCertificateChainPath == nil) != (tlsPrivateKeyPath == nil) {
            throw .invalid(key: "tls", "set both tls.certificate-chain-path and tls.private-key-path, or neither")
        }
        apps = try Self.readApps(config)
        xmpp = try XMPPSettings.read(config, apps: apps)
        adminToken = config.string(forKey: "admin.token", isSecret: true)
        if let adminToken, adminToken.utf8.count < Self.minimumAdminTokenBytes {
            throw .invalid(key: "admin.token", "must be at least \(Self.minimumAdminTokenBytes) bytes of random text")
        }
    }

    /// Long enough that guessing it online is hopeless (it is compared in constant time).
    static let minimumAdminTokenBytes = 32

    /// Apps are read as `apps.ids` (a list of app ids) and one scope per app, `apps.<id>.*`,
    /// because swift-configuration's JSON provider reads arrays of scalars only, not arrays of
    /// objects; this shape also works from environment variables (`BECKON_APPS_IDS=chat`,
    /// `BECKON_APPS_CHAT_USER_TOKEN_SECRET=...`), which is where secrets belong.
    private static func readApps(_ config: ConfigReader) throws(BeckonConfigurationError) -> [AppDeclaration] {
        let ids = config.stringArray(forKey: "apps.ids", default: [])
        guard Set(ids).count == ids.count else { throw .invalid(key: "apps.ids", "lists an app twice") }
        var apps: [AppDeclaration] = []
        for id in ids {
            guard !id.isEmpty, id != "ids", id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) else {
                throw .invalid(key: "apps.ids", "\"\(id)\" is not a valid app id (ASCII letters, digits and '-'; not \"ids\")")
            }
            let scope = "apps.\(id)"
            let app = config.scoped(to: ConfigKey(["apps", id]))
            guard let bundleID = app.string(forKey: "bundle-id"), !bundleID.isEmpty else {
                throw .invalid(key: "\(scope).bundle-id", "is required")
            }
            guard let teamID = app.string(forKey: "team-id"), !teamID.isEmpty else {
                throw .invalid(key: "\(scope).team-id", "is required")
            }
            var environments: Set<PushEnvironment> = []
            for name in app.stringArray(forKey: "environments", default: ["sandbox", "production"]) {
                guard let environment = PushEnvironment(rawValue: name) else {
                    throw .invalid(key: "\(scope).environments", "\"\(name)\" is not sandbox or production")
                }
                environments.insert(environment)
            }
            guard !environments.isEmpty else { throw .invalid(key: "\(scope).environments", "must not be empty") }
            guard let secret = app.string(forKey: "user-token-secret", isSecret: true) else {
                throw .invalid(key: "\(scope).user-token-secret", "is required")
            }
            guard secret.utf8.count >= AppDeclaration.minimumSecretBytes else {
                throw .invalid(key: "\(scope).user-token-secret", "must be at least \(AppDeclaration.minimumSecretBytes) bytes")
            }
            var declaration = AppDeclaration(
                id: id, bundleID: bundleID, teamID: teamID, environments: environments, userTokenSecret: secret)
            declaration.apnsKeyPath = app.string(forKey: "apns.key-path")
            declaration.apnsKeyID = app.string(forKey: "apns.key-id")
            if (declaration.apnsKeyPath == nil) != (declaration.apnsKeyID == nil) {
                throw .invalid(key: "\(scope).apns", "set both apns.key-path and apns.key-id, or neither (the emulator)")
            }
            if let host = app.string(forKey: "apns.host") {
                guard declaration.apnsKeyPath != nil else {
                    throw .invalid(key: "\(scope).apns.host", "needs apns.key-path and apns.key-id (the endpoint checks the app's key)")
                }
                let port = app.int(forKey: "apns.port", default: 443)
                guard !host.isEmpty, (1...65535).contains(port) else {
                    throw .invalid(key: "\(scope).apns.port", "must be 1-65535, with a non-empty apns.host")
                }
                declaration.apnsEndpoint = APNSEndpoint(host: host, port: port, caFile: app.string(forKey: "apns.ca-file"))
            } else if app.int(forKey: "apns.port") != nil || app.string(forKey: "apns.ca-file") != nil {
                throw .invalid(key: "\(scope).apns.host", "is required with apns.port or apns.ca-file")
            }
            declaration.delivery = try readDeliveryPolicy(app.scoped(to: "delivery"), scope: "\(scope).delivery")
            declaration.matrixAppIDs = app.stringArray(forKey: "matrix.app-ids", default: [])
            declaration.matrixSandboxAppIDs = app.stringArray(forKey: "matrix.sandbox-app-ids", default: [])
            if !declaration.matrixSandboxAppIDs.isEmpty, !environments.contains(.sandbox) {
                throw .invalid(key: "\(scope).matrix.sandbox-app-ids", "the app does not take sandbox tokens (environments)")
            }
            if let name = app.string(forKey: "gorush") {
                guard let access = GorushAccess(rawValue: name) else {
                    throw .invalid(key: "\(scope).gorush", "\"\(name)\" is not off, open or key")
                }
                declaration.gorush = access
            }
            if let name = app.string(forKey: "drop-in-environment") {
                guard let environment = PushEnvironment(rawValue: name), environments.contains(environment) else {
                    throw .invalid(key: "\(scope).drop-in-environment", "\"\(name)\" is not one of the app's environments")
                }
                declaration.dropInEnvironment = environment
            }
            apps.append(declaration)
        }
        let matrixIDs = apps.flatMap { $0.matrixAppIDs + $0.matrixSandboxAppIDs }
        guard Set(matrixIDs).count == matrixIDs.count else {
            throw .invalid(key: "apps.<id>.matrix.app-ids", "a Matrix app id is listed for two apps")
        }
        return apps
    }
}

extension BeckonServerConfiguration {
    /// `apps.<id>.delivery.*`; each key falls back to `DeliveryPolicy`'s default.
    static func readDeliveryPolicy(_ config: ConfigReader, scope: String) throws(BeckonConfigurationError) -> DeliveryPolicy {
        var policy = DeliveryPolicy()
        if let name = config.string(forKey: "strategy") {
            guard let strategy = DeliveryStrategy(rawValue: name) else {
                throw .invalid(key: "\(scope).strategy", "\"\(name)\" is not wake, service-extension, filtering or content")
            }
            policy.strategy = strategy
        }
        policy.backgroundPushesPerHour = config.int(forKey: "background-pushes-per-hour", default: policy.backgroundPushesPerHour)
        guard policy.backgroundPushesPerHour >= 0 else {
            throw .invalid(key: "\(scope).background-pushes-per-hour", "must not be negative")
        }
        for (key, path) in [
            ("reconnect-window-seconds", \DeliveryPolicy.reconnectWindow),
            ("repush-initial-delay-seconds", \DeliveryPolicy.repushInitialDelay),
            ("call-ring-interval-seconds", \DeliveryPolicy.callRingInterval),
            ("call-timeout-seconds", \DeliveryPolicy.callTimeout),
            ("alert-ttl-seconds", \DeliveryPolicy.alertTimeToLive),
            ("background-ttl-seconds", \DeliveryPolicy.backgroundTimeToLive),
            ("clear-all-interval-seconds", \DeliveryPolicy.clearAllInterval),
        ] as [(String, WritableKeyPath<DeliveryPolicy, TimeInterval>)] {
            // Whole seconds may be written as integers (JSON `30`), fractions as decimals.
            let key = ConfigKey(key)
            policy[keyPath: path] = config.double(forKey: key) ?? config.int(forKey: key).map(Double.init)
                ?? policy[keyPath: path]
            guard policy[keyPath: path] > 0 else { throw .invalid(key: "\(scope).\(key.description)", "must be positive") }
        }
        // A number of seconds, or "never" (nil: an owed wake waits for a free slot however long).
        let throttledKey = ConfigKey("throttled-alert-delay-seconds")
        if config.string(forKey: throttledKey) == "never" {
            policy.throttledAlertDelay = nil
        } else if let delay = config.double(forKey: throttledKey) ?? config.int(forKey: throttledKey).map(Double.init) {
            guard delay > 0 else { throw .invalid(key: "\(scope).throttled-alert-delay-seconds", "must be positive, or \"never\"") }
            policy.throttledAlertDelay = delay
        }
        for (key, path) in [
            ("message-loc-key", \DeliveryPolicy.messageLocKey),
            ("call-loc-key", \DeliveryPolicy.callLocKey),
            ("missed-call-loc-key", \DeliveryPolicy.missedCallLocKey),
            ("answered-elsewhere-loc-key", \DeliveryPolicy.answeredElsewhereLocKey),
            ("declined-elsewhere-loc-key", \DeliveryPolicy.declinedElsewhereLocKey),
        ] as [(String, WritableKeyPath<DeliveryPolicy, String>)] {
            // The app's Localizable.strings key for the generic text iOS shows (docs/apns.md D.2).
            policy[keyPath: path] = config.string(forKey: ConfigKey(key)) ?? policy[keyPath: path]
            guard !policy[keyPath: path].isEmpty else { throw .invalid(key: "\(scope).\(key)", "must not be empty") }
        }
        policy.repushLimit = config.int(forKey: "repush-limit", default: policy.repushLimit)
        guard policy.repushLimit >= 0 else { throw .invalid(key: "\(scope).repush-limit", "must not be negative") }
        return policy
    }
}

// Printed (a log, a debugger), the configuration shows where it listens and what it serves, never
// its admin token or the apps' secrets.
extension BeckonServerConfiguration: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String {
        "BeckonServerConfiguration(http: \(host):\(port), apps: \(apps.map(\.id)), admin: \(adminToken == nil ? "off" : "on"))"
    }
    public var debugDescription: String { description }
}

public enum BeckonConfigurationError: Error, Equatable, CustomStringConvertible {
    case invalid(key: String, String)

    public var description: String {
        switch self {
        case .invalid(let key, let why): "configuration \(key): \(why)"
        }
    }
}

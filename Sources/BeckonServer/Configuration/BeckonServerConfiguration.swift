import BeckonProtocol
import BeckonDelivery
import BeckonStore
import Configuration
import Foundation
import Logging

/// Everything `beckon serve` reads at start, with its defaults. Each key can come from the
/// configuration file, an environment variable or a flag (README.md, "Configuration").
public struct BeckonServerConfiguration: Sendable, Equatable {
    /// The listener: `http.*`, `tls.*`.
    public var http = HTTPConfiguration()
    /// The store: `database.*`.
    public var database = DatabaseConfiguration()
    /// Sizes and rates: `limits.*`.
    public var limits = LimitsConfiguration()
    /// The sync gateway: `sync.*`.
    public var sync = SyncLimits()
    /// The planner's driver and the outbox dispatcher: `delivery.*` (each app's policy is in its
    /// declaration).
    public var delivery = DeliveryConfiguration()
    /// Several nodes on PostgreSQL: `cluster.*`.
    public var cluster = ClusterConfiguration()
    /// The built-in APNs emulator: `apns.emulator-*`.
    public var emulator = EmulatorConfiguration()
    /// `shutdown.grace-seconds`: how long sessions get to finish on SIGTERM.
    public var shutdownGraceSeconds = 10
    /// `apps.ids` and `apps.<id>.*`: the apps this server serves.
    public var apps: [AppDeclaration] = []
    /// `log.level`: the least severe log level written (`trace` … `critical`); `info` by default.
    public var logLevel: Logger.Level = .info
    /// `admin.token`: the bearer token of the admin routes (`/v1/admin/...`); nil disables them.
    public var adminToken: String?
    /// `xmpp.*`: the XEP-0357 app server's component, if configured.
    public var xmpp: XMPPSettings?

    public static let defaults = BeckonServerConfiguration()

    public init() {}

    /// Reads every key, each component its own, falling back to the defaults, and checks the
    /// values make sense.
    public init(reading config: ConfigReader) throws(BeckonConfigurationError) {
        http = try HTTPConfiguration(reading: config)
        database = try DatabaseConfiguration(reading: config)
        limits = try LimitsConfiguration(reading: config)
        sync = try SyncLimits(reading: config)
        delivery = try DeliveryConfiguration(reading: config)
        cluster = try ClusterConfiguration(reading: config)
        emulator = try EmulatorConfiguration(reading: config)
        shutdownGraceSeconds = config.int(forKey: "shutdown.grace-seconds", default: shutdownGraceSeconds)
        guard shutdownGraceSeconds >= 0 else { throw .invalid(key: "shutdown.grace-seconds", "must not be negative") }
        let level = config.string(forKey: "log.level", default: logLevel.rawValue)
        guard let logLevel = Logger.Level(rawValue: level) else {
            throw .invalid(key: "log.level", "must be one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        self.logLevel = logLevel
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
        "BeckonServerConfiguration(http: \(http.host):\(http.port), apps: \(apps.map(\.id)), admin: \(adminToken == nil ? "off" : "on"))"
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

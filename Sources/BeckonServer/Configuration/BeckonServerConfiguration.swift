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
        apps = try AppDeclaration.readAll(config)
        xmpp = try XMPPSettings.read(config, apps: apps)
        adminToken = config.string(forKey: "admin.token", isSecret: true)
        if let adminToken, adminToken.utf8.count < Self.minimumAdminTokenBytes {
            throw .invalid(key: "admin.token", "must be at least \(Self.minimumAdminTokenBytes) bytes of random text")
        }
    }

    /// Long enough that guessing it online is hopeless (it is compared in constant time).
    static let minimumAdminTokenBytes = 32
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

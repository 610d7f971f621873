import Configuration

/// Everything `beckon serve` reads at start, with its defaults. Each key can come from the
/// configuration file, an environment variable or a flag (README.md, "Configuration").
public struct BeckonServerConfiguration: Sendable, Equatable {
    /// `http.host`, `http.port`: where the HTTP API listens.
    public var host: String
    public var port: Int
    /// `database.path`: the SQLite file (WAL mode); created on first start.
    public var databasePath: String
    /// `limits.payload-bytes`: the largest message payload accepted (64 KiB by default).
    public var maximumPayloadBytes: Int
    /// `limits.body-bytes`: the largest HTTP request body accepted.
    public var maximumBodyBytes: Int
    /// `shutdown.grace-seconds`: how long sessions get to finish on SIGTERM.
    public var shutdownGraceSeconds: Int

    public static let defaults = BeckonServerConfiguration(
        host: "127.0.0.1", port: 8080, databasePath: "beckon.sqlite",
        maximumPayloadBytes: 64 * 1024, maximumBodyBytes: 1024 * 1024, shutdownGraceSeconds: 10
    )

    public init(
        host: String, port: Int, databasePath: String, maximumPayloadBytes: Int, maximumBodyBytes: Int,
        shutdownGraceSeconds: Int
    ) {
        self.host = host
        self.port = port
        self.databasePath = databasePath
        self.maximumPayloadBytes = maximumPayloadBytes
        self.maximumBodyBytes = maximumBodyBytes
        self.shutdownGraceSeconds = shutdownGraceSeconds
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
        guard maximumPayloadBytes > 0 else { throw .invalid(key: "limits.payload-bytes", "must be positive") }
        guard maximumBodyBytes >= maximumPayloadBytes else {
            throw .invalid(key: "limits.body-bytes", "must be at least limits.payload-bytes")
        }
        guard shutdownGraceSeconds >= 0 else { throw .invalid(key: "shutdown.grace-seconds", "must not be negative") }
    }
}

public enum BeckonConfigurationError: Error, Equatable, CustomStringConvertible {
    case invalid(key: String, String)

    public var description: String {
        switch self {
        case .invalid(let key, let why): "configuration \(key): \(why)"
        }
    }
}

import Configuration

/// The limits of the sync gateway, each explicit (docs/sync-protocol.md, "Limits").
public struct SyncLimits: Sendable, Equatable {
    /// `sync.max-window`: the largest in-flight window granted (a larger `hello.window` is
    /// capped). Also the window granted when `hello` names none, if below 100.
    public var maximumWindow: Int
    /// `sync.max-frame-bytes`: the largest message a device may send (a bigger one closes the
    /// connection with 1009).
    public var maximumFrameBytes: Int
    /// `sync.ping-interval-seconds`: the server sends a WebSocket ping this often and closes a
    /// connection whose pong does not come back within the next interval (nil: no pings).
    public var pingInterval: Duration?
    /// Frames read from a device and not yet processed; beyond this the session is closed with
    /// 4029 (a device must not pipeline without bound).
    public var maximumQueuedFrames: Int
    /// How long the server waits for the device's answer to its close frame.
    public var closeTimeout: Duration

    public static let defaultWindow = 100

    public init(
        maximumWindow: Int = 100, maximumFrameBytes: Int = 64 * 1024,
        pingInterval: Duration? = .seconds(60), maximumQueuedFrames: Int = 128, closeTimeout: Duration = .seconds(2)
    ) {
        self.maximumWindow = maximumWindow
        self.maximumFrameBytes = maximumFrameBytes
        self.pingInterval = pingInterval
        self.maximumQueuedFrames = maximumQueuedFrames
        self.closeTimeout = closeTimeout
    }

    /// `sync.*`.
    init(reading config: ConfigReader) throws(BeckonConfigurationError) {
        self.init()
        maximumWindow = config.int(forKey: "sync.max-window", default: maximumWindow)
        guard (1...10_000).contains(maximumWindow) else { throw .invalid(key: "sync.max-window", "must be 1-10000") }
        maximumFrameBytes = config.int(forKey: "sync.max-frame-bytes", default: maximumFrameBytes)
        guard maximumFrameBytes >= 1024 else { throw .invalid(key: "sync.max-frame-bytes", "must be at least 1024") }
        let ping = config.int(forKey: "sync.ping-interval-seconds", default: 60)
        guard ping >= 0 else { throw .invalid(key: "sync.ping-interval-seconds", "must not be negative (0 disables pings)") }
        pingInterval = ping > 0 ? .seconds(ping) : nil
    }
}

import Configuration

/// The built-in APNs emulator, started for the apps without an Apple key (`apns.*`).
public struct EmulatorConfiguration: Sendable, Equatable {
    /// `apns.emulator-port`: where it listens (on 127.0.0.1); 0 picks a free port.
    public var port = 0
    /// `apns.emulator-control-port`: when set, the emulator's control API (docs/apns-emulator.md:
    /// what each device received) listens there on 127.0.0.1; 0 picks a free port.
    public var controlPort: Int?

    public init() {}

    init(reading config: ConfigReader) throws(BeckonConfigurationError) {
        port = config.int(forKey: "apns.emulator-port", default: port)
        guard (0...65535).contains(port) else { throw .invalid(key: "apns.emulator-port", "must be 0-65535") }
        controlPort = config.int(forKey: "apns.emulator-control-port")
        if let controlPort, !(0...65535).contains(controlPort) {
            throw .invalid(key: "apns.emulator-control-port", "must be 0-65535")
        }
    }
}

import Foundation

/// Whether the device connected after a push (rule 10): observed with its latency, or missed.
public struct WakeOutcome: Hashable, Sendable {
    /// The device the push went to (whose planner observed the outcome).
    public var device: DeviceRef
    public var pushID: String
    /// The latency when the device connected; nil when the reconnect window passed without it.
    public var latency: TimeInterval?
    /// When the planner settled it (the connection, or the window's end); nil: when it is saved.
    public var at: Date?

    public init(device: DeviceRef, pushID: String, latency: TimeInterval?, at: Date? = nil) {
        self.at = at
        self.device = device
        self.pushID = pushID
        self.latency = latency
    }
}

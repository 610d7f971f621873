/// What the status page counts for an app (`DeliveryReports.appCounts`).
public struct AppCounts: Hashable, Sendable {
    public var devices: Int
    /// Registered but with no token left (pruned after a 410, or never given one).
    public var devicesWithoutToken: Int
    /// Pushes decided and not yet sent or failed.
    public var pendingPushes: Int

    public init(devices: Int, devicesWithoutToken: Int, pendingPushes: Int) {
        self.devices = devices
        self.devicesWithoutToken = devicesWithoutToken
        self.pendingPushes = pendingPushes
    }
}

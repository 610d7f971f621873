/// A device, addressed within its app: device ids are chosen by the app on the phone and are
/// unique only per app.
public struct DeviceRef: Hashable, Sendable, Codable, CustomStringConvertible {
    public var appID: String
    public var deviceID: String

    public init(appID: String, deviceID: String) {
        self.appID = appID
        self.deviceID = deviceID
    }

    public var description: String { "\(appID)/\(deviceID)" }
}

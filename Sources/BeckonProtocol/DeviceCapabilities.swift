import BeckonJSON

/// What the app on this device can do with a push; the delivery planner picks a strategy from it
/// (docs/design.md, "Delivery strategies").
public struct DeviceCapabilities: Hashable, Sendable, Codable {
    /// The app ships a notification service extension, so an alert with `mutable-content: 1` can
    /// be rewritten on the device (Linphone, Signal, Element).
    public var notificationServiceExtension: Bool
    /// The app has the `com.apple.developer.usernotifications.filtering` entitlement, so its
    /// extension may suppress an alert (Monal).
    public var filtering: Bool
    /// The app's `UIBackgroundModes` (`remote-notification`, `voip`, `fetch`, `processing`, ...).
    public var backgroundModes: Set<String>

    public init(notificationServiceExtension: Bool = false, filtering: Bool = false, backgroundModes: Set<String> = []) {
        self.notificationServiceExtension = notificationServiceExtension
        self.filtering = filtering
        self.backgroundModes = backgroundModes
    }

    /// As `POST /v1/devices` and `PUT /v1/devices/{id}` take it (openapi.yaml, `Capabilities`).
    public var json: JSONValue {
        [
            "notificationServiceExtension": .bool(notificationServiceExtension), "filtering": .bool(filtering),
            "backgroundModes": .array(backgroundModes.sorted().map(JSONValue.string)),
        ]
    }
}

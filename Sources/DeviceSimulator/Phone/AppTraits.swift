/// What the app build on a phone has: its extension, entitlements and background modes, and
/// how it behaves where an app can get it wrong.
public struct AppTraits: Hashable, Sendable, Codable {
    /// It ships a notification service extension (apns.md E.4).
    public var serviceExtension: Bool
    /// Its extension has the filtering entitlement: it may suppress an alert (apns.md E.4).
    public var filtering: Bool
    /// `UIBackgroundModes` has `remote-notification`: background pushes wake it (apns.md E.3).
    public var remoteNotificationMode: Bool
    /// It registers for PushKit VoIP pushes and has CallKit.
    public var voip: Bool
    /// It reports every VoIP push to CallKit, as the SDK does. False plays seed 003's app that
    /// returns from the PushKit handler without reporting.
    public var reportsCalls: Bool

    public init(
        serviceExtension: Bool = false, filtering: Bool = false, remoteNotificationMode: Bool = true,
        voip: Bool = false, reportsCalls: Bool = true
    ) {
        self.serviceExtension = serviceExtension
        self.filtering = filtering
        self.remoteNotificationMode = remoteNotificationMode
        self.voip = voip
        self.reportsCalls = reportsCalls
    }
}

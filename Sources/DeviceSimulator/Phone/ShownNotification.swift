import BeckonJSON

/// A notification on the phone's screen (in the notification centre).
public struct ShownNotification: Hashable, Sendable {
    /// `apns-collapse-id` (or iOS's own id) for a remote one, the app's identifier for a local one.
    public var identifier: String
    /// The messages it stands for.
    public var messages: [String]
    public var text: String
    /// What a tap hands to the app.
    public var payload: JSONValue
    public var shownAt: Double
}

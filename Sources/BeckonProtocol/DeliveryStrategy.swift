/// How an app's devices are told about a new message (docs/design.md, "Delivery strategies").
///
/// The app picks one; `DeliveryPolicy.effectiveStrategy(for:)` lowers it per device to what the
/// device's declared capabilities can actually carry out.
public enum DeliveryStrategy: String, Hashable, Sendable, Codable, CaseIterable {
    /// A background push with ids only, an alert fallback if the app does not reconnect (LayerKit;
    /// rules 3 and 4).
    case wake
    /// An alert with `mutable-content: 1` and generic `loc-key` text; the notification service
    /// extension fetches the message by id and rewrites the text (Linphone, Signal, Element).
    case serviceExtension = "service-extension"
    /// A priority-10 alert used purely as a wake-up; the extension syncs and may suppress the alert
    /// with the filtering entitlement (Monal; apns.md E.4).
    case filtering
    /// An alert with the message's title and body, optionally sealed per device (rule 1 opt-in).
    case content
}

import BeckonJSON

/// What a drop-in (a Matrix push gateway's or gorush's caller) needs in the push beside Beckon's
/// own key: the ids the app fetches with (`event_id`, `room_id`, gorush's `data`), and the badge
/// its own server counts. Ids, not content (rule 1): the drop-ins put message text in `hints`,
/// which only the `content` strategy shows.
public struct PushExtras: Hashable, Sendable, Codable {
    /// Top-level keys of the push payload, beside `aps` and `beckon` (never those two).
    public var custom: [String: JSONValue]
    /// The badge the caller's server counts (Matrix `counts.unread`, gorush `badge`), instead of
    /// Beckon's unread count, which knows nothing of messages read over another protocol.
    public var badge: Int?
    /// The whole push, when the caller wrote it field by field (gorush): sent as asked, in place
    /// of what the strategy would send.
    public var relay: RelayedPush?
    /// The caller's own `aps` defaults (a Matrix pusher's `default_payload`).
    public var aps: APSDefaults?
    /// Alerts go at priority 5 (a Matrix `prio: low`), but where the strategy needs 10
    /// (`filtering`, apns.md E.4). Optional, as the saved planner states before it lack it.
    public var considerPower: Bool?
    /// An alert sounds only when the caller asked (a hint's sound, or `aps.sound`), not with the
    /// app's `delivery.alert-sound`: Sygnal plays none unless the pusher's payload says so.
    public var soundOnlyWhenAsked: Bool?

    /// Keys a drop-in may not set: the push's own.
    public static let reservedKeys: Set<String> = ["aps", "beckon"]

    public init(
        custom: [String: JSONValue] = [:], badge: Int? = nil, relay: RelayedPush? = nil, aps: APSDefaults? = nil,
        considerPower: Bool? = nil, soundOnlyWhenAsked: Bool? = nil
    ) {
        self.custom = custom.filter { !Self.reservedKeys.contains($0.key) }
        self.badge = badge
        self.relay = relay
        self.aps = aps
        self.considerPower = considerPower
        self.soundOnlyWhenAsked = soundOnlyWhenAsked
    }

    /// `custom` merged under the push's own keys (theirs win).
    func merged(into own: [String: JSONValue]) -> [String: JSONValue] {
        custom.merging(own) { _, mine in mine }
    }
}

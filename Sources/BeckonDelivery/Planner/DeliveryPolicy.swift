import Foundation
import BeckonProtocol

/// An app's delivery settings: the strategy and every number the planner uses.
///
/// Stored inside each `DevicePlanner`; the driver may replace it between events (it applies from
/// the next event on). Decoding fills missing keys with the defaults, so a persisted planner
/// survives new settings being added.
public struct DeliveryPolicy: Hashable, Sendable, Codable {
    /// The app's strategy before device capabilities are applied. Default `.wake` (docs/design.md, "Delivery strategies").
    public var strategy: DeliveryStrategy
    /// Background pushes per device per sliding `backgroundThrottleWindow` (an hour). Default 3: Apple says "don't try to send
    /// more than two or three per hour" (apns.md E.3; rule 3).
    public var backgroundPushesPerHour: Int
    /// The sliding throttle window. Default 3600 s (one hour, Apple's wording).
    public var backgroundThrottleWindow: TimeInterval
    /// How long after a wake push the device must connect before it counts as unreachable.
    /// Default 60 s: iOS gives the app 30 s of background time (apns.md E.3), plus slack for
    /// APNs latency and priority-5 batching (rule 4).
    public var reconnectWindow: TimeInterval
    /// How long a wake may stay owed (throttled) before its messages go out as one alert instead.
    /// Default 60 s, the default reconnect window: once the device's background budget is spent
    /// (two or three an hour, apns.md E.3) a message reaches the screen in about the time a wake
    /// would have been judged missed in, not when the hour's budget frees (with 900 s, the
    /// fourth message of an hour stayed silent for a quarter of an hour). The price: an alert
    /// where a wake would have let the app show it itself. nil waits for a free slot however long
    /// (rule 3: never count on a wake).
    public var throttledAlertDelay: TimeInterval?
    /// The first re-push after a connection dropped with unacknowledged messages. Default 30 s (rule 5).
    public var repushInitialDelay: TimeInterval
    /// Each further re-push waits this many times longer. Default 2 (30, 60, 120, 240 s).
    public var repushBackoffMultiplier: Double
    /// At most this many re-pushes per dropped connection. Default 4.
    public var repushLimit: Int
    /// The gap between ringing alerts for a call to a device without a VoIP token. Default 10 s (rule 6).
    public var callRingInterval: TimeInterval
    /// How long an unanswered call rings before it becomes a missed call. Default 45 s (rule 6).
    public var callTimeout: TimeInterval
    /// The generic alert text for a message (`loc-key` in the app's Localizable.strings).
    /// Default "BECKON_NEW_MESSAGE".
    public var messageLocKey: String
    /// The text of a ringing-call alert. Default "BECKON_CALL".
    public var callLocKey: String
    /// The text of the final alert for an unanswered call. Default "BECKON_MISSED_CALL".
    public var missedCallLocKey: String
    /// The text that replaces a ringing alert answered on another device.
    /// Default "BECKON_CALL_ANSWERED_ELSEWHERE".
    public var answeredElsewhereLocKey: String
    /// The text that replaces a ringing alert declined on another device.
    /// Default "BECKON_CALL_DECLINED_ELSEWHERE".
    public var declinedElsewhereLocKey: String
    /// The sound of alerts whose message has no sound hint. Default "default"; nil for silent alerts.
    public var alertSound: String?
    /// How long APNs may store an alert for an offline device (capped by the message's own expiry).
    /// Default 86400 s: a day-old "new message" banner is noise; the app syncs anyway.
    public var alertTimeToLive: TimeInterval
    /// How long APNs may store a background push. Default 3600 s: by then rule 4's escalation has
    /// taken over, and Apple keeps only the newest held one anyway (apns.md E.3).
    public var backgroundTimeToLive: TimeInterval
    /// At most this many pushes wait for the next connection to be measured (rule 10); older ones
    /// are dropped unmeasured, so a device that never returns cannot grow the persisted state.
    /// Default 50.
    public var measuredPushLimit: Int
    /// At most this many message ids (the newest) in one push's `ids` or `clear` list. Default 20
    /// (~800 bytes): background pushes cannot be truncated, and ids are only hints — the app syncs
    /// everything after its cursor, and reconciles read state, whenever it connects.
    public var maximumIDsPerPush: Int
    /// At most one `{"aps":{"badge":0}}` clear-all push per device in this many seconds (seed
    /// 000): it is an alert push, so not throttled by iOS, but it should be as rare as a
    /// background push would be. Default 600. Within it, a clear goes as a background push.
    public var clearAllInterval: TimeInterval

    public init(
        strategy: DeliveryStrategy = .wake,
        backgroundPushesPerHour: Int = 3,
        backgroundThrottleWindow: TimeInterval = 3600,
        reconnectWindow: TimeInterval = 60,
        throttledAlertDelay: TimeInterval? = 60,
        repushInitialDelay: TimeInterval = 30,
        repushBackoffMultiplier: Double = 2,
        repushLimit: Int = 4,
        callRingInterval: TimeInterval = 10,
        callTimeout: TimeInterval = 45,
        messageLocKey: String = "BECKON_NEW_MESSAGE",
        callLocKey: String = "BECKON_CALL",
        missedCallLocKey: String = "BECKON_MISSED_CALL",
        answeredElsewhereLocKey: String = "BECKON_CALL_ANSWERED_ELSEWHERE",
        declinedElsewhereLocKey: String = "BECKON_CALL_DECLINED_ELSEWHERE",
        alertSound: String? = "default",
        alertTimeToLive: TimeInterval = 86_400,
        backgroundTimeToLive: TimeInterval = 3600,
        measuredPushLimit: Int = 50,
        maximumIDsPerPush: Int = 20,
        clearAllInterval: TimeInterval = 600
    ) {
        self.strategy = strategy
        self.backgroundPushesPerHour = backgroundPushesPerHour
        self.backgroundThrottleWindow = backgroundThrottleWindow
        self.reconnectWindow = reconnectWindow
        self.throttledAlertDelay = throttledAlertDelay
        self.repushInitialDelay = repushInitialDelay
        self.repushBackoffMultiplier = repushBackoffMultiplier
        self.repushLimit = repushLimit
        self.callRingInterval = callRingInterval
        self.callTimeout = callTimeout
        self.messageLocKey = messageLocKey
        self.callLocKey = callLocKey
        self.missedCallLocKey = missedCallLocKey
        self.answeredElsewhereLocKey = answeredElsewhereLocKey
        self.declinedElsewhereLocKey = declinedElsewhereLocKey
        self.alertSound = alertSound
        self.alertTimeToLive = alertTimeToLive
        self.backgroundTimeToLive = backgroundTimeToLive
        self.measuredPushLimit = measuredPushLimit
        self.maximumIDsPerPush = maximumIDsPerPush
        self.clearAllInterval = clearAllInterval
    }

    /// The strategy this device can actually carry out. Fallbacks, in order:
    ///
    /// - `content` works everywhere (sealing additionally needs an extension; see `NotificationFactory`).
    /// - `filtering` needs the filtering entitlement *and* an extension (apns.md E.4); otherwise it
    ///   is treated as `service-extension`.
    /// - `service-extension` needs an extension; otherwise `wake` if the app has the
    ///   `remote-notification` background mode, else a generic alert (still `service-extension`'s
    ///   payload: without an extension iOS shows the `loc-key` text and ignores `mutable-content`).
    /// - `wake` needs the `remote-notification` background mode, without which iOS never launches
    ///   the app for a background push (apns.md E.3); otherwise `service-extension` (an extension
    ///   fetches, or the generic text at least tells the user). Content never leaks by fallback (rule 1).
    public func effectiveStrategy(for capabilities: DeviceCapabilities) -> DeliveryStrategy {
        let hasExtension = capabilities.notificationServiceExtension
        let canWake = capabilities.backgroundModes.contains(Self.remoteNotificationMode)
        switch strategy {
        case .content:
            return .content
        case .filtering where capabilities.filtering && hasExtension:
            return .filtering
        case .filtering, .serviceExtension:
            if hasExtension { return .serviceExtension }
            return canWake ? .wake : .serviceExtension
        case .wake:
            return canWake ? .wake : .serviceExtension
        }
    }

    /// The `UIBackgroundModes` entry that lets a background push launch the app.
    public static let remoteNotificationMode = "remote-notification"
}

extension DeliveryPolicy {
    private enum CodingKeys: String, CodingKey {
        case strategy, backgroundPushesPerHour, backgroundThrottleWindow, reconnectWindow
        case throttledAlertDelay, repushInitialDelay, repushBackoffMultiplier, repushLimit
        case callRingInterval, callTimeout, messageLocKey, callLocKey, missedCallLocKey
        case answeredElsewhereLocKey, declinedElsewhereLocKey, alertSound, alertTimeToLive
        case backgroundTimeToLive, measuredPushLimit, maximumIDsPerPush, clearAllInterval
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = DeliveryPolicy()
        func value<T: Decodable>(_ key: CodingKeys, _ fallback: T) throws -> T {
            try c.decodeIfPresent(T.self, forKey: key) ?? fallback
        }
        self.init(
            strategy: try value(.strategy, d.strategy),
            backgroundPushesPerHour: try value(.backgroundPushesPerHour, d.backgroundPushesPerHour),
            backgroundThrottleWindow: try value(.backgroundThrottleWindow, d.backgroundThrottleWindow),
            reconnectWindow: try value(.reconnectWindow, d.reconnectWindow),
            throttledAlertDelay: c.contains(.throttledAlertDelay)
                ? try c.decodeIfPresent(TimeInterval.self, forKey: .throttledAlertDelay) : d.throttledAlertDelay,
            repushInitialDelay: try value(.repushInitialDelay, d.repushInitialDelay),
            repushBackoffMultiplier: try value(.repushBackoffMultiplier, d.repushBackoffMultiplier),
            repushLimit: try value(.repushLimit, d.repushLimit),
            callRingInterval: try value(.callRingInterval, d.callRingInterval),
            callTimeout: try value(.callTimeout, d.callTimeout),
            messageLocKey: try value(.messageLocKey, d.messageLocKey),
            callLocKey: try value(.callLocKey, d.callLocKey),
            missedCallLocKey: try value(.missedCallLocKey, d.missedCallLocKey),
            answeredElsewhereLocKey: try value(.answeredElsewhereLocKey, d.answeredElsewhereLocKey),
            declinedElsewhereLocKey: try value(.declinedElsewhereLocKey, d.declinedElsewhereLocKey),
            alertSound: c.contains(.alertSound)
                ? try c.decodeIfPresent(String.self, forKey: .alertSound) : d.alertSound,
            alertTimeToLive: try value(.alertTimeToLive, d.alertTimeToLive),
            backgroundTimeToLive: try value(.backgroundTimeToLive, d.backgroundTimeToLive),
            measuredPushLimit: try value(.measuredPushLimit, d.measuredPushLimit),
            maximumIDsPerPush: try value(.maximumIDsPerPush, d.maximumIDsPerPush),
            clearAllInterval: try value(.clearAllInterval, d.clearAllInterval)
        )
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(strategy, forKey: .strategy)
        try c.encode(backgroundPushesPerHour, forKey: .backgroundPushesPerHour)
        try c.encode(backgroundThrottleWindow, forKey: .backgroundThrottleWindow)
        try c.encode(reconnectWindow, forKey: .reconnectWindow)
        try c.encode(throttledAlertDelay, forKey: .throttledAlertDelay)  // explicit null = "never"
        try c.encode(repushInitialDelay, forKey: .repushInitialDelay)
        try c.encode(repushBackoffMultiplier, forKey: .repushBackoffMultiplier)
        try c.encode(repushLimit, forKey: .repushLimit)
        try c.encode(callRingInterval, forKey: .callRingInterval)
        try c.encode(callTimeout, forKey: .callTimeout)
        try c.encode(messageLocKey, forKey: .messageLocKey)
        try c.encode(callLocKey, forKey: .callLocKey)
        try c.encode(missedCallLocKey, forKey: .missedCallLocKey)
        try c.encode(answeredElsewhereLocKey, forKey: .answeredElsewhereLocKey)
        try c.encode(declinedElsewhereLocKey, forKey: .declinedElsewhereLocKey)
        try c.encode(alertSound, forKey: .alertSound)
        try c.encode(alertTimeToLive, forKey: .alertTimeToLive)
        try c.encode(backgroundTimeToLive, forKey: .backgroundTimeToLive)
        try c.encode(measuredPushLimit, forKey: .measuredPushLimit)
        try c.encode(maximumIDsPerPush, forKey: .maximumIDsPerPush)
        try c.encode(clearAllInterval, forKey: .clearAllInterval)
    }
}

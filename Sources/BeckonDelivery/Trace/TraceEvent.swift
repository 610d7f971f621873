import BeckonProtocol
import BeckonStore
import Foundation

/// One line of a device's trace. Fields beyond `at` and `type` are set for the types they
/// describe (a push's headers, an attempt's answer) and left out otherwise.
public struct TraceEvent: Hashable, Sendable, Comparable {
    public enum Kind: String, Hashable, Sendable, Encodable {
        /// In the user's mailbox (`sequence`).
        case stored
        /// A push decided for it: `reason`, `pushType`, `priority`, `collapseId`, `apnsId`.
        case push
        /// One attempt at that push and APNs' answer: `attempt`, `outcome`, `status`, `reason`,
        /// `uniqueId` (`apns-unique-id`, sandbox).
        case apns
        /// The app connected after a push that waited for it (rule 10), or did not in time.
        case woke
        case wakeMissed = "wake-missed"
        /// APNs said the token is dead (410, or a token for another app): pushes stop until the
        /// device registers again (rule 8).
        case tokenDead = "token-dead"
        /// The device's receipts.
        case synced, shown, opened, removed
        /// Read on this device; read on another of the user's devices (`deviceId`).
        case read
        case readElsewhere = "read-elsewhere"
        /// Its expiry passed before it reached this device.
        case expired

        init(_ receipt: ReceiptKind) {
            switch receipt {
            case .synced: self = .synced
            case .shown: self = .shown
            case .opened: self = .opened
            case .removed: self = .removed
            }
        }

        /// Ties in time read in the order things happen: a wake settled before the push it led
        /// to (an escalation is decided as the window ends), decided, answered, then on the phone.
        var order: Int {
            switch self {
            case .stored: 0
            case .woke, .wakeMissed: 1
            case .push: 2
            case .apns: 3
            case .tokenDead: 4
            case .synced: 5
            case .shown: 6
            case .opened: 7
            case .read, .readElsewhere: 8
            case .removed: 9
            case .expired: 10
            }
        }
    }

    public var at: Date
    public var type: Kind
    public var sequence: Int64?
    public var pushId: String?
    public var reason: String?
    public var pushType: String?
    public var priority: Int?
    public var collapseId: String?
    public var apnsId: String?
    public var attempt: Int?
    public var outcome: String?
    public var status: Int?
    public var uniqueId: String?
    /// For `read-elsewhere`: where it was read.
    public var deviceId: String?
    /// For `woke`: seconds from the push to the connection.
    public var latency: Double?

    public init(
        at: Date, type: Kind, sequence: Int64? = nil, pushId: String? = nil, reason: String? = nil,
        pushType: String? = nil, priority: Int? = nil, collapseId: String? = nil, apnsId: String? = nil,
        attempt: Int? = nil, outcome: String? = nil, status: Int? = nil, uniqueId: String? = nil,
        deviceId: String? = nil, latency: Double? = nil
    ) {
        self.at = at
        self.type = type
        self.sequence = sequence
        self.pushId = pushId
        self.reason = reason
        self.pushType = pushType
        self.priority = priority
        self.collapseId = collapseId
        self.apnsId = apnsId
        self.attempt = attempt
        self.outcome = outcome
        self.status = status
        self.uniqueId = uniqueId
        self.deviceId = deviceId
        self.latency = latency
    }

    public static func < (lhs: TraceEvent, rhs: TraceEvent) -> Bool {
        (lhs.at, lhs.type.order, lhs.attempt ?? 0) < (rhs.at, rhs.type.order, rhs.attempt ?? 0)
    }

    /// APNs' reasons that mean the token will never work for this app (rule 8).
    static let deadTokenReasons: Set<String> = ["Unregistered", "BadDeviceToken", "DeviceTokenNotForTopic"]

    /// A push decided, its attempts, a dead token, and the wake it waited for.
    static func events(of push: TracedPush) -> [TraceEvent] {
        var events = [
            TraceEvent(
                at: push.createdAt, type: .push, pushId: push.id, reason: push.reason, pushType: push.pushType,
                priority: push.priority, collapseId: push.collapseID, apnsId: push.apnsID)
        ]
        for attempt in push.attempts {
            events.append(TraceEvent(
                at: attempt.at, type: .apns, pushId: push.id, reason: attempt.reason, attempt: attempt.number,
                outcome: attempt.outcome.rawValue, status: attempt.status, uniqueId: attempt.uniqueID))
            if attempt.outcome == .failed, let reason = attempt.reason, deadTokenReasons.contains(reason) {
                events.append(TraceEvent(at: attempt.at, type: .tokenDead, pushId: push.id, reason: reason))
            }
        }
        if let wake = push.wake, let wakeAt = push.wakeAt {
            events.append(TraceEvent(
                at: wakeAt, type: wake == "observed" ? .woke : .wakeMissed, pushId: push.id, latency: push.wakeLatency))
        }
        return events
    }
}

extension TraceEvent: Encodable {
    enum CodingKeys: String, CodingKey {
        case at, type, sequence, pushId, reason, pushType, priority, collapseId, apnsId, attempt, outcome, status, uniqueId
        case deviceId, latency
    }

    /// `at` as RFC 3339 with milliseconds, the API's timestamps.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(at.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)), forKey: .at)
        try container.encode(type, forKey: .type)
        try container.encodeIfPresent(sequence, forKey: .sequence)
        try container.encodeIfPresent(pushId, forKey: .pushId)
        try container.encodeIfPresent(reason, forKey: .reason)
        try container.encodeIfPresent(pushType, forKey: .pushType)
        try container.encodeIfPresent(priority, forKey: .priority)
        try container.encodeIfPresent(collapseId, forKey: .collapseId)
        try container.encodeIfPresent(apnsId, forKey: .apnsId)
        try container.encodeIfPresent(attempt, forKey: .attempt)
        try container.encodeIfPresent(outcome, forKey: .outcome)
        try container.encodeIfPresent(status, forKey: .status)
        try container.encodeIfPresent(uniqueId, forKey: .uniqueId)
        try container.encodeIfPresent(deviceId, forKey: .deviceId)
        try container.encodeIfPresent(latency, forKey: .latency)
    }
}

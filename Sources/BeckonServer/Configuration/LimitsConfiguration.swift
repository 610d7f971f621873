import Configuration

/// Sizes and rates of what clients send (`limits.*`, README "Limits").
public struct LimitsConfiguration: Sendable, Equatable {
    /// `limits.payload-bytes`: the largest message payload accepted.
    public var payloadBytes = 64 * 1024
    /// `limits.body-bytes`: the largest HTTP request body accepted.
    public var bodyBytes = 1024 * 1024
    /// `limits.push-extras-bytes`: the most a drop-in's own keys (Matrix ids, gorush `data`) may
    /// take in a push, of Apple's 4,096 bytes (docs/drop-ins.md).
    public var pushExtrasBytes = 2048
    /// `limits.messages-per-second`: `POST /v1/messages` requests one app may make a second,
    /// as a token bucket that also allows that many at once; beyond it 429. 0 disables.
    public var messagesPerSecond = 20_000
    /// `limits.registrations-per-minute`: `POST /v1/devices` per user a minute (a reinstall
    /// loop or a leaked user token cannot churn credentials without end). 0 disables.
    public var registrationsPerMinute = 30
    /// `limits.sync-connects-per-minute`: sync sessions one device may open a minute (a client
    /// reconnecting in a tight loop). 0 disables.
    public var syncConnectsPerMinute = 60
    /// `limits.event-streams`: `GET /v1/events` streams open at once on a node (each polls the
    /// store while it is open).
    public var eventStreams = 32

    public init() {}

    init(reading config: ConfigReader) throws(BeckonConfigurationError) {
        payloadBytes = config.int(forKey: "limits.payload-bytes", default: payloadBytes)
        guard payloadBytes > 0 else { throw .invalid(key: "limits.payload-bytes", "must be positive") }
        bodyBytes = config.int(forKey: "limits.body-bytes", default: bodyBytes)
        guard bodyBytes >= payloadBytes else {
            throw .invalid(key: "limits.body-bytes", "must be at least limits.payload-bytes")
        }
        pushExtrasBytes = try config.positive("limits.push-extras-bytes", default: pushExtrasBytes)
        messagesPerSecond = try config.notNegative("limits.messages-per-second", default: messagesPerSecond)
        registrationsPerMinute = try config.notNegative("limits.registrations-per-minute", default: registrationsPerMinute)
        syncConnectsPerMinute = try config.notNegative("limits.sync-connects-per-minute", default: syncConnectsPerMinute)
        eventStreams = try config.positive("limits.event-streams", default: eventStreams)
    }
}

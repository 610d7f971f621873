/// Per-app limits the HTTP layer enforces before it calls the store.
public struct AppLimits: Hashable, Sendable, Codable {
    /// Largest opaque payload of one message (64 KiB by default).
    public var maxPayloadBytes: Int
    /// Most users one message may be addressed to.
    public var maxRecipientsPerMessage: Int
    /// Most messages in one POST.
    public var maxMessagesPerRequest: Int

    public init(maxPayloadBytes: Int = 64 * 1024, maxRecipientsPerMessage: Int = 1000, maxMessagesPerRequest: Int = 100) {
        self.maxPayloadBytes = maxPayloadBytes
        self.maxRecipientsPerMessage = maxRecipientsPerMessage
        self.maxMessagesPerRequest = maxMessagesPerRequest
    }
}

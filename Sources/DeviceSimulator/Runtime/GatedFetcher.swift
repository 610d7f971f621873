import BeckonClient

/// The extension's fetch by id, failing like a real one while the phone is offline.
struct GatedFetcher: MessageFetcherPort {
    let inner: any MessageFetcherPort
    let network: PhoneNetwork

    func fetch(messageID: String, byteLimit: Int) async throws(MessageFetchError) -> FetchedMessage {
        guard network.isOnline else { throw .transport("offline") }
        return try await inner.fetch(messageID: messageID, byteLimit: byteLimit)
    }
}

/// The extension's memory: what is left of iOS's limit (apns.md E.4) once the process itself is
/// loaded.
struct ExtensionMemoryGauge: MemoryGaugePort {
    let limit: Int
    /// What an extension process takes before it loads anything (about 6 MB on a phone).
    static let baseline = 6 << 20

    func availableBytes() -> Int? { max(0, limit - Self.baseline) }
}

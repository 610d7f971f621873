import BeckonJSON
import BeckonProtocol

/// `GET /v1/messages/{id}` with the device credential: how the notification service extension
/// reads the one message a push names, instead of syncing everything (docs/design.md, "Small,
/// bounded extensions"). `URLSessionMessageFetcher` is the implementation on every platform.
public protocol MessageFetcherPort: Sendable {
    /// Reads at most `byteLimit` bytes of the answer; a longer one is abandoned unread
    /// (`MessageFetchError.tooLarge`), so a large message never sits whole in the extension's
    /// memory.
    func fetch(messageID: String, byteLimit: Int) async throws(MessageFetchError) -> FetchedMessage
}

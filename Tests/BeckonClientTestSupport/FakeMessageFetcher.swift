import BeckonClient
import BeckonJSON
import BeckonProtocol

/// `GET /v1/messages/{id}` as a table; records which ids were asked for.
package final class FakeMessageFetcher: MessageFetcherPort, @unchecked Sendable {
    private let lock = NSLockBox()
    private var answers: [String: Result<FetchedMessage, MessageFetchError>] = [:]
    private var sizes: [String: Int] = [:]
    private var _requested: [String] = []
    /// When set, every fetch first sleeps this long on `clock`.
    package var delay: (Duration, any ClientClock)?

    package init() {}

    package var requested: [String] { lock.run { _requested } }

    package func answer(_ id: String, title: String? = "Anna", body: String? = "Hello", payload: JSONValue? = nil, bytes: Int = 200) {
        let hints = (title == nil && body == nil) ? nil : NotificationHints(title: title, body: body)
        lock.run {
            answers[id] = .success(FetchedMessage(id: id, sequence: 1, kind: .message, payload: payload, hints: hints))
            sizes[id] = bytes
        }
    }

    package func fail(_ id: String, _ error: MessageFetchError) { lock.run { answers[id] = .failure(error) } }

    package func fetch(messageID: String, byteLimit: Int) async throws(MessageFetchError) -> FetchedMessage {
        lock.run { _requested.append(messageID) }
        if let (duration, clock) = delay {
            do { try await clock.sleep(for: duration) } catch { throw .transport("cancelled") }
        }
        let (answer, size) = lock.run { (answers[messageID], sizes[messageID] ?? 0) }
        // Like the real fetcher: an answer over the limit is never read.
        if size > byteLimit { throw .tooLarge(limit: byteLimit) }
        guard let answer else { throw .notFound }
        return try answer.get()
    }
}

package struct FakeMemoryGauge: MemoryGaugePort {
    package var bytes: Int?
    package init(bytes: Int?) { self.bytes = bytes }
    package func availableBytes() -> Int? { bytes }
}

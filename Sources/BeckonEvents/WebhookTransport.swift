/// Where a webhook's POSTs go: the receiver over HTTP (`WebhookHTTPClient`), or a test's fake.
public protocol WebhookTransport: Sendable {
    /// POSTs `body` with `headers` and returns the receiver's HTTP status; throws when no answer
    /// came (refused, reset, timed out).
    func post(body: [UInt8], headers: [(name: String, value: String)]) async throws -> Int
    /// Closes what it holds open.
    func shutdown() async
}

/// Why a POST got no answer.
public enum WebhookTransportError: Error, CustomStringConvertible {
    case timedOut(seconds: Double)
    case closed

    public var description: String {
        switch self {
        case .timedOut(let seconds): "no answer within \(seconds) s"
        case .closed: "the receiver closed the connection before answering"
        }
    }
}

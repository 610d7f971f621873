import APNSCore

/// Why `APNSClient.send` produced no APNs answer. An APNs answer, even an error status, is
/// returned as an `APNSResponse`, not thrown.
public enum APNSClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The notification breaks a rule checked before sending (size, collapse id, fields).
    case invalidNotification(APNSPayloadError)
    /// The pool's wait queue is full: slow down.
    case overloaded
    /// No answer within the deadline; `attempts` requests were made.
    case deadlineExceeded(attempts: Int)
    /// Every attempt failed at the connection level.
    case connectionFailed(attempts: Int, lastError: APNSConnectionError)
    case shutDown
    /// The provider token could not be made (a broken key).
    case tokenUnavailable(String)
    /// The TLS settings were refused (a bad certificate or key).
    case tlsConfiguration(String)

    public var description: String {
        switch self {
        case .invalidNotification(let error): "invalid notification: \(error)"
        case .overloaded: "too many notifications waiting for a free stream; retry later"
        case .deadlineExceeded(let attempts): "no answer from APNs before the deadline (\(attempts) attempts)"
        case .connectionFailed(let attempts, let error): "connection failed \(attempts) times; last: \(error)"
        case .shutDown: "the client is shut down"
        case .tokenUnavailable(let why): "no provider token: \(why)"
        case .tlsConfiguration(let why): "TLS configuration refused: \(why)"
        }
    }

    /// The `reason` dimension of `apns_requests_total` for requests that got no answer.
    var metricsReason: String {
        switch self {
        case .deadlineExceeded: "deadline"
        case .overloaded: "overloaded"
        case .shutDown: "shutdown"
        case .connectionFailed: "connection"
        case .invalidNotification: "invalid"
        case .tokenUnavailable, .tlsConfiguration: "configuration"
        }
    }
}

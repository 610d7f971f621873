import NIOHTTP2

/// Why a stream got no answer from APNs. Each case says whether the request may have reached APNs.
public enum APNSConnectionError: Error, Hashable, Sendable {
    /// The connection was going away before this stream was processed (GOAWAY with a lower
    /// last-stream-id, or retired by the pool). APNs never saw it: send it on another connection.
    case goingAway
    /// The server reset the stream. `REFUSED_STREAM` means it was not processed (RFC 9113 §8.7).
    case streamReset(HTTP2ErrorCode)
    /// The connection closed with the stream open: APNs may or may not have processed it.
    case connectionClosed
    /// No answer before the notification's deadline.
    case deadlineExceeded

    /// True when APNs certainly did not act on the request, so resending cannot duplicate it.
    public var wasNotProcessed: Bool {
        switch self {
        case .goingAway: true
        case .streamReset(let code): code == .refusedStream
        case .connectionClosed, .deadlineExceeded: false
        }
    }
}

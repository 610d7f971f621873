import APNSCore
import NIOCore

/// Where the answer to one request goes: the `send` that waits for it, resumed exactly once,
/// straight from the thread that finishes the request (no promise, no future, no callback).
/// Debug builds (the tests) use checked continuations, which trap on a second resume and report
/// one that is never resumed; release builds skip the check's allocation on the send path.
#if DEBUG
typealias APNSResponseContinuation = CheckedContinuation<APNSResponse, any Error>

func withAPNSResponseContinuation(_ body: (APNSResponseContinuation) -> Void) async throws -> APNSResponse {
    try await withCheckedThrowingContinuation(body)
}
#else
typealias APNSResponseContinuation = UnsafeContinuation<APNSResponse, any Error>

func withAPNSResponseContinuation(_ body: (APNSResponseContinuation) -> Void) async throws -> APNSResponse {
    try await withUnsafeThrowingContinuation(body)
}
#endif

/// One attempt at a request on its way to a connection.
///
/// A class: it passes through the pool, a batch and the open streams by reference, instead of
/// copying (and retaining every string of) the request at each step.
final class APNSStreamRequest: APNSConnectionStream, Sendable {
    let request: APNSRequest
    /// `bearer <JWT>` for token connections; nil on certificate connections.
    let authorization: String?
    let deadline: NIODeadline
    /// Resumed exactly once: whoever takes the request out of a queue, a batch or the open
    /// streams answers it.
    let continuation: APNSResponseContinuation

    init(request: APNSRequest, authorization: String?, deadline: NIODeadline, continuation: APNSResponseContinuation) {
        self.request = request
        self.authorization = authorization
        self.deadline = deadline
        self.continuation = continuation
    }

    func fail(_ error: any Error) { continuation.resume(throwing: error) }
}

import APNSCore
import Foundation

/// Where one app's pushes go: the only thing delivery needs of an APNs client. `BeckonNode`
/// fulfils it with `APNSClient` and the app's credential (`APNSRoute`), Apple's hosts or the
/// built-in emulator; delivery itself knows no transport.
public protocol PushSender: Sendable {
    /// Sends `request`, answering with APNs' response, or throwing when none came (no
    /// connection, the deadline passed).
    /// - Parameters:
    ///   - deadline: at most this long, retries included; nil: the client's own.
    ///   - retry: in place of the client's own retries (a ringing call's push gets one attempt).
    func send(
        _ request: APNSRequest, environment: APNSEnvironment, deadline: TimeInterval?, retry: APNSRetryPolicy?
    ) async throws -> APNSResponse
}

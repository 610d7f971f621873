import BeckonProtocol
import Foundation

/// What APNs' answers change on a device: a token it called dead, a topic it refuses. The
/// sender's only write to the device registry, kept apart from registration so that it cannot
/// register or delete anything.
public protocol TokenFeedback: Sendable {
    /// Drops a token after APNs reported it dead, but only if the device has not registered it
    /// again since `invalidSince` (APNs' 410 `timestamp`; docs/apns.md E.7, "410 race"). Returns
    /// whether the token was removed.
    func removeToken(
        _ device: DeviceRef, kind: PushTokenKind, token: String, invalidSince: Date
    ) async throws -> Bool
    /// Flags a device whose pushes APNs refuses until it registers again (nil clears it).
    func setPushProblem(_ device: DeviceRef, problem: String?) async throws
}

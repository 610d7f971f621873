import APNS
import APNSCore

/// Where one app's pushes go: the client (Apple's hosts, or the built-in emulator) and the
/// app's credential.
struct APNSRoute: Sendable {
    let client: APNSClient
    let credential: APNSCredential
    let bundleID: String
    /// True when the route is the in-process emulator (no Apple key configured).
    let isEmulator: Bool
}

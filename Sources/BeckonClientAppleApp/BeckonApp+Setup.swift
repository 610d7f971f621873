// iOS only: the app's side wired from a `BeckonSetup`. A translation, no decisions
// (docs/client-sdk.md).
#if canImport(UIKit) && canImport(CallKit) && canImport(Security)
import BeckonClient
import BeckonClientApple
import Foundation

extension BeckonApp {
    /// The app's `BeckonApp`, wired to iOS: the shared store (opened at first use: before the
    /// first unlock after a restart it cannot be read, and a launch for a VoIP call must still
    /// report it), the notification centre, CallKit through `callKit`, background time, the
    /// `URLSession` WebSocket, the signals between the app and its extension, and the credential
    /// read from the keychain at each session. `renderer`: your text for a synced message.
    /// `configure` changes any other setting (`BeckonApp.Configuration`). Throws only when the App
    /// Group is missing from the app's entitlements. On the main actor, as UIKit's launch is.
    @MainActor
    public init(
        setup: BeckonSetup, callKit: CallKitReporter, renderer: MessageRenderer? = nil,
        configure: (inout Configuration) -> Void = { _ in }
    ) throws {
        var configuration = Configuration(endpoint: setup.syncEndpoint, credentials: setup.credentials)
        configure(&configuration)
        self.init(
            configuration: configuration,
            store: try setup.store(),
            ports: Ports(
                notificationCenter: UserNotificationCenterAdapter(), callReporter: callKit,
                backgroundTime: UIKitBackgroundTime(), clock: SystemClock(), transport: URLSessionSyncTransport(),
                processSignal: DarwinProcessSignal(appGroup: setup.appGroup)),
            renderer: renderer)
    }
}
#endif

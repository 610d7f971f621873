// Apple platforms: the extension's handler wired from a `BeckonSetup`. A translation, no
// decisions (docs/client-sdk.md).
#if canImport(Security) && canImport(UserNotifications) && (os(iOS) || BECKON_APPLE_SDK_STANDIN)
import BeckonClient
import Foundation

extension NotificationServiceHandler {
    /// The handler for your `BeckonNotificationServiceExtension`, wired to iOS: the shared store
    /// and lease (opened at first use, so a process started before the first unlock recovers
    /// after it), the credential from the keychain at each fetch, the process's memory.
    ///
    /// `filtering`: the app has the filtering entitlement and the `filtering` strategy (apns.md
    /// E.4): the extension syncs as role `extension`, shows every unread message the sync brings
    /// in a notification of its own, and suppresses pushes for what is read or already shown.
    /// Otherwise it fetches only the messages the push names. `sealKey`: the `contentKey` you
    /// registered, if any. `renderer`: your text for a message (the server's `notification`
    /// text is used when the message has one).
    public convenience init(
        setup: BeckonSetup, filtering: Bool = false, sealKey: Data? = nil, configuration: Configuration = Configuration(),
        renderer: MessageRenderer? = nil
    ) {
        let clock = SystemClock()
        let store = try? setup.store()
        let lock = store.map {
            LeaseLock(store: $0, holder: LeaseHolder(role: .extension), clock: clock, signal: DarwinProcessSignal(appGroup: setup.appGroup))
        }
        var configuration = configuration
        if let sealKey { configuration.sealKey = sealKey }
        var sync: ExtensionSync?
        if filtering, let store, let lock {
            configuration.canSuppress = true
            // Every message the sync brings gets a notification of its own, not only the one the
            // push names: a phone back online gets only the newest of the pushes sent meanwhile.
            let presenter = NotificationPresenter(
                store: store, center: UserNotificationCenterAdapter(), role: .extension, clock: clock, renderer: renderer)
            sync = ExtensionSync(
                endpoint: setup.syncEndpoint, store: store, lock: lock, transport: URLSessionSyncTransport(), clock: clock,
                presenter: presenter, credentials: setup.credentials)
        }
        self.init(
            configuration: configuration,
            fetcher: URLSessionMessageFetcher(baseURL: setup.server, credentials: setup.credentials),
            clock: clock, memory: ProcessMemoryGauge(), store: store, lock: lock, renderer: renderer, sync: sync)
    }
}
#endif

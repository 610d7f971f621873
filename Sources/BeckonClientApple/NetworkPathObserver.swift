// Apple platforms: the network path, as Network.framework reports it. A translation, no
// decisions (docs/client-sdk.md).
#if canImport(Network)
import BeckonClient
import Foundation
import Network

/// Tells `BeckonApp` when the network comes back (`NWPathMonitor` reports `.satisfied` after it
/// was not), so a session waiting out a long backoff reconnects at once (`AppEvent.networkAvailable`).
public final class NetworkPathObserver: @unchecked Sendable {
    private let monitor = NWPathMonitor()
    private let queue = DispatchQueue(label: "beckon.network-path")
    private var wasSatisfied = true

    /// Watches the network for as long as it lives: keep it for the app's lifetime.
    public init(app: BeckonApp) {
        monitor.pathUpdateHandler = { [weak self] path in
            guard let self else { return }
            let satisfied = path.status == .satisfied
            if satisfied && !self.wasSatisfied { app.handle(.networkAvailable) }
            self.wasSatisfied = satisfied
        }
        monitor.start(queue: queue)
    }

    deinit { monitor.cancel() }
}
#endif

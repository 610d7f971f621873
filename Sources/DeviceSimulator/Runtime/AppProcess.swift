import BeckonClient
import Foundation

/// One run of the app's process on the simulated phone: a fresh `BeckonApp` over the phone's
/// store file, with its own clock (frozen while suspended, stopped for good when killed) and
/// its own sockets.
struct AppProcess: Sendable {
    let app: BeckonApp
    let store: ClientStore
    let clock: ProcessClock
    let transport: GatedTransport
    let callKit: PhoneCallKit
    let lifecycle: PhoneLifecycle
    /// The UI is up (`ready` was sent): from the first `didBecomeActive`.
    let ready = Locked(false)

    func suspend() {
        clock.set(.suspended)
        transport.stop()
    }

    func resume() {
        transport.resume()
        clock.set(.running)
    }

    func kill() {
        clock.set(.dead)
        transport.stop()
        transport.network.detach(transport)
        store.close()
    }
}

import BeckonClient

/// Whether the phone is online, read by every socket and fetch of the app and its extension.
final class PhoneNetwork: Sendable {
    private let state = Locked(true)
    private let transports = Locked<[GatedTransport]>([])

    var isOnline: Bool { state.withLock { $0 } }

    func setOnline(_ online: Bool) {
        state.withLock { $0 = online }
        if !online { for transport in transports.withLock({ $0 }) { transport.dropAll() } }
    }

    /// Sockets of `transport` drop when the phone goes offline.
    func attach(_ transport: GatedTransport) { transports.withLock { $0.append(transport) } }

    func detach(_ transport: GatedTransport) { transports.withLock { $0.removeAll { $0 === transport } } }
}

/// What a simulated socket or fetch throws when the phone or the process cannot reach anything.
struct PhoneUnreachable: Error, CustomStringConvertible {
    var description: String { "the simulated phone is offline, or the process is not running" }
}

@testable import BeckonDelivery
import BeckonServer
import BeckonStore

/// One node's view of presence in `PresenceCluster`: the cluster's answer, held at the
/// `PresenceGate` when the test says.
struct GatedPresence: DevicePresence {
    let node: String
    let inner: any DevicePresence
    let gate: PresenceGate

    func mayBeConnected(_ device: DeviceRef) async -> Bool {
        let answer = await inner.mayBeConnected(device)
        await gate.pass(.mayBeConnected, of: device, on: node)
        return answer
    }

    func liveSessions(_ devices: [DeviceRef]) async -> [DeviceRef: LiveSession] {
        await inner.liveSessions(devices)
    }

    func connectedElsewhere(_ device: DeviceRef, besides session: String) async -> Bool {
        let answer = await inner.connectedElsewhere(device, besides: session)
        await gate.pass(.connectedElsewhere, of: device, on: node)
        return answer
    }
}

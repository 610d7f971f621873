import APNSEmulator
import BeckonClient
import BeckonJSON
import DeviceSimulator

/// The emulator's device side, wired to the simulated phones: what APNs accepts, holds or drops
/// for a token goes on that phone's timeline, and what it delivers goes to that phone.
final class PushRouter: Sendable {
    private let devices = Locked<[String: SimulatedDevice]>([:])
    private let acceptedPushes = Locked<[AcceptedPush]>([])
    let timeline: Timeline

    init(timeline: Timeline) { self.timeline = timeline }

    func add(_ device: SimulatedDevice, tokens: [String]) {
        devices.withLock { for token in tokens { $0[token.lowercased()] = device } }
    }

    /// Every push the emulator accepted for a phone, in order.
    var accepted: [AcceptedPush] { acceptedPushes.withLock { $0 } }

    /// Runs under the emulator's lock: records and hands over, nothing more.
    func route(_ event: APNSEmulatorDeviceEvent) {
        let notification = event.notification
        guard let device = devices.withLock({ $0[notification.deviceToken] }) else { return }
        let push = DevicePush(notification)
        switch event {
        case .accepted:
            let stands = (push.beckon?.ids ?? []) + (push.beckon?.callID.map { [$0] } ?? [])
            acceptedPushes.withLock {
                $0.append(
                    AcceptedPush(
                        device: device.name, apnsID: push.id.lowercased(), type: push.type, reason: push.reason,
                        messages: stands))
            }
            timeline.record(device.name, .pushSent(push: push.id, type: push.type, priority: push.priority, reason: push.reason))
            timeline.record(device.name, .pushAccepted(push: push.id))
        case .stored: timeline.record(device.name, .pushHeld(push: push.id, by: .apns))
        case .delivered: device.receive(push)
        case .discarded(_, let why): timeline.record(device.name, .pushDiscarded(push: push.id, why: why.rawValue))
        }
    }
}

extension DevicePush {
    init(_ notification: APNSEmulatorNotification) {
        self.init(
            id: notification.apnsID, type: notification.pushType.rawValue, priority: notification.priority,
            collapseID: notification.collapseID, payload: (try? JSONParser.parse(notification.payload)) ?? .null)
    }
}

import BeckonProtocol
import APNSCore
import BeckonDelivery
import Foundation
import Testing

/// The explicit clock of every test: `at(10)` is ten seconds after `t0`.
let t0 = Date(timeIntervalSince1970: 1_700_000_000)
func at(_ seconds: TimeInterval) -> Date { t0.addingTimeInterval(seconds) }

let bundleID = "com.example.chat"
let deviceToken = try! APNSDeviceToken(hex: String(repeating: "ab", count: 32))

/// Push id number `n`: 00000000-0000-0000-0000-00000000000n.
func pushID(_ n: Int) -> UUID {
    UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", n))!
}

extension PlannerDevice {
    static let wake = PlannerDevice(
        hasRemoteToken: true, capabilities: DeviceCapabilities(backgroundModes: ["remote-notification"])
    )
    static let serviceExtension = PlannerDevice(
        hasRemoteToken: true,
        capabilities: DeviceCapabilities(notificationServiceExtension: true, backgroundModes: ["remote-notification"])
    )
    static let filtering = PlannerDevice(
        hasRemoteToken: true, capabilities: DeviceCapabilities(notificationServiceExtension: true, filtering: true)
    )
    static let plain = PlannerDevice(hasRemoteToken: true)
}

func message(
    _ id: String, kind: MessageKind = .message, urgency: MessageUrgency = .normal, hints: NotificationHints? = nil,
    expiresAt: Date? = nil, unread: Int = 1
) -> PlannedMessage {
    PlannedMessage(id: id, kind: kind, urgency: urgency, hints: hints, expiresAt: expiresAt, unreadCount: unread)
}

/// A planner, the device it plans for, and deterministic push ids (1, 2, 3, ...).
final class PlannerHarness {
    var planner: DevicePlanner
    var device: PlannerDevice
    var issued = 0

    init(policy: DeliveryPolicy = DeliveryPolicy(), device: PlannerDevice = .wake) {
        self.planner = DevicePlanner(policy: policy)
        self.device = device
    }

    func nextID() -> UUID {
        issued += 1
        return pushID(issued)
    }

    @discardableResult
    func arrive(_ message: PlannedMessage, at seconds: TimeInterval) -> [PlannerAction] {
        planner.messageArrived(message, device: device, now: at(seconds), newPushID: nextID)
    }

    @discardableResult
    func connect(at seconds: TimeInterval) -> [PlannerAction] { planner.connected(now: at(seconds)) }

    @discardableResult
    func disconnect(at seconds: TimeInterval, unacked: [String] = [], clean: Bool = true) -> [PlannerAction] {
        planner.disconnected(now: at(seconds), unackedMessageIDs: unacked, clean: clean)
    }

    @discardableResult
    func tick(at seconds: TimeInterval) -> [PlannerAction] {
        planner.deadlineReached(device: device, now: at(seconds), newPushID: nextID)
    }

    @discardableResult
    func read(_ ids: [String], unread: Int, at seconds: TimeInterval) -> [PlannerAction] {
        planner.readElsewhere(messageIDs: ids, unreadCount: unread, device: device, now: at(seconds), newPushID: nextID)
    }

    @discardableResult
    func endCall(_ id: String, _ outcome: CallOutcome, at seconds: TimeInterval) -> [PlannerAction] {
        planner.callEnded(callID: id, outcome: outcome, device: device, now: at(seconds), newPushID: nextID)
    }

    /// Calls `deadlineReached` at every deadline up to `seconds`, collecting the actions.
    func run(until seconds: TimeInterval) -> [PlannerAction] {
        var actions: [PlannerAction] = []
        while let deadline = planner.nextDeadline, deadline <= at(seconds) {
            actions += planner.deadlineReached(device: device, now: deadline, newPushID: nextID)
        }
        return actions
    }

    var deadline: TimeInterval? { planner.nextDeadline.map { $0.timeIntervalSince(t0) } }
}

func pushes(_ actions: [PlannerAction]) -> [PlannedPush] {
    actions.compactMap { if case .send(let push) = $0 { push } else { nil } }
}

func onlyPush(_ actions: [PlannerAction], sourceLocation: SourceLocation = #_sourceLocation) throws -> PlannedPush {
    let sent = pushes(actions)
    #expect(sent.count == 1, "expected exactly one push in \(actions)", sourceLocation: sourceLocation)
    return try #require(sent.first, sourceLocation: sourceLocation)
}

func payload(_ push: PlannedPush) throws -> NSDictionary {
    let data = Data(push.notification.encodedPayload())
    return try #require(JSONSerialization.jsonObject(with: data) as? NSDictionary)
}

func beckon(_ push: PlannedPush) throws -> NSDictionary {
    try #require(payload(push)["beckon"] as? NSDictionary)
}

func request(_ push: PlannedPush) throws -> APNSRequest {
    APNSRequest(try push.rendered(bundleID: bundleID), to: deviceToken)
}

func header(_ request: APNSRequest, _ name: String) -> String? {
    request.headers.first { $0.name == name }?.value
}

/// Compares a push's whole payload with the expected JSON object.
func assertPayload(
    _ push: PlannedPush, _ expected: [String: Any], sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let actual = try payload(push)
    #expect(
        actual.isEqual(to: expected),
        "payload \(String(decoding: push.notification.encodedPayload(), as: UTF8.self)) != \(expected)",
        sourceLocation: sourceLocation
    )
}

/// The APNs headers as a dictionary, without `apns-id` unless asked.
func headers(_ push: PlannedPush) throws -> [String: String] {
    Dictionary(uniqueKeysWithValues: try request(push).headers.map { ($0.name, $0.value) })
}

func epoch(_ seconds: TimeInterval) -> String { String(Int(at(seconds).timeIntervalSince1970)) }

/// `aps.alert.loc-key` style lookup (KVC is not available on Linux).
func path(_ object: NSDictionary, _ keyPath: String) -> Any? {
    var current: Any? = object
    for key in keyPath.split(separator: ".") {
        current = (current as? NSDictionary)?[String(key)]
    }
    return current
}

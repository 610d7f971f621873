import BeckonProtocol
import Foundation

/// A wake push in flight: the device should connect by `deadline` (rule 4). Messages arriving
/// meanwhile join it instead of spending another background push, since the waking app syncs
/// them all; if the device does not come, they are the ones its escalation alert announces.
struct WakeWatch: Hashable, Sendable, Codable {
    var pushID: UUID
    var reason: PushReason
    var strategy: DeliveryStrategy
    var deadline: Date
    var messages: [PlannedMessage]
}

import BeckonProtocol
import Foundation

/// A push sent while the device was away, waiting for the next connection to measure how long it
/// took to bring the device back (rule 10).
struct MeasuredPush: Hashable, Sendable, Codable {
    var pushID: UUID
    var reason: PushReason
    var strategy: DeliveryStrategy
    var sentAt: Date
}

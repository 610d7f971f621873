import BeckonProtocol
import Foundation

/// What the driver must do after an event, in order.
public enum PlannerAction: Hashable, Sendable {
    /// Put this push in the outbox.
    case send(PlannedPush)
    /// The device connected after this push (rule 10): export the latency, per reason and strategy.
    case wakeObserved(pushID: UUID, reason: PushReason, strategy: DeliveryStrategy, latency: TimeInterval)
    /// A wake push got no connection within the reconnect window (rule 4): count an escalation.
    case wakeMissed(pushID: UUID, reason: PushReason, strategy: DeliveryStrategy)
    /// The device stopped answering wakes; its messages now go out as alerts (rule 4).
    case becameUnreachable
    /// The device connected again after being unreachable.
    case becameReachable
}

import BeckonProtocol
import BeckonStore
import Foundation

/// What the delivery driver hears from the rest of the server. Each becomes one or more
/// `DevicePlanner` transitions.
public enum DeliveryEvent: Sendable {
    /// A new (not duplicate) message is durable in these users' mailboxes. `extras`: a drop-in's
    /// keys for the push and its badge (nil for `/v1/messages`).
    case messageAppended(Message, users: [UserRef], extras: PushExtras? = nil)
    /// The device's first sync session opened (an app's, or only its extension's).
    case connected(DeviceRef, role: SyncRole, at: Date)
    /// A sync session ended; `clean` when the device said `bye`. `session` names it when another
    /// session of the device may have replaced it meanwhile (several nodes): the planner then
    /// checks `DevicePresence.connectedElsewhere` first. Without it the drop is certain.
    case disconnected(DeviceRef, clean: Bool, at: Date, session: String? = nil)
    /// The device acknowledged messages (it may have more left).
    case acknowledged(DeviceRef, at: Date)
    /// The device read messages that were unread for its user (design rule 7).
    case read(user: UserRef, by: DeviceRef, ids: [String], at: Date)
    /// The backend ended a call (`POST /v1/calls/{id}/end`): stop ringing it (rule 6).
    case callEnded(callID: String, outcome: CallEndOutcome, users: [UserRef], at: Date)
    /// The device's extension fetched these messages by id: they show there (no re-push).
    case shown(DeviceRef, messageIDs: [String], at: Date)
    /// APNs refused a push for good: it proves nothing about the app (no wake measured).
    case pushFailed(DeviceRef, pushID: UUID, at: Date)
    /// The device's planner asked to be woken by now (`DevicePlanner.nextDeadline`).
    case deadline(DeviceRef)

    /// How much planning it takes: one per user for a message, one otherwise.
    var weight: Int {
        if case .messageAppended(_, let users, _) = self { max(users.count, 1) } else { 1 }
    }
}

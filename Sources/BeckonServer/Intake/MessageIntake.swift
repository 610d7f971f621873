import BeckonDelivery
import BeckonStore
import Foundation

/// Where every new message enters, whoever posts it (`/v1/messages`, the drop-ins, the XMPP
/// component): stored first, so an answer that says accepted means delivered (rule 9); then
/// handed to delivery, which pushes to the recipients' devices without a live session; then to
/// the live sessions, which read the store themselves. Delivery hears of it before any session
/// that receives it can end.
struct MessageIntake: Sendable {
    let store: any MailboxStore
    let events: DeliveryEventSink
    /// The sync sessions' hub; nil where there is none (tests of the API alone).
    let sessions: SyncHub?

    /// Stores `message` and passes it on; nil if the store stored nothing. A duplicate (its
    /// idempotency key used before) was passed on when it was first stored, and is not again.
    /// - Parameter extras: a drop-in's push keys and badge, for the planner.
    func append(appID: String, _ message: NewMessage, extras: PushExtras? = nil) async throws -> AppendedMessage? {
        guard let appended = try await store.appendMessages(appID: appID, [message]).first else { return nil }
        if !appended.isDuplicate {
            let recipients = appended.positions.map { UserRef(appID: appID, userID: $0.userID) }
            events.submit(.messageAppended(appended.message, users: recipients, extras: extras))
            await sessions?.messageAppended(appended.message, at: appended.positions)
        }
        return appended
    }
}

import BeckonProtocol
import Foundation

/// A background push owed while the throttle is full (rule 3): coalesced, not queued. Only the
/// fact that a wake is owed (and for which messages), the notification ids still to clear
/// (rule 7) and the newest badge are kept; when a slot frees, one push carries all of it.
struct OwedBackground: Hashable, Sendable, Codable {
    /// Messages to wake for; empty when only a clear is owed.
    var messages: [PlannedMessage] = []
    var wakeReason: PushReason = .wake
    var clearIDs: [String] = []
    var badge: Int?
    /// Since when a wake has been owed: after `throttledAlertDelay` its messages go out as an alert.
    var wakeOwedSince: Date?

    mutating func owe(_ new: [PlannedMessage], reason: PushReason, now: Date, limit: Int) {
        let wasEmpty = messages.isEmpty
        for message in new where !messages.contains(where: { $0.id == message.id }) {
            messages.append(message)
        }
        messages = Array(messages.suffix(max(limit, 1)))
        // A new message outranks a re-push as the reason: it is what the app will find.
        if wasEmpty || reason == .wake { wakeReason = reason }
        if wakeOwedSince == nil { wakeOwedSince = now }
    }

    mutating func owe(clear ids: [String], badge: Int, limit: Int) {
        for id in ids where !clearIDs.contains(id) { clearIDs.append(id) }
        clearIDs = Array(clearIDs.suffix(max(limit, 1)))
        self.badge = badge
    }

    mutating func forget(_ ids: Set<String>) {
        messages.removeAll { ids.contains($0.id) }
        if messages.isEmpty { wakeOwedSince = nil }
    }

    /// A clear-all push went out: the owed clears are covered.
    mutating func forgetClears() {
        clearIDs = []
        badge = nil
    }

    var isEmpty: Bool { messages.isEmpty && clearIDs.isEmpty }
}

import BeckonClientAppleApp
import Observation

/// What the screen shows: the stored messages, newest first, and the connection's state. Every
/// session of the app (in front, a background wake, a ringing call) reports into one stream.
@MainActor @Observable
final class ChatModel {
    private(set) var messages: [StoredMessage] = []
    private(set) var status = "Connecting…"
    /// The message a notification tap opened.
    private(set) var opened: String?
    @ObservationIgnored var app: BeckonApp?

    /// Follows the app for as long as the view is on screen (SwiftUI's `task`).
    func follow() async {
        guard let app else { return }
        reload(app)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { @MainActor in
                for await state in await app.connectionStates() {
                    self.status = switch state {
                    case .connected: "Chats"
                    case .connecting: "Connecting…"
                    case .idle: "Offline"
                    }
                }
            }
            group.addTask { @MainActor in
                for await update in await app.updates() {
                    switch update {
                    case .stored(_, isNew: true), .readElsewhere: self.reload(app)
                    default: break
                    }
                }
            }
        }
    }

    func open(_ tap: NotificationTap) {
        opened = tap.messageID
    }

    /// Read here: stored, their notifications removed, the badge lowered, the server told (and
    /// through it the user's other devices).
    func markAllRead() async {
        guard let app else { return }
        try? await app.markRead(messages.filter { !$0.isRead }.map(\.id))
        reload(app)
    }

    /// The store keeps itself bounded (30 days, 5,000 messages by default: `StoreRetention`).
    private func reload(_ app: BeckonApp) {
        messages = ((try? app.store.messages()) ?? []).reversed()
    }
}

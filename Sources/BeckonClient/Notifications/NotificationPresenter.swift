import BeckonJSON
import BeckonProtocol
import Foundation

/// Shows and removes notifications for messages, through the notification-centre port and the
/// shared ledger:
/// - identifier = message id, so one can be removed alone (rule 7; seed 000's local
///   notifications);
/// - a message that had a notification, shown by the app or the extension, is never shown again;
/// - a read message is never shown, and removed if showing (read elsewhere, or `read: true` on
///   resume);
/// - the badge is the user's unread count.
public actor NotificationPresenter {
    /// The text shown when the app's renderer gives none (a `loc-key` in the app's strings).
    public static let genericLocKey = "BECKON_NEW_MESSAGE"

    let store: ClientStore
    let center: any NotificationCenterPort
    let role: SyncRole
    let renderer: MessageRenderer?
    let clock: any ClientClock
    /// Whether local notifications are posted while the app is in front (off: the app shows new
    /// messages itself).
    public let showsWhileForeground: Bool
    public private(set) var isForeground = false

    public init(
        store: ClientStore, center: any NotificationCenterPort, role: SyncRole, clock: any ClientClock,
        renderer: MessageRenderer? = nil, showsWhileForeground: Bool = false
    ) {
        self.store = store
        self.center = center
        self.role = role
        self.clock = clock
        self.renderer = renderer
        self.showsWhileForeground = showsWhileForeground
    }

    public func setForeground(_ foreground: Bool) {
        isForeground = foreground
    }

    /// A new message arrived over sync: notify, unless it is read, expired, of a kind that does
    /// not notify, or already had a notification (here or in the extension).
    @discardableResult
    package func present(_ message: SyncMessage, as writer: LeaseGuard) async -> Bool {
        guard message.kind == .message, !message.read else { return false }
        if let expiresAt = message.expiresAt, expiresAt <= clock.now() { return false }
        if isForeground && !showsWhileForeground { return false }
        let displayable = DisplayableMessage(
            id: message.id, kind: message.kind,
            payload: message.payload.isEmpty ? nil : try? JSONParser.parse(message.payload))
        var content = renderer?(displayable) ?? NotificationContent(locKey: Self.genericLocKey)
        if !content.hasText { content.locKey = Self.genericLocKey }
        content.userInfo[BeckonPushPayload.key] = BeckonPushPayload(reason: .alert, ids: [message.id]).json
        // An alert for it may be on screen already (identifier = collapse id = the newest message
        // id, apns.md E.2; its `beckon.ids` name the others it stands for): record it, show
        // nothing new.
        let alreadyShowing = await center.deliveredMessages().contains { identifier, ids in
            identifier == message.id || ids.contains(message.id)
        }
        guard (try? store.claimNotification(message.id, for: [message.id], by: role, as: writer)) == true,
            !alreadyShowing
        else { return false }
        do {
            try await center.add(identifier: message.id, content: content)
            return true
        } catch {
            try? store.markNotificationsRemoved([message.id], as: writer)
            return false
        }
    }

    /// These messages were read (here or elsewhere): remove exactly the notifications that
    /// show them — an alert that also stands for an unread message stays.
    package func clear(messageIDs: [String], as writer: LeaseGuard) async {
        guard !messageIDs.isEmpty else { return }
        try? store.markLedgerMessagesRead(messageIDs, as: writer)
        let entries = (try? store.ledgerEntries(sharingNotificationsWith: messageIDs)) ?? []
        let covered = Array(Set(entries.map(\.messageID)))
        let read = Set(messageIDs).union(entries.filter(\.messageRead).map(\.messageID))
            .union((try? store.readIDs(among: covered)) ?? [])
        var byNotification: [String: [String]] = [:]
        for entry in entries { byNotification[entry.notificationID, default: []].append(entry.messageID) }
        let fullyRead = byNotification.filter { $0.value.allSatisfy(read.contains) }.map(\.key)
        // An alert iOS showed without the ledger knowing has the message id as identifier.
        let unrecorded = messageIDs.filter { id in !entries.contains { $0.messageID == id } }
        let identifiers = Array(Set(fullyRead + unrecorded)).sorted()
        await center.removeDelivered(identifiers: identifiers)
        try? store.markNotificationsRemoved(fullyRead, as: writer)
    }

    public func setBadge(_ count: Int) async {
        await center.setBadge(max(0, count))
    }

    /// The server's `{"aps":{"badge":0}}` push cleared every notification (seed 000): the
    /// ledger follows, so nothing is believed showing.
    package func clearAll(as writer: LeaseGuard?) async {
        let showing = (try? store.showingNotifications()) ?? [:]
        await center.removeDelivered(identifiers: showing.keys.sorted())
        await center.setBadge(0)
        if let writer {
            _ = try? store.markAllNotificationsRemoved(as: writer)
            try? store.setBadge(0, as: writer)
        }
    }

    /// Brings the ledger in line with the notification centre: what the ledger believes showing
    /// but is gone (a badge-0 push the app never saw, the user dismissed it) is marked removed,
    /// and what is on screen unknown to it (iOS showed the alert by itself) is recorded, with its
    /// `shown` receipt. Returns how many were removed.
    @discardableResult
    package func reconcile(as writer: LeaseGuard) async -> Int {
        let delivered = await center.deliveredNotifications()
        let onScreen = Set(delivered.map(\.identifier))
        let showing = (try? store.showingNotifications()) ?? [:]
        let gone = showing.keys.filter { !onScreen.contains($0) }.sorted()
        try? store.markNotificationsRemoved(gone, as: writer)
        // What iOS showed by itself while the app was away: in the ledger now, and in the
        // messages' traces as shown when it was delivered.
        try? store.recordDelivered(delivered, as: writer)
        return gone.count
    }

    /// An alert is about to be shown while the app is in front (`willPresent`): show it only if
    /// it is news; record it when shown.
    package func shouldPresent(identifier: String, messageIDs: [String], as writer: LeaseGuard?) async -> Bool {
        if isForeground && !showsWhileForeground { return false }
        let read = (try? store.readIDs(among: messageIDs)) ?? []
        if !messageIDs.isEmpty && messageIDs.allSatisfy(read.contains) { return false }
        guard let writer else { return true }
        return (try? store.claimNotification(identifier, for: messageIDs, by: role, as: writer)) ?? true
    }
}

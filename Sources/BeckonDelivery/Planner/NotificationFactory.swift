import BeckonJSON
import APNSCore
import BeckonProtocol
import BeckonSeal
import Foundation

/// Builds the typed notifications for one device at one moment. Pure: the planner decides *which*
/// push and *when*; this decides *what it looks like*, following the strategy table in docs/design.md ("Delivery strategies").
struct NotificationFactory {
    let policy: DeliveryPolicy
    let device: PlannerDevice
    let strategy: DeliveryStrategy
    let now: Date

    init(policy: DeliveryPolicy, device: PlannerDevice, now: Date) {
        self.policy = policy
        self.device = device
        self.strategy = policy.effectiveStrategy(for: device.capabilities)
        self.now = now
    }

    private var hasExtension: Bool { device.capabilities.notificationServiceExtension }

    // MARK: Background

    /// A wake and/or clear push. Rule 2 / apns.md D.4: priority 5, `aps` = `content-available`
    /// only (APNSBackgroundNotification enforces both), topic = bundle id; everything Beckon needs
    /// rides in the custom key. No collapse id: iOS keeps only the newest held background push
    /// anyway (apns.md E.3), and our ids are cumulative. Expires after `backgroundTimeToLive`: by
    /// then rule 4's escalation has taken over.
    func background(
        id: UUID, reason: PushReason, messageIDs: [String], clearIDs: [String], badge: Int?, extras: PushExtras? = nil
    ) -> APNSBackgroundNotification {
        // A drop-in's badge is its caller's count, or none: Beckon's unread count knows nothing
        // of what was read over the other protocol (docs/drop-ins.md).
        let badge = extras.map(\.badge) ?? badge
        let beckon = BeckonPushPayload(reason: reason, ids: messageIDs, clear: clearIDs, badge: badge).custom
        return APNSBackgroundNotification(
            custom: extras?.merged(into: beckon) ?? beckon,
            expiration: .at(now.addingTimeInterval(policy.backgroundTimeToLive)),
            apnsID: id
        )
    }

    /// `{"aps":{"badge":0}}` and nothing else: iOS removes the app's notifications and its badge
    /// (seed 000; docs/apns.md D.1). An alert push by type, so it reaches an app the user killed;
    /// priority 5, since nothing is shown. No collapse id: it replaces nothing, it clears all.
    func clearAll(id: UUID) -> APNSAlertNotification {
        APNSAlertNotification(
            badge: 0, priority: .considerPower, expiration: .at(now.addingTimeInterval(policy.alertTimeToLive)), apnsID: id)
    }

    // MARK: Message alerts

    /// An alert for one or more messages (the newest decides text, thread and sound), or nil when
    /// every one has expired. `badge` is the unread count (nil leaves the badge as it is).
    ///
    /// - Priority 10: an alert exists to reach the user now (and `filtering` requires it, apns.md E.4).
    /// - Collapse id = the newest message id (but see `ids` below): iOS makes it the notification's identifier
    ///   (apns.md E.2), so a re-push replaces instead of stacking, and the client can remove it by
    ///   message id when it is read elsewhere (rule 7).
    /// - Expiration: `alertTimeToLive`, never past the message's own expiry (rule 2).
    /// - `contentAvailable`: escalation alerts still wake the app (rule 4).
    /// - `ids` also names the device's `unseen` messages (rule 11), oldest dropped first when they
    ///   do not fit, with `unseen` = how many there are when not all are named; the collapse id is
    ///   then the first unseen message's, so each such alert replaces the one before.
    func messageAlert(
        id: UUID, reason: PushReason, messages: [PlannedMessage], unseen: UnseenMessages, badge: Int?,
        contentAvailable: Bool, withSound: Bool
    ) -> (notification: APNSAlertNotification, named: [String])? {
        let live = messages.filter { !$0.isExpired(at: now) }
        guard let newest = live.last else { return nil }
        // Several messages in one alert: only generic text describes them all.
        let defaults = newest.extras?.aps
        let presentation = present(
            hints: live.count == 1 ? newest.hints : nil, messageID: newest.id, genericKey: policy.messageLocKey,
            genericAlert: defaults?.alert
        )
        // A drop-in's `prio: low`, except where Apple needs 10 (filtering, apns.md E.4).
        let priority: APNSPriority =
            newest.extras?.considerPower == true && strategy != .filtering ? .considerPower : .immediately
        let own = live.map(\.id)
        var earlier = namesUnseen ? unseen.ids.filter { !own.contains($0) } : []
        earlier = Array(earlier.suffix(max(0, policy.maximumIDsPerPush - own.count)))
        // Every unseen message, and this alert's own if they are not among them (a re-push's).
        let total = namesUnseen ? unseen.count + own.filter { !unseen.ids.contains($0) }.count : own.count
        let expiries = live.map(\.expiresAt)
        let cap = expiries.contains(nil) ? nil : expiries.compactMap { $0 }.max()
        func alert(naming earlier: [String]) -> APNSAlertNotification {
            var beckon = BeckonPushPayload(reason: reason, ids: earlier + own, sealed: presentation.sealed)
            if total > beckon.ids.count { beckon.unseen = total }
            return APNSAlertNotification(
                alert: presentation.alert,
                badge: newest.extras.map(\.badge) ?? badge,
                sound: withSound ? sound(newest.hints, extras: newest.extras) : nil,
                threadID: newest.hints?.threadID ?? defaults?.threadID,
                category: newest.hints?.category ?? defaults?.category,
                contentAvailable: contentAvailable || defaults?.contentAvailable == true,
                mutableContent: presentation.mutableContent || defaults?.mutableContent == true,
                custom: newest.extras?.merged(into: beckon.custom) ?? beckon.custom,
                priority: priority,
                expiration: expiration(timeToLive: policy.alertTimeToLive, cap: cap),
                collapseID: namesUnseen ? unseen.batchID ?? newest.id : newest.id,
                apnsID: id,
                allowsTruncation: presentation.truncatable
            )
        }
        // Names the text cannot give up go first (apns.md A.5: 4096 bytes; sealed text is never
        // cut, and plain text is cut only when nothing else is left to drop).
        var notification = alert(naming: earlier)
        while !earlier.isEmpty, notification.encodedPayload().count > APNSAlertNotification.pushType.maximumPayloadSize {
            earlier.removeFirst(max(1, earlier.count / 4))
            notification = alert(naming: earlier)
        }
        return (notification, earlier + own)
    }

    /// Whether alerts name the unseen messages (rule 11): when something on the device can show
    /// them (an extension), or the alert wakes the app (`wake`). A `content` alert without an
    /// extension shows its own text and nothing else, so it names only its own messages.
    private var namesUnseen: Bool { strategy != .content || hasExtension }

    // MARK: Relayed

    /// The push a caller wrote (gorush), with the caller's keys beside `aps` and no `beckon` key:
    /// the app on the other end is not Beckon's client. It expires with the message (the
    /// caller's `expiration`, else `alertTimeToLive`).
    func relayed(id: UUID, message: PlannedMessage, relay: RelayedPush) -> PlannedNotification {
        relay.notification(
            id: id, custom: message.extras?.custom ?? [:],
            expiration: expiration(timeToLive: policy.alertTimeToLive, cap: message.expiresAt))
    }

    // MARK: Calls

    /// The PushKit push for an incoming call (rule 6). Apple (apns.md E.6): the app must report
    /// the call to CallKit before its PushKit handler returns, so it cannot fetch first; the
    /// payload therefore carries the hints (the caller's name), sealed when the device has a key.
    /// Expiration 0: a ringing call delivered late is worse than none (apns.md E.1). No collapse id.
    func callVoIP(id: UUID, call: PlannedMessage) -> APNSVoIPNotification {
        var beckon = BeckonPushPayload(reason: .callVoIP, ids: [call.id], callID: call.id)
        if let hints = call.hints {
            if let key = device.sealingKey, let sealed = try? ContentSeal.seal(sealedContent(hints, call.id), key: key) {
                beckon.sealed = sealed
            } else {
                beckon.hints = hints
            }
        }
        return APNSVoIPNotification(
            custom: beckon.custom, priority: .immediately, expiration: .immediately, apnsID: id
        )
    }

    /// A ringing, missed, or answered/declined-elsewhere alert for a call without VoIP (rule 6).
    /// Collapse id = call id, so each ring replaces the last and the final alert replaces the
    /// ringing one (apns.md E.2). Rings expire when the call times out (a late ring is wrong);
    /// the final alert lives `alertTimeToLive`. Only rings make a sound.
    func callAlert(id: UUID, reason: PushReason, call: RingingCall) -> APNSAlertNotification {
        let genericKey: String
        switch reason {
        case .missedCall: genericKey = policy.missedCallLocKey
        case .answeredElsewhere: genericKey = policy.answeredElsewhereLocKey
        case .declinedElsewhere: genericKey = policy.declinedElsewhereLocKey
        default: genericKey = policy.callLocKey
        }
        let ringing = reason == .callRing
        // The hints describe the ringing ("Anna is calling"), not its end, so only rings use them.
        let presentation = present(hints: ringing ? call.message.hints : nil, messageID: call.id, genericKey: genericKey)
        let beckon = BeckonPushPayload(reason: reason, ids: [call.id], callID: call.id, sealed: presentation.sealed)
        return APNSAlertNotification(
            alert: presentation.alert,
            badge: call.message.unreadCount,
            sound: ringing ? sound(call.message.hints) : nil,
            threadID: call.message.hints?.threadID,
            category: call.message.hints?.category,
            mutableContent: presentation.mutableContent,
            custom: beckon.custom,
            priority: .immediately,
            expiration: ringing
                ? .at(call.timeoutAt)
                : expiration(timeToLive: policy.alertTimeToLive, cap: nil),
            collapseID: call.id,
            apnsID: id,
            allowsTruncation: presentation.truncatable
        )
    }

    // MARK: Text

    struct Presentation {
        var alert: APNSAlert
        var sealed: String?
        var mutableContent: Bool
        var truncatable: Bool
    }

    /// The visible text. Rule 1: text from the hints goes through Apple only under the `content`
    /// strategy. With a content key it is sealed instead, behind generic text, and only for a
    /// device with an extension to open it; a keyed device without one gets generic text — never
    /// plaintext the operator asked to encrypt. Generic alerts set `mutable-content` whenever an
    /// extension exists to rewrite them (always, for `service-extension` and `filtering`).
    /// `genericAlert`: a drop-in caller's own generic text (a Matrix `default_payload`), in
    /// place of `genericKey`.
    func present(
        hints: NotificationHints?, messageID: String, genericKey: String, genericAlert: APNSAlert? = nil
    ) -> Presentation {
        let generic = genericAlert ?? APNSAlert(locKey: genericKey)
        let genericMutable = strategy == .serviceExtension || strategy == .filtering || hasExtension
        guard strategy == .content, let hints, Self.hasText(hints) else {
            return Presentation(alert: generic, mutableContent: genericMutable, truncatable: false)
        }
        guard let key = device.sealingKey else {
            let alert = APNSAlert(
                title: hints.title, subtitle: hints.subtitle, body: hints.body,
                titleLocKey: hints.titleLocKey, titleLocArgs: hints.titleLocArgs,
                locKey: hints.locKey, locArgs: hints.locArgs
            )
            // APNSRequest shortens the body (then loc-args) so the alert fits 4096 bytes (rule 2).
            return Presentation(alert: alert, mutableContent: false, truncatable: true)
        }
        guard hasExtension, let sealed = seal(sealedContent(hints, messageID), key: key) else {
            return Presentation(alert: generic, mutableContent: genericMutable, truncatable: false)
        }
        return Presentation(alert: generic, sealed: sealed, mutableContent: true, truncatable: false)
    }

    /// Seals, shortening the body until the sealed text leaves room for the rest of the payload:
    /// APNSRequest cannot truncate inside ciphertext.
    private func seal(_ content: SealedContent, key: Data) -> String? {
        var content = content
        for _ in 0..<8 {
            guard let sealed = try? ContentSeal.seal(content, key: key) else { return nil }
            let excess = sealed.utf8.count - Self.sealedTextBudget
            if excess <= 0 { return sealed }
            // Base64 grows 4:3, so removing 3/4 of the excess (plus slack) from the plaintext is enough.
            guard let body = content.body, !body.isEmpty else { return nil }
            content.body = Self.shorten(body, byBytes: excess * 3 / 4 + 16)
        }
        return nil
    }

    /// Room for the sealed text in a 4096-byte alert, leaving ~800 bytes for `aps`, ids and keys.
    static let sealedTextBudget = 3300

    static func shorten(_ text: String, byBytes bytes: Int) -> String {
        var result = ""
        let target = max(0, text.utf8.count - bytes - 3)
        var used = 0
        for character in text {
            let cost = character.utf8.count
            if used + cost > target { break }
            used += cost
            result.append(character)
        }
        return result + "…"
    }

    private func sealedContent(_ hints: NotificationHints, _ messageID: String) -> SealedContent {
        SealedContent(
            messageID: messageID, title: hints.title, subtitle: hints.subtitle, body: hints.body,
            titleLocKey: hints.titleLocKey, titleLocArgs: hints.titleLocArgs, locKey: hints.locKey, locArgs: hints.locArgs
        )
    }

    private static func hasText(_ hints: NotificationHints) -> Bool {
        [hints.title, hints.subtitle, hints.body, hints.titleLocKey, hints.locKey].contains { $0?.isEmpty == false }
    }

    private func sound(_ hints: NotificationHints?, extras: PushExtras? = nil) -> APNSSound? {
        if extras?.soundOnlyWhenAsked == true { return hints?.sound.map(APNSSound.named) ?? extras?.aps?.sound }
        return (hints?.sound ?? policy.alertSound).map(APNSSound.named)
    }

    /// `.at(now + timeToLive)`, or earlier if the message expires first — never in the past (the
    /// planner does not push expired messages).
    func expiration(timeToLive: TimeInterval, cap: Date?) -> APNSExpiration {
        let end = now.addingTimeInterval(timeToLive)
        guard let cap, cap < end else { return .at(end) }
        return .at(max(cap, now))
    }
}

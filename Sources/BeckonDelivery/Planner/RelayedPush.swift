import APNSCore
import BeckonJSON
import Foundation

/// A push its caller wrote field by field (gorush's `/api/push`): sent once, as asked, in place
/// of what the app's strategy would send, and built through the same typed APNs model, so it
/// keeps Apple's rules (docs/drop-ins.md, "gorush"): a background push is priority 5 and shows
/// nothing (rule 2, apns.md D.4).
public struct RelayedPush: Hashable, Sendable, Codable {
    public enum Kind: String, Hashable, Sendable, Codable {
        /// Shown to the user (alert, badge or sound), optionally also waking the app.
        case alert
        /// `content-available` alone: wakes the app, shows nothing.
        case background
    }

    public var kind: Kind
    /// Priority 5 for an alert (gorush's `priority: normal`): delivered when power allows.
    public var considerPower: Bool
    public var alert: APNSAlert?
    public var badge: Int?
    public var sound: APNSSound?
    public var threadID: String?
    public var category: String?
    public var contentAvailable: Bool
    public var mutableContent: Bool
    public var interruptionLevel: APNSInterruptionLevel?
    public var relevanceScore: Double?
    public var urlArgs: [String]?
    public var collapseID: String?
    /// The caller's `apns-id` header (gorush's `apns_id`), which several pushes may share (an
    /// entry's tokens, a request sent again); nil: the push's own id. The outbox keys the push by
    /// its own id either way (`OutboxPush.id`).
    public var apnsID: UUID?

    public init(
        kind: Kind, considerPower: Bool = false, alert: APNSAlert? = nil, badge: Int? = nil, sound: APNSSound? = nil,
        threadID: String? = nil, category: String? = nil, contentAvailable: Bool = false, mutableContent: Bool = false,
        interruptionLevel: APNSInterruptionLevel? = nil, relevanceScore: Double? = nil, urlArgs: [String]? = nil,
        collapseID: String? = nil, apnsID: UUID? = nil
    ) {
        self.kind = kind
        self.considerPower = considerPower
        self.alert = alert
        self.badge = badge
        self.sound = sound
        self.threadID = threadID
        self.category = category
        self.contentAvailable = contentAvailable
        self.mutableContent = mutableContent
        self.interruptionLevel = interruptionLevel
        self.relevanceScore = relevanceScore
        self.urlArgs = urlArgs
        self.collapseID = collapseID
        self.apnsID = apnsID
    }

    /// Why APNs could not take this push with the caller's keys `custom` (too large even with the
    /// text cut, a collapse id too long), or nil: checked when the caller asks, so the answer can
    /// say so instead of the push failing later.
    public func problem(custom: [String: JSONValue], bundleID: String) -> String? {
        do {
            _ = try notification(id: UUID(), custom: custom, expiration: .immediately).rendered(bundleID: bundleID)
            return nil
        } catch {
            return error.description
        }
    }

    /// The typed notification: `custom` holds the caller's keys beside `aps`.
    func notification(id: UUID, custom: [String: JSONValue], expiration: APNSExpiration) -> PlannedNotification {
        let id = apnsID ?? id
        switch kind {
        case .background:
            return .background(
                APNSBackgroundNotification(
                    custom: custom, expiration: expiration, collapseID: collapseID, apnsID: id))
        case .alert:
            return .alert(
                APNSAlertNotification(
                    alert: alert, badge: badge, sound: sound, threadID: threadID, category: category,
                    contentAvailable: contentAvailable, mutableContent: mutableContent,
                    interruptionLevel: interruptionLevel, relevanceScore: relevanceScore, urlArgs: urlArgs,
                    custom: custom, priority: considerPower ? .considerPower : .immediately, expiration: expiration,
                    collapseID: collapseID, apnsID: id, allowsTruncation: true))
        }
    }
}

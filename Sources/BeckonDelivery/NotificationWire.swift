import APNSCore
import Foundation

/// The stored form of a `PlannedNotification`. APNSCore's types are deliberately not Codable
/// (they are a wire model for APNs, not for our database), so the outbox stores this flat mirror
/// and rebuilds the typed value from it. Decoding never yields a combination the typed values
/// could not hold: the type decides which fields are read.
struct NotificationWire: Codable, Hashable {
    enum Kind: String, Codable { case alert, background, voip }
    enum Expiration: String, Codable { case `default`, immediately, at }

    struct Alert: Codable, Hashable {
        var title, subtitle, body, launchImage: String?
        var titleLocKey: String?
        var titleLocArgs: [String]?
        var subtitleLocKey: String?
        var subtitleLocArgs: [String]?
        var locKey: String?
        var locArgs: [String]?
    }

    var type: Kind
    var alert: Alert?
    var badge: Int?
    var soundName: String?
    /// Present only for a critical-alert sound.
    var criticalVolume: Double?
    var threadID: String?
    var category: String?
    var contentAvailable: Bool?
    var mutableContent: Bool?
    var targetContentID: String?
    var interruptionLevel: String?
    var relevanceScore: Double?
    var filterCriteria: String?
    var custom: [String: APNSJSON]
    var priority: Int?
    var expiration: Expiration
    var expiresAt: Date?
    var collapseID: String?
    var apnsID: UUID?
    var allowsTruncation: Bool?

    init(_ notification: PlannedNotification) {
        type = .alert
        custom = notification.custom
        priority = notification.priority.rawValue
        switch notification.expiration {
        case .default: expiration = .default
        case .immediately: expiration = .immediately
        case .at(let date): expiration = .at; expiresAt = date
        }
        collapseID = notification.collapseID
        switch notification {
        case .background(let background):
            type = .background
            apnsID = background.apnsID
            priority = nil  // always 5 (apns.md D.4); not stored, so it cannot be stored wrong
        case .voip(let voip):
            type = .voip
            apnsID = voip.apnsID
        case .alert(let alert):
            apnsID = alert.apnsID
            self.alert = alert.alert.map {
                Alert(
                    title: $0.title, subtitle: $0.subtitle, body: $0.body, launchImage: $0.launchImage,
                    titleLocKey: $0.titleLocKey, titleLocArgs: $0.titleLocArgs,
                    subtitleLocKey: $0.subtitleLocKey, subtitleLocArgs: $0.subtitleLocArgs,
                    locKey: $0.locKey, locArgs: $0.locArgs
                )
            }
            badge = alert.badge
            switch alert.sound {
            case .named(let name): soundName = name
            case .critical(let name, let volume): soundName = name; criticalVolume = volume
            case nil: break
            }
            threadID = alert.threadID
            category = alert.category
            contentAvailable = alert.contentAvailable
            mutableContent = alert.mutableContent
            targetContentID = alert.targetContentID
            interruptionLevel = alert.interruptionLevel?.rawValue
            relevanceScore = alert.relevanceScore
            filterCriteria = alert.filterCriteria
            allowsTruncation = alert.allowsTruncation
        }
    }

    func notification() throws -> PlannedNotification {
        let expiration: APNSExpiration
        switch self.expiration {
        case .default: expiration = .default
        case .immediately: expiration = .immediately
        case .at:
            guard let expiresAt else { throw WireError.missing("expiresAt") }
            expiration = .at(expiresAt)
        }
        let priority = try self.priority.map { value in
            guard let priority = APNSPriority(rawValue: value) else { throw WireError.invalid("priority \(value)") }
            return priority
        }
        switch type {
        case .background:
            return .background(
                APNSBackgroundNotification(custom: custom, expiration: expiration, collapseID: collapseID, apnsID: apnsID)
            )
        case .voip:
            return .voip(
                APNSVoIPNotification(
                    custom: custom, priority: priority ?? .immediately, expiration: expiration,
                    collapseID: collapseID, apnsID: apnsID
                )
            )
        case .alert:
            var level: APNSInterruptionLevel?
            if let interruptionLevel {
                guard let parsed = APNSInterruptionLevel(rawValue: interruptionLevel) else {
                    throw WireError.invalid("interruption level \(interruptionLevel)")
                }
                level = parsed
            }
            let sound: APNSSound? = soundName.map { name in
                criticalVolume.map { .critical(name: name, volume: $0) } ?? .named(name)
            }
            return .alert(
                APNSAlertNotification(
                    alert: alert.map {
                        APNSAlert(
                            title: $0.title, subtitle: $0.subtitle, body: $0.body, launchImage: $0.launchImage,
                            titleLocKey: $0.titleLocKey, titleLocArgs: $0.titleLocArgs,
                            subtitleLocKey: $0.subtitleLocKey, subtitleLocArgs: $0.subtitleLocArgs,
                            locKey: $0.locKey, locArgs: $0.locArgs
                        )
                    },
                    badge: badge, sound: sound, threadID: threadID, category: category,
                    contentAvailable: contentAvailable ?? false, mutableContent: mutableContent ?? false,
                    targetContentID: targetContentID, interruptionLevel: level, relevanceScore: relevanceScore,
                    filterCriteria: filterCriteria, custom: custom, priority: priority ?? .immediately,
                    expiration: expiration, collapseID: collapseID, apnsID: apnsID,
                    allowsTruncation: allowsTruncation ?? false
                )
            )
        }
    }

    enum WireError: Error, CustomStringConvertible {
        case missing(String)
        case invalid(String)

        var description: String {
            switch self {
            case .missing(let field): "stored notification lacks \(field)"
            case .invalid(let value): "stored notification has an invalid \(value)"
            }
        }
    }
}

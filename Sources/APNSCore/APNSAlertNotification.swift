import BeckonJSON
import Foundation

/// An alert push (`apns-push-type: alert`): shown to the user, optionally rewritten by a
/// notification service extension (`mutable-content`), optionally also waking the app
/// (`content-available`, which Beckon's escalation alerts carry).
public struct APNSAlertNotification: APNSNotification, Hashable {
    public static var pushType: APNSPushType { .alert }

    public var alert: APNSAlert?
    public var badge: Int?
    public var sound: APNSSound?
    public var threadID: String?
    public var category: String?
    public var contentAvailable: Bool
    public var mutableContent: Bool
    public var targetContentID: String?
    public var interruptionLevel: APNSInterruptionLevel?
    public var relevanceScore: Double?
    public var filterCriteria: String?
    /// Safari website pushes: the values filled into the website's URL format (apns.md D.1, legacy).
    public var urlArgs: [String]?
    public var custom: [String: JSONValue]
    public var priority: APNSPriority
    public var expiration: APNSExpiration
    public var collapseID: String?
    public var apnsID: UUID?
    /// Whether `APNSRequest` may shorten the body (then loc-args) to fit Apple's size limit.
    public var allowsTruncation: Bool

    public init(
        alert: APNSAlert? = nil, badge: Int? = nil, sound: APNSSound? = nil, threadID: String? = nil,
        category: String? = nil, contentAvailable: Bool = false, mutableContent: Bool = false,
        targetContentID: String? = nil, interruptionLevel: APNSInterruptionLevel? = nil,
        relevanceScore: Double? = nil, filterCriteria: String? = nil, urlArgs: [String]? = nil,
        custom: [String: JSONValue] = [:],
        priority: APNSPriority = .immediately, expiration: APNSExpiration = .default,
        collapseID: String? = nil, apnsID: UUID? = nil, allowsTruncation: Bool = false
    ) {
        self.alert = alert
        self.badge = badge
        self.sound = sound
        self.threadID = threadID
        self.category = category
        self.contentAvailable = contentAvailable
        self.mutableContent = mutableContent
        self.targetContentID = targetContentID
        self.interruptionLevel = interruptionLevel
        self.relevanceScore = relevanceScore
        self.filterCriteria = filterCriteria
        self.urlArgs = urlArgs
        self.custom = custom
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
        self.allowsTruncation = allowsTruncation
    }

    public func validate() throws(APNSPayloadError) {
        try validateCustom(custom)
        // Apple: alert pushes must interact with the user (apns.md D.4).
        if alert == nil && badge == nil && sound == nil { throw .nothingToShow }
    }

    public func writePayload(to json: inout JSONWriter) {
        json.beginObject()
        json.key("aps")
        json.beginObject()
        if let alert { json.key("alert"); alert.write(to: &json) }
        json.member("badge", badge)
        if let sound { json.key("sound"); sound.write(to: &json) }
        json.member("thread-id", threadID)
        json.member("category", category)
        if contentAvailable { json.key("content-available"); json.int(1) }
        if mutableContent { json.key("mutable-content"); json.int(1) }
        json.member("target-content-id", targetContentID)
        json.member("interruption-level", interruptionLevel?.rawValue)
        json.member("relevance-score", relevanceScore)
        json.member("filter-criteria", filterCriteria)
        json.member("url-args", urlArgs)
        json.endObject()
        writeCustom(custom, to: &json)
        json.endObject()
    }

    public mutating func truncate(by bytes: Int) -> Bool {
        guard allowsTruncation, var alert else { return false }
        defer { self.alert = alert }
        if let body = alert.body, let shorter = TextTruncation.shorten(body, by: bytes) {
            alert.body = shorter
            return true
        }
        // Then the longest loc-arg, which is usually the user-written part of a localised text.
        if var args = alert.locArgs,
            let index = args.indices.max(by: { args[$0].utf8.count < args[$1].utf8.count }),
            let shorter = TextTruncation.shorten(args[index], by: bytes)
        {
            args[index] = shorter
            alert.locArgs = args
            return true
        }
        return false
    }
}

/// Shortens text to save a number of encoded JSON bytes, at a character boundary, with an ellipsis.
enum TextTruncation {
    static let ellipsis = "…"

    /// Nil when the text cannot lose that many bytes and still say something.
    static func shorten(_ text: String, by bytes: Int) -> String? {
        let current = JSONWriter.encodedLength(of: text[...])
        let target = current - bytes - ellipsis.utf8.count
        guard target > 2 else { return nil }
        // Walk whole characters (grapheme clusters), so no UTF-8 sequence or emoji is split.
        var length = 2
        var end = text.startIndex
        for index in text.indices {
            let character = text[index]
            let cost = character.utf8.reduce(0) { $0 + JSONWriter.escapedLength($1) }
            if length + cost > target { break }
            length += cost
            end = text.index(after: index)
        }
        guard end > text.startIndex else { return nil }
        return String(text[..<end]) + ellipsis
    }
}

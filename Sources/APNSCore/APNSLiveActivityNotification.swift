import BeckonJSON
import Foundation

/// A Live Activity start, update or end (apns.md D.1, D.4, E.8).
///
/// Apple requires `timestamp`, `event` and `content-state`; a start also needs an alert,
/// `attributes-type` and `attributes`, which is why `.start` carries them.
public struct APNSLiveActivityNotification: APNSNotification, Hashable {
    public static var pushType: APNSPushType { .liveactivity }

    public enum Event: Hashable, Sendable {
        /// iOS 18+: `inputPushToken` asks the new activity for an update token; `inputPushChannel`
        /// subscribes it to a broadcast channel (apns.md D.1).
        case start(attributesType: String, attributes: JSONValue, alert: APNSAlert, inputPushToken: Bool = false, inputPushChannel: String? = nil)
        case update
        case end(dismissalDate: Date?)

        var name: String {
            switch self {
            case .start: "start"
            case .update: "update"
            case .end: "end"
            }
        }
    }

    public var event: Event
    public var contentState: JSONValue
    public var timestamp: Date
    public var staleDate: Date?
    public var relevanceScore: Double?
    /// An update may also alert the user.
    public var alert: APNSAlert?
    public var priority: APNSPriority
    public var expiration: APNSExpiration
    public var collapseID: String?
    public var apnsID: UUID?

    public init(
        event: Event, contentState: JSONValue, timestamp: Date, staleDate: Date? = nil,
        relevanceScore: Double? = nil, alert: APNSAlert? = nil,
        priority: APNSPriority = .considerPower, expiration: APNSExpiration = .default,
        collapseID: String? = nil, apnsID: UUID? = nil
    ) {
        self.event = event
        self.contentState = contentState
        self.timestamp = timestamp
        self.staleDate = staleDate
        self.relevanceScore = relevanceScore
        self.alert = alert
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
    }

    public func writePayload(to json: inout JSONWriter) {
        json.beginObject()
        json.key("aps")
        json.beginObject()
        json.key("timestamp"); json.int(Int(timestamp.timeIntervalSince1970))
        json.key("event"); json.string(event.name)
        json.key("content-state"); json.value(contentState)
        json.member("stale-date", staleDate.map { Int($0.timeIntervalSince1970) })
        json.member("relevance-score", relevanceScore)
        switch event {
        case .start(let attributesType, let attributes, let alert, let inputPushToken, let inputPushChannel):
            json.key("attributes-type"); json.string(attributesType)
            json.key("attributes"); json.value(attributes)
            json.key("alert"); alert.write(to: &json)
            if inputPushToken { json.key("input-push-token"); json.int(1) }
            json.member("input-push-channel", inputPushChannel)
        case .update:
            if let alert { json.key("alert"); alert.write(to: &json) }
        case .end(let dismissalDate):
            json.member("dismissal-date", dismissalDate.map { Int($0.timeIntervalSince1970) })
            if let alert { json.key("alert"); alert.write(to: &json) }
        }
        json.endObject()
        json.endObject()
    }
}

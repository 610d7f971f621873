import BeckonJSON
import Foundation

/// Signals a File Provider enumerator. Apple: the keys sit at the top level, not in `aps` (apns.md D.4).
public struct APNSFileProviderNotification: APNSNotification, Hashable {
    public static var pushType: APNSPushType { .fileprovider }

    public var containerIdentifier: String
    public var domain: String
    public var priority: APNSPriority
    public var expiration: APNSExpiration
    public var collapseID: String?
    public var apnsID: UUID?

    public init(
        containerIdentifier: String, domain: String, priority: APNSPriority = .immediately,
        expiration: APNSExpiration = .default, collapseID: String? = nil, apnsID: UUID? = nil
    ) {
        self.containerIdentifier = containerIdentifier
        self.domain = domain
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
    }

    public func writePayload(to json: inout JSONWriter) {
        json.beginObject()
        json.key("container-identifier"); json.string(containerIdentifier)
        json.key("domain"); json.string(domain)
        json.endObject()
    }
}

/// An MDM wake-up. Its topic is the UID from the MDM push certificate, not a bundle id.
public struct APNSMDMNotification: APNSNotification, Hashable {
    public static var pushType: APNSPushType { .mdm }

    public var pushMagic: String
    public var mdmTopic: String
    public var priority: APNSPriority
    public var expiration: APNSExpiration
    public var collapseID: String?
    public var apnsID: UUID?

    public init(
        pushMagic: String, topic: String, priority: APNSPriority = .immediately,
        expiration: APNSExpiration = .default, collapseID: String? = nil, apnsID: UUID? = nil
    ) {
        self.pushMagic = pushMagic
        self.mdmTopic = topic
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
    }

    public func topic(forBundleID bundleID: String) -> String { mdmTopic }

    public func writePayload(to json: inout JSONWriter) {
        json.beginObject()
        json.key("mdm"); json.string(pushMagic)
        json.endObject()
    }
}

/// A WidgetKit reload: `{"aps":{"content-changed":true}}` (apns.md D.4).
public struct APNSWidgetsNotification: APNSNotification, Hashable {
    public static var pushType: APNSPushType { .widgets }

    public var priority: APNSPriority
    public var expiration: APNSExpiration
    public var collapseID: String?
    public var apnsID: UUID?

    public init(
        priority: APNSPriority = .considerPower, expiration: APNSExpiration = .default,
        collapseID: String? = nil, apnsID: UUID? = nil
    ) {
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
    }

    public func writePayload(to json: inout JSONWriter) {
        json.beginObject()
        json.key("aps"); json.beginObject(); json.key("content-changed"); json.bool(true); json.endObject()
        json.endObject()
    }
}

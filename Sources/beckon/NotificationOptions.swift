import BeckonJSON
import APNSCore
import ArgumentParser
import Foundation

/// The flags that describe one notification, turned into a typed `APNSNotification`.
///
/// The typed model refuses what Apple forbids, so a flag that does not fit the push type is an
/// error here, before anything is sent (e.g. `--type background --priority 10`).
struct NotificationOptions: ParsableArguments {
    @Option(help: "The app's bundle id; the push type adds Apple's topic suffix (.voip, …).")
    var topic: String

    @Option(help: "Push type: \(APNSPushType.allCases.map(\.rawValue).joined(separator: "|")).")
    var type: APNSPushType = .alert

    @Option(help: "Alert title.") var title: String?
    @Option(help: "Alert body.") var body: String?
    @Option(help: "Badge number (0 clears it).") var badge: Int?
    @Option(help: "Sound name, e.g. default.") var sound: String?

    @Option(help: "Custom JSON keys, merged at the top level beside aps (for fileprovider, mdm and liveactivity: their fields).")
    var payload: String?

    @Option(name: .customLong("collapse-id"), help: "apns-collapse-id (at most 64 bytes).")
    var collapseID: String?

    @Option(help: "apns-expiration: UNIX seconds; 0 = deliver once, never store.")
    var expiration: Int?

    @Option(help: "apns-priority: 10, 5 or 1.")
    var priority: Int?

    @Flag(help: "Shorten the alert body to fit Apple's 4096-byte limit instead of failing.")
    var truncate = false

    func makeRequest(for token: APNSDeviceToken) throws -> APNSRequest {
        try APNSRequest(try makeNotification(), to: token, bundleID: topic)
    }

    func makeNotification() throws -> any APNSNotification {
        let custom = try parsedPayload()
        let priority = try parsedPriority()
        let expiration: APNSExpiration = expiration.map { $0 == 0 ? .immediately : .at(Date(timeIntervalSince1970: TimeInterval($0))) } ?? .default
        let alertText = (title != nil || body != nil) ? APNSAlert(title: title, body: body) : nil

        func rejectAlertFlags() throws {
            if alertText != nil || badge != nil || sound != nil {
                throw ValidationError("--title, --body, --badge and --sound are for alert pushes, not \(type.rawValue)")
            }
        }

        switch type {
        case .alert:
            return APNSAlertNotification(
                alert: alertText, badge: badge, sound: sound.map(APNSSound.named), custom: custom,
                priority: priority ?? .immediately, expiration: expiration, collapseID: collapseID,
                allowsTruncation: truncate
            )
        case .background:
            try rejectAlertFlags()
            if let priority, priority != .considerPower {
                throw ValidationError("Apple: background pushes must use priority 5 (\"using priority 10 is an error\")")
            }
            return APNSBackgroundNotification(custom: custom, expiration: expiration, collapseID: collapseID)
        case .voip:
            try rejectAlertFlags()
            return APNSVoIPNotification(custom: custom, priority: priority ?? .immediately, expiration: self.expiration == nil ? .immediately : expiration, collapseID: collapseID)
        case .location, .complication, .pushtotalk, .controls:
            try rejectAlertFlags()
            func simple<Kind: APNSSimpleKind>(_: Kind.Type) -> APNSSimpleNotification<Kind> {
                APNSSimpleNotification(custom: custom, priority: priority ?? .immediately, expiration: expiration, collapseID: collapseID)
            }
            switch type {
            case .location: return simple(LocationKind.self)
            case .complication: return simple(ComplicationKind.self)
            case .pushtotalk: return simple(PushToTalkKind.self)
            default: return simple(ControlsKind.self)
            }
        case .widgets:
            try rejectAlertFlags()
            return APNSWidgetsNotification(priority: priority ?? .considerPower, expiration: expiration, collapseID: collapseID)
        case .fileprovider:
            try rejectAlertFlags()
            guard case .string(let container)? = custom["container-identifier"], case .string(let domain)? = custom["domain"] else {
                throw ValidationError("--type fileprovider needs --payload '{\"container-identifier\":\"…\",\"domain\":\"…\"}'")
            }
            return APNSFileProviderNotification(containerIdentifier: container, domain: domain, priority: priority ?? .immediately, expiration: expiration, collapseID: collapseID)
        case .mdm:
            try rejectAlertFlags()
            guard case .string(let magic)? = custom["mdm"] else {
                throw ValidationError("--type mdm needs --payload '{\"mdm\":\"<PushMagic>\"}'; --topic is the certificate's topic")
            }
            return APNSMDMNotification(pushMagic: magic, topic: topic, priority: priority ?? .immediately, expiration: expiration, collapseID: collapseID)
        case .liveactivity:
            guard let state = custom["content-state"] else {
                throw ValidationError("--type liveactivity needs --payload '{\"event\":\"update\",\"content-state\":{…}}'")
            }
            let event: APNSLiveActivityNotification.Event
            switch custom["event"] {
            case .string("start")?:
                guard case .string(let attributesType)? = custom["attributes-type"], let attributes = custom["attributes"], let alertText else {
                    throw ValidationError("a Live Activity start needs attributes-type, attributes (in --payload) and --title/--body")
                }
                event = .start(attributesType: attributesType, attributes: attributes, alert: alertText)
            case .string("end")?: event = .end(dismissalDate: nil)
            case .string("update")?, nil: event = .update
            default: throw ValidationError("event must be start, update or end")
            }
            return APNSLiveActivityNotification(
                event: event, contentState: state, timestamp: Date(), alert: alertText,
                priority: priority ?? .considerPower, expiration: expiration, collapseID: collapseID
            )
        }
    }

    private func parsedPayload() throws -> [String: JSONValue] {
        guard let payload else { return [:] }
        guard case .object(let object)? = try? JSONParser.parse(Array(payload.utf8)) else {
            throw ValidationError("--payload must be a JSON object")
        }
        return object
    }

    private func parsedPriority() throws -> APNSPriority? {
        guard let priority else { return nil }
        guard let value = APNSPriority(rawValue: priority) else {
            throw ValidationError("--priority must be 10, 5 or 1")
        }
        return value
    }
}

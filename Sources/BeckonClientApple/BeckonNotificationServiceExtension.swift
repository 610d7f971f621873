// iOS only: built where UserNotifications exists. A translation, no decisions (docs/client-sdk.md).
#if canImport(UserNotifications)
import BeckonClient
import BeckonJSON
import Foundation
import UserNotifications

/// The notification service extension's principal class: subclass it and return your handler.
/// iOS's two callbacks, on threads of its choosing, go to one `NotificationServiceRequest`, which
/// delivers exactly once.
open class BeckonNotificationServiceExtension: UNNotificationServiceExtension {
    private let request = NotificationServiceRequest()

    /// The handler; build it once per process (iOS reuses extension processes, and may call
    /// `didReceive` on several instances at once).
    open var handler: NotificationServiceHandler {
        fatalError("override `handler` in your NotificationService subclass")
    }

    open override func didReceive(
        _ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
    ) {
        let delivery = ContentDelivery(original: request.content, handler: contentHandler) { [self] content, shown in
            adjust(content, shown: shown)
        }
        let incoming = IncomingNotification(
            identifier: request.identifier, payload: JSONValue(userInfo: request.content.userInfo) ?? [:])
        self.request.receive(incoming, with: handler) { outcome in delivery.deliver(outcome) }
    }

    open override func serviceExtensionTimeWillExpire() {
        request.timeWillExpire()
    }

    /// Your last word on what iOS shows, after the SDK wrote the text: make it a Communication
    /// Notification (`try content.updating(from: intent)` with an `INSendMessageIntent`), attach a
    /// file you already have (`UNNotificationAttachment`), set the `interruptionLevel`. `shown`
    /// is the SDK's content; its `userInfo["beckon"]["ids"]` name the messages it stands for.
    /// Called once per push, synchronously, also when iOS's time is up: use what is at hand,
    /// never the network. Return `content` to change nothing; a result without text is ignored
    /// (a notification is never blank).
    open func adjust(_ content: UNMutableNotificationContent, shown: NotificationContent) -> UNNotificationContent {
        content
    }
}

/// iOS's content handler and the push's own content (not Sendable: UserNotifications' classes).
private final class ContentDelivery: @unchecked Sendable {
    let original: UNNotificationContent
    let handler: (UNNotificationContent) -> Void
    let adjust: (UNMutableNotificationContent, NotificationContent) -> UNNotificationContent

    init(
        original: UNNotificationContent, handler: @escaping (UNNotificationContent) -> Void,
        adjust: @escaping (UNMutableNotificationContent, NotificationContent) -> UNNotificationContent
    ) {
        self.original = original
        self.handler = handler
        self.adjust = adjust
    }

    /// The app's `adjust`, unless it blanked the text.
    private func adjusted(_ content: UNMutableNotificationContent, _ shown: NotificationContent) -> UNNotificationContent {
        let result = adjust(content, shown)
        return result.title.isEmpty && result.body.isEmpty ? content : result
    }

    func deliver(_ outcome: NotificationServiceOutcome) {
        switch outcome {
        case .suppressed:
            // Only with the filtering entitlement (apns.md E.4): empty content shows nothing.
            handler(UNNotificationContent())
        case .rewritten(let content):
            handler(adjusted(content.userNotificationContent(base: original), content))
        case .fallback(let content, _):
            // The push's own text; rewritten only when it had none (never blank).
            if original.body.isEmpty && original.title.isEmpty {
                handler(adjusted(content.userNotificationContent(base: original), content))
            } else {
                let own = (original.mutableCopy() as? UNMutableNotificationContent) ?? content.userNotificationContent(base: original)
                handler(adjusted(own, content))
            }
        }
    }
}
#endif

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
        let delivery = ContentDelivery(original: request.content, handler: contentHandler)
        let incoming = IncomingNotification(
            identifier: request.identifier, payload: JSONValue(userInfo: request.content.userInfo) ?? [:])
        self.request.receive(incoming, with: handler) { outcome in delivery.deliver(outcome) }
    }

    open override func serviceExtensionTimeWillExpire() {
        request.timeWillExpire()
    }
}

/// iOS's content handler and the push's own content (not Sendable: UserNotifications' classes).
private final class ContentDelivery: @unchecked Sendable {
    let original: UNNotificationContent
    let handler: (UNNotificationContent) -> Void

    init(original: UNNotificationContent, handler: @escaping (UNNotificationContent) -> Void) {
        self.original = original
        self.handler = handler
    }

    func deliver(_ outcome: NotificationServiceOutcome) {
        switch outcome {
        case .suppressed:
            // Only with the filtering entitlement (apns.md E.4): empty content shows nothing.
            handler(UNNotificationContent())
        case .rewritten(let content):
            handler(content.userNotificationContent(base: original))
        case .fallback(let content, _):
            // The push's own text; rewritten only when it had none (never blank).
            if original.body.isEmpty && original.title.isEmpty {
                handler(content.userNotificationContent(base: original))
            } else {
                handler(original)
            }
        }
    }
}
#endif

/// The request one `UNNotificationServiceExtension` instance works on, behind a lock: iOS calls
/// `didReceive(_:withContentHandler:)` and `serviceExtensionTimeWillExpire()` on threads of its
/// choosing, so the run that the first starts and the second ends is shared state.
public final class NotificationServiceRequest: Sendable {
    private let run = Locked<NotificationServiceRun?>(nil)

    public init() {}

    /// `didReceive`: starts `handler`'s work on `notification`; `deliver` is called exactly once.
    public func receive(
        _ notification: IncomingNotification, with handler: NotificationServiceHandler,
        deliver: @escaping @Sendable (NotificationServiceOutcome) -> Void
    ) {
        let started = handler.receive(notification, deliver: deliver)
        run.withLock { $0 = started }
    }

    /// `serviceExtensionTimeWillExpire`: the best content so far, now.
    public func timeWillExpire() {
        run.withLock { $0 }?.timeWillExpire()
    }
}

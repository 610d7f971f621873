import BeckonClient

/// UIKit's application-state notifications on the simulated phone (`AppLifecyclePort`): the
/// only way the app learns it came to the front or left it, as in a scene-based app
/// (apns.md E.9).
final class PhoneLifecycle: AppLifecyclePort {
    private let handlers = Locked<[@Sendable (AppLifecycleEvent) -> Void]>([])

    func observe(_ handler: @escaping @Sendable (AppLifecycleEvent) -> Void) { handlers.withLock { $0.append(handler) } }

    func post(_ event: AppLifecycleEvent) {
        for handler in handlers.withLock({ $0 }) { handler(event) }
    }
}

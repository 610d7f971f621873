// Apple platforms: Darwin notifications between the app and its extensions. A translation, no
// decisions (docs/client-sdk.md).
#if canImport(Darwin) || BECKON_APPLE_SDK_STANDIN
import BeckonClient
import Foundation

/// `ProcessSignalPort` over the Darwin notify centre (the app's nudge to an extension holding the
/// lease). Its names are system-wide: they are prefixed with the app group so two apps do not
/// hear each other, but any process could post one; the worst a stray post does is make a lease
/// holder look at the row early.
public final class DarwinProcessSignal: ProcessSignalPort, @unchecked Sendable {
    private let prefix: String

    public init(appGroup: String) {
        self.prefix = appGroup
    }

    public func post(_ name: String) {
        CFNotificationCenterPostNotification(
            CFNotificationCenterGetDarwinNotifyCenter(), CFNotificationName(fullName(name) as CFString), nil, nil, true)
    }

    public func signals(named name: String) -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let observer = Observer(continuation)
        let pointer = Unmanaged.passRetained(observer).toOpaque()
        let full = fullName(name) as CFString
        CFNotificationCenterAddObserver(
            CFNotificationCenterGetDarwinNotifyCenter(), pointer,
            { _, observer, _, _, _ in
                guard let observer else { return }
                Unmanaged<Observer>.fromOpaque(observer).takeUnretainedValue().continuation.yield()
            },
            full, nil, .deliverImmediately)
        let registration = Registration(pointer: pointer, name: fullName(name))
        continuation.onTermination = { _ in registration.remove() }
        return stream
    }

    private func fullName(_ name: String) -> String { "\(prefix).\(name)" }

    private final class Observer {
        let continuation: AsyncStream<Void>.Continuation
        init(_ continuation: AsyncStream<Void>.Continuation) { self.continuation = continuation }
    }

    private struct Registration: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer
        let name: String

        /// On the main queue, where the centre delivers (through the main run loop): a callback
        /// that is running there cannot see the observer freed under it.
        func remove() {
            DispatchQueue.main.async {
                CFNotificationCenterRemoveObserver(
                    CFNotificationCenterGetDarwinNotifyCenter(), pointer, CFNotificationName(name as CFString), nil)
                Unmanaged<Observer>.fromOpaque(pointer).release()
            }
        }
    }
}
#endif

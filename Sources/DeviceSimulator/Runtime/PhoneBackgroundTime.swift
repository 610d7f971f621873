import BeckonClient

/// `beginBackgroundTask` on the simulated phone: the model keeps the app running while a task
/// is open (up to its background time).
struct PhoneBackgroundTime: BackgroundTimePort {
    let device: SimulatedDevice
    private static let counter = Locked(0)

    init(device: SimulatedDevice) { self.device = device }

    func begin(_ name: String, expired: @escaping @Sendable () -> Void) -> BackgroundTaskToken {
        let id = Self.counter.withLock { counter in
            counter += 1
            return counter
        }
        device.backgroundTaskExpirations.withLock { $0[id] = expired }
        device.post(.backgroundTaskBegan(id))
        return BackgroundTaskToken(id)
    }

    func end(_ token: BackgroundTaskToken) {
        device.backgroundTaskExpirations.withLock { _ = $0.removeValue(forKey: token.rawValue) }
        device.post(.backgroundTaskEnded(token.rawValue))
    }
}

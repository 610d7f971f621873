import BeckonDelivery
import BeckonProtocol
import Configuration
import Foundation

extension DeliveryPolicy {
    /// `apps.<id>.delivery.*`; each key falls back to `DeliveryPolicy`'s default.
    init(reading config: ConfigReader, scope: String) throws(BeckonConfigurationError) {
        self.init()
        if let name = config.string(forKey: "strategy") {
            guard let strategy = DeliveryStrategy(rawValue: name) else {
                throw .invalid(key: "\(scope).strategy", "\"\(name)\" is not wake, service-extension, filtering or content")
            }
            self.strategy = strategy
        }
        backgroundPushesPerHour = config.int(forKey: "background-pushes-per-hour", default: backgroundPushesPerHour)
        guard backgroundPushesPerHour >= 0 else {
            throw .invalid(key: "\(scope).background-pushes-per-hour", "must not be negative")
        }
        for (key, path) in [
            ("reconnect-window-seconds", \DeliveryPolicy.reconnectWindow),
            ("repush-initial-delay-seconds", \DeliveryPolicy.repushInitialDelay),
            ("call-ring-interval-seconds", \DeliveryPolicy.callRingInterval),
            ("call-timeout-seconds", \DeliveryPolicy.callTimeout),
            ("alert-ttl-seconds", \DeliveryPolicy.alertTimeToLive),
            ("background-ttl-seconds", \DeliveryPolicy.backgroundTimeToLive),
            ("clear-all-interval-seconds", \DeliveryPolicy.clearAllInterval),
        ] as [(String, WritableKeyPath<DeliveryPolicy, TimeInterval>)] {
            self[keyPath: path] = try config.positiveNumber(key, default: self[keyPath: path], scope: scope)
        }
        // A number of seconds, or "never" (nil: an owed wake waits for a free slot however long).
        if config.string(forKey: "throttled-alert-delay-seconds") == "never" {
            throttledAlertDelay = nil
        } else if let delay = config.number("throttled-alert-delay-seconds") {
            guard delay > 0 else { throw .invalid(key: "\(scope).throttled-alert-delay-seconds", "must be positive, or \"never\"") }
            throttledAlertDelay = delay
        }
        for (key, path) in [
            ("message-loc-key", \DeliveryPolicy.messageLocKey),
            ("call-loc-key", \DeliveryPolicy.callLocKey),
            ("missed-call-loc-key", \DeliveryPolicy.missedCallLocKey),
            ("answered-elsewhere-loc-key", \DeliveryPolicy.answeredElsewhereLocKey),
            ("declined-elsewhere-loc-key", \DeliveryPolicy.declinedElsewhereLocKey),
        ] as [(String, WritableKeyPath<DeliveryPolicy, String>)] {
            // The app's Localizable.strings key for the generic text iOS shows (docs/apns.md D.2).
            self[keyPath: path] = config.string(forKey: ConfigKey(key)) ?? self[keyPath: path]
            guard !self[keyPath: path].isEmpty else { throw .invalid(key: "\(scope).\(key)", "must not be empty") }
        }
        repushLimit = config.int(forKey: "repush-limit", default: repushLimit)
        guard repushLimit >= 0 else { throw .invalid(key: "\(scope).repush-limit", "must not be negative") }
    }
}

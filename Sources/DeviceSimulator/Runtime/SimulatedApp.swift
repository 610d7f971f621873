import BeckonClient
import BeckonClientNIO
import BeckonProtocol
import Logging

/// What the simulated app itself contributes: the text of its notifications (the backend's
/// payload `{"text": ...}`), and the sockets it uses on Linux.
enum SimulatedApp {
    static let renderer: MessageRenderer = { message in
        guard let text = message.payload?["text"]?.stringValue else { return nil }
        return NotificationContent(body: text)
    }
}

enum SimulatorTransport {
    /// The SDK's NIO WebSocket client, quiet (a fleet runs thousands).
    static func make() -> any SyncTransport {
        var logger = Logger(label: "beckon.simulator.sync")
        logger.logLevel = .critical
        return NIOSyncTransport(logger: logger)
    }
}

extension LeaseLock.Timing {
    /// The lease's timings in virtual time, so they stay what they are on a phone in wall-clock
    /// time: renewing every 50 ms real, not every 50 ms divided by the scale.
    static func scaled(by scale: Double) -> LeaseLock.Timing {
        var timing = LeaseLock.Timing()
        timing.leaseDuration = timing.leaseDuration * scale
        timing.renewInterval = timing.renewInterval * scale
        timing.yieldTimeout = timing.yieldTimeout * scale
        timing.retryInitial = timing.retryInitial * scale
        timing.retryMaximum = timing.retryMaximum * scale
        return timing
    }
}

extension DeviceConfiguration {
    var endpoint: SyncEndpoint {
        SyncEndpoint(url: syncURL, credential: credential, subprotocol: SyncProtocol.subprotocol)
    }
}

import APNSCore
import Foundation
import NIOHTTP2

// MARK: - Fault injection (apns.md B.3, C.2, G)

extension APNSEmulator {
    /// Applies `fault` to requests that pass validation: to `deviceToken`'s requests only, or to all;
    /// for the next `count` matching requests, or until `clearFaults()`. Rules are tried in the order
    /// they were added; the first that matches is used (and its count spent).
    public func injectFault(_ fault: APNSEmulatorFault, deviceToken: String? = nil, count: Int? = nil) {
        let rule = FaultRule(fault: fault, deviceToken: deviceToken?.lowercased(), remaining: count)
        core.state.withLockedValue { $0.rules.append(rule) }
    }

    /// 429 `TooManyRequests` for a token (apns.md A.7), for the next `count` requests or until cleared.
    public func respondTooManyRequests(deviceToken: String, count: Int? = nil) {
        injectFault(.respond(.tooManyRequests), deviceToken: deviceToken, count: count)
    }

    /// Answer this reason (and its status) to the next `count` valid requests (nil = until cleared).
    public func respond(with reason: APNSReason, deviceToken: String? = nil, count: Int? = nil) {
        injectFault(.respond(reason), deviceToken: deviceToken, count: count)
    }

    /// Leave streams unanswered forever (apns.md G.8).
    public func neverRespond(deviceToken: String? = nil, count: Int? = nil) {
        injectFault(.neverRespond, deviceToken: deviceToken, count: count)
    }

    /// Random server errors: each valid request fails with 500 `InternalServerError` with the first
    /// probability, or 503 `ServiceUnavailable` with the second (0…1 each).
    public func setRandomFailures(internalServerErrorRate: Double = 0, serviceUnavailableRate: Double = 0) {
        core.state.withLockedValue {
            $0.faults.internalServerErrorRate = min(max(internalServerErrorRate, 0), 1)
            $0.faults.serviceUnavailableRate = min(max(serviceUnavailableRate, 0), 1)
        }
    }

    /// Every answer waits this long (nil = none). Per-token delays: `injectFault(.delay(...))`.
    public func setResponseDelay(_ delay: Duration?) {
        core.state.withLockedValue { $0.faults.responseDelay = delay }
    }

    /// Each connection answers its first `streams` requests, then sends GOAWAY with
    /// `lastStreamID` = the stream of the `streams`-th request (later streams are not processed) and
    /// `{"reason": reason}` debug data, and closes (apns.md G.5). nil turns it off.
    public func goAway(afterStreams streams: Int?, reason: APNSReason = .shutdown) {
        core.state.withLockedValue {
            $0.faults.goAwayAfterStreams = streams
            $0.faults.goAwayReason = reason
        }
    }

    /// Each connection answers its first `streams` requests; on the next one it closes the TCP
    /// connection abruptly (RST, no GOAWAY, no TLS close_notify; apns.md G.6). nil turns it off.
    public func resetConnections(afterStreams streams: Int?) {
        core.state.withLockedValue { $0.faults.resetAfterStreams = streams }
    }

    /// After a connection answers `ExpiredProviderToken` once, it answers it to everything, new
    /// tokens included: only a new connection cures it (apns.md B.3, G.4).
    public func setWedgeOnExpiredToken(_ enabled: Bool) {
        core.state.withLockedValue { $0.faults.wedgeOnExpiredToken = enabled }
    }

    /// Wedge every live connection now: each answers `ExpiredProviderToken` from here on.
    public func wedgeLiveConnections() {
        for handle in registry.all { handle.run { $0.wedge() } }
    }

    /// After a rejection, MAX_CONCURRENT_STREAMS drops to 1 until the next 200 (apns.md C.2, G.16).
    public func setThrottleOnReject(_ enabled: Bool) {
        core.state.withLockedValue { $0.faults.throttleOnReject = enabled }
    }

    /// Close connections after this many 4xx answers other than 410, or after this many
    /// `BadDeviceToken` answers, with GOAWAY carrying the last error's reason (apns.md C.4, G.15).
    /// Both nil turns it off. Counts start afresh on each connection.
    public func setErrorBudget(errors: Int?, badDeviceTokenErrors: Int?) {
        let budget = errors == nil && badDeviceTokenErrors == nil
            ? nil : APNSEmulatorErrorBudget(errors: errors, badDeviceTokenErrors: badDeviceTokenErrors)
        core.state.withLockedValue { $0.faults.errorBudget = budget }
    }

    /// Changes MAX_CONCURRENT_STREAMS for new connections and sends a SETTINGS frame on live ones
    /// (those still before their first valid token keep 1 until it arrives). With
    /// `refuseExcessInFlight`, unanswered streams above the new limit get REFUSED_STREAM (apns.md C.2).
    public func setMaxConcurrentStreams(_ limit: Int, refuseExcessInFlight: Bool = false) {
        core.state.withLockedValue { $0.maxConcurrentStreams = limit }
        for handle in registry.all { handle.run { $0.changeStreamLimit(limit, refuseExcessInFlight: refuseExcessInFlight) } }
    }

    /// GOAWAY with `{"reason": reason}` on every live connection now, then close them.
    public func goAwayLiveConnections(reason: APNSReason = .shutdown) {
        for handle in registry.all { handle.run { $0.goAwayNow(reason: reason) } }
    }

    /// Abruptly reset every live connection now (no GOAWAY).
    public func resetLiveConnections() {
        for handle in registry.all { handle.run { $0.resetConnection() } }
    }

    /// Removes every fault (rules and connection faults); `throttleOnReject` and
    /// `wedgeOnExpiredToken` return to their configured values.
    public func clearFaults() {
        let configuration = self.configuration
        core.state.withLockedValue {
            $0.rules.removeAll()
            $0.faults = ConnectionFaults()
            $0.faults.wedgeOnExpiredToken = configuration.wedgeOnExpiredToken
            $0.faults.throttleOnReject = configuration.throttleOnReject
            $0.faults.errorBudget = configuration.errorBudget
        }
    }

    /// How many connections are open now.
    public var liveConnectionCount: Int { registry.all.count }

    /// The faults in force now.
    var faultSnapshot: FaultSnapshot {
        core.state.withLockedValue { FaultSnapshot(rules: $0.rules, connectionFaults: $0.faults, maxConcurrentStreams: $0.maxConcurrentStreams) }
    }
}

// MARK: - Observing

extension APNSEmulator {
    public var counters: APNSEmulatorCounters { core.state.withLockedValue { $0.counters } }

    /// What the device received, in order (oldest first).
    public func deliveries(to deviceToken: String) -> [APNSEmulatorNotification] {
        core.state.withLockedValue { $0.devices[deviceToken.lowercased()]?.received.entries ?? [] }
    }

    /// Alerts on the device's screen, oldest first, one per identifier (collapse id replaces; apns.md E.2).
    public func displayedNotifications(on deviceToken: String) -> [APNSEmulatorNotification] {
        core.state.withLockedValue { $0.devices[deviceToken.lowercased()]?.displayed.entries ?? [] }
    }

    /// The one notification APNs holds for an offline device, if any (apns.md E.1).
    public func storedNotification(for deviceToken: String) -> APNSEmulatorNotification? {
        let now = core.now()
        return core.state.withLockedValue { state in
            let token = deviceToken.lowercased()
            state.devices[token]?.expire(now: now)
            return state.devices[token]?.stored?.notification
        }
    }

    /// Notifications a device never got: expired, not stored (`apns-expiration: 0` while offline) or
    /// replaced in storage by a newer one.
    public func discardedCount(for deviceToken: String) -> Int {
        core.state.withLockedValue { $0.devices[deviceToken.lowercased()]?.discarded ?? 0 }
    }

    /// Zeroes the counters, empties every device's log, screen and storage, and removes all faults.
    /// Devices stay registered.
    public func reset() {
        clearFaults()
        core.state.withLockedValue { state in
            state.counters = APNSEmulatorCounters()
            for token in state.devices.keys {
                state.devices[token]!.received.removeAll()
                state.devices[token]!.displayed.removeAll()
                state.devices[token]!.stored = nil
                state.devices[token]!.discarded = 0
            }
        }
    }
}

// MARK: - Devices (apns.md E.1, E.7)

extension APNSEmulator {
    /// Registers a device token for an app. `token` nil = a random 32-byte token. The environment
    /// defaults to the emulator's; a token of the other environment gets `BadDeviceToken`.
    @discardableResult
    public func registerDevice(
        token: String? = nil,
        bundleID: String,
        kind: APNSEmulatorDevice.Kind = .app,
        environment: APNSEnvironment? = nil,
        online: Bool = true
    ) throws -> APNSEmulatorDevice {
        let hex = (token ?? Self.randomToken()).lowercased()
        guard RequestSyntax.isDeviceToken(Substring(hex)) else { throw APNSEmulatorError.invalidDeviceToken(hex) }
        let device = APNSEmulatorDevice(
            token: hex, bundleID: bundleID, environment: environment ?? configuration.environment,
            kind: kind, isOnline: online, registeredAt: core.now(), unregisteredAt: nil
        )
        core.state.withLockedValue { $0.devices[hex] = DeviceRecord(device: device) }
        return device
    }

    /// The app was uninstalled (or the token otherwise died): from now on requests get 410
    /// `Unregistered` with this moment as `timestamp` (apns.md A.5, E.7), or with `moment` when
    /// given: a token that died before the provider first pushed to it (its app was removed
    /// while pushes went through another server). Anything stored is dropped.
    public func unregisterDevice(token: String, at moment: Date? = nil) throws {
        let now = moment ?? core.now()
        try core.state.withLockedValue { state in
            let hex = token.lowercased()
            guard state.devices[hex] != nil else { throw APNSEmulatorError.unknownDevice(hex) }
            state.devices[hex]!.device.unregisteredAt = now
            state.devices[hex]!.stored = nil
        }
    }

    /// Online devices get notifications at once; offline ones get the newest stored one (if not
    /// expired) when they come back (apns.md E.1).
    public func setDeviceOnline(token: String, _ online: Bool) throws {
        let now = core.now()
        let logLimit = core.logLimit
        try core.state.withLockedValue { state in
            let hex = token.lowercased()
            guard var record = state.devices[hex] else { throw APNSEmulatorError.unknownDevice(hex) }
            let event = record.setOnline(online, now: now, logLimit: logLimit)
            state.devices[hex] = record
            if case .delivered? = event { state.counters.delivered += 1 }
            if let event { state.deviceObserver?(event) }
        }
    }

    /// The device side: `observer` is told what becomes of every notification APNs accepts for
    /// any device (accepted, stored, delivered, discarded), in order, as it happens. It runs under
    /// the emulator's lock, so it must be quick and must not call the emulator (hand the event to
    /// a queue). One observer; a second call replaces it, nil removes it.
    public func observeDevices(_ observer: (@Sendable (APNSEmulatorDeviceEvent) -> Void)?) {
        core.state.withLockedValue { $0.deviceObserver = observer }
    }

    public func device(token: String) -> APNSEmulatorDevice? {
        core.state.withLockedValue { $0.devices[token.lowercased()]?.device }
    }

    public var devices: [APNSEmulatorDevice] {
        core.state.withLockedValue { $0.devices.values.map(\.device) }
    }

    static func randomToken() -> String {
        let digits = Array("0123456789abcdef")
        return String((0..<64).map { _ in digits[Int.random(in: 0..<16)] })
    }
}

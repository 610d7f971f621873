import APNSCore
import Foundation
import NIOConcurrencyHelpers

/// A fault the emulator injects into requests that passed validation.
public enum APNSEmulatorFault: Sendable, Hashable {
    /// Answer with this reason and its status (e.g. `.tooManyRequests` → 429).
    case respond(APNSReason)
    /// Leave the stream open forever (apns.md C.2, G.8).
    case neverRespond
    /// Answer normally, but this much later.
    case delay(Duration)
}

/// Counts of what the emulator did since start or the last `reset()`.
public struct APNSEmulatorCounters: Sendable, Hashable {
    /// Complete requests (HEADERS + body) received on any connection.
    public var requests = 0
    /// Answers by `:status`.
    public var byStatus: [Int: Int] = [:]
    /// Error answers by `reason`.
    public var byReason: [String: Int] = [:]
    /// Streams refused with RST_STREAM REFUSED_STREAM (over the stream limit).
    public var refusedStreams = 0
    /// Streams deliberately left unanswered.
    public var unanswered = 0
    public var goAwaysSent = 0
    /// PING frames from clients (not acks).
    public var pingsReceived = 0
    public var connectionsAccepted = 0
    /// Connections closed abruptly by fault injection.
    public var connectionResets = 0
    /// Connections closed with GOAWAY because they spent their error budget (apns.md C.4).
    public var errorBudgetDisconnects = 0
    /// Notifications delivered to devices (immediately or from storage).
    public var delivered = 0

    public func count(_ reason: APNSReason) -> Int { byReason[reason.rawValue] ?? 0 }
    public func count(status: Int) -> Int { byStatus[status] ?? 0 }
}

public enum APNSEmulatorError: Error, Hashable, Sendable {
    case notStarted
    case alreadyStarted
    case unknownDevice(String)
    case invalidDeviceToken(String)
}

/// What the connection should do with a request.
struct Outcome: Sendable {
    enum Action: Sendable {
        /// `uniqueID`: send an `apns-unique-id` (a 200 in sandbox, apns.md A.5); the connection makes it.
        case respond(status: Int, reason: APNSReason?, timestamp: Date?, uniqueID: Bool)
        case neverRespond
        case resetConnection
    }
    var action: Action
    var apnsID: String
    var delay: Duration?
    /// Send GOAWAY with this reason right after answering.
    var goAwayAfter: APNSReason?
    /// Wedge the connection (after an `ExpiredProviderToken`).
    var wedge = false
    /// Connection settings read under the same lock as the decision, so answering takes no lock.
    var throttleOnReject = false
    var errorBudget: APNSEmulatorErrorBudget?
}

struct FaultRule: Sendable {
    var fault: APNSEmulatorFault
    var deviceToken: String?
    var remaining: Int?
}

/// Connection-level fault settings that every connection reads at each request.
struct ConnectionFaults: Sendable {
    var goAwayAfterStreams: Int?
    var goAwayReason: APNSReason = .shutdown
    var resetAfterStreams: Int?
    var responseDelay: Duration?
    var wedgeOnExpiredToken = false
    var throttleOnReject = false
    var internalServerErrorRate = 0.0
    var serviceUnavailableRate = 0.0
    var errorBudget: APNSEmulatorErrorBudget?
}

/// The state all connections share: devices, faults, counters. Every method takes the lock once.
final class EmulatorCore: Sendable {
    struct State: Sendable {
        var devices: [String: DeviceRecord] = [:]
        var rules: [FaultRule] = []
        var faults = ConnectionFaults()
        var counters = APNSEmulatorCounters()
        var maxConcurrentStreams: Int
        /// The device side (`APNSEmulator.observeDevices`): told of every accepted notification's fate.
        var deviceObserver: (@Sendable (APNSEmulatorDeviceEvent) -> Void)?
    }

    let environment: APNSEnvironment
    let autoRegister: Bool
    let logLimit: Int
    let now: @Sendable () -> Date
    let state: NIOLockedValueBox<State>

    init(configuration: APNSEmulatorConfiguration) {
        environment = configuration.environment
        autoRegister = configuration.autoRegister
        logLimit = max(1, configuration.deliveryLogLimit)
        now = configuration.now
        var initial = State(maxConcurrentStreams: configuration.maxConcurrentStreams)
        initial.faults.wedgeOnExpiredToken = configuration.wedgeOnExpiredToken
        initial.faults.throttleOnReject = configuration.throttleOnReject
        initial.faults.errorBudget = configuration.errorBudget
        state = NIOLockedValueBox(initial)
    }

    /// Decides the answer to a request the connection evaluated, records it, delivers it.
    func handle(_ evaluation: Evaluation, requestIndex: Int, now: Date) -> Outcome {
        state.withLockedValue { state in
            state.counters.requests += 1
            let faults = state.faults
            var outcome: Outcome
            switch evaluation {
            case .rejected(let reason, let apnsID, _):
                if let limit = faults.resetAfterStreams, requestIndex > limit {
                    state.counters.connectionResets += 1
                    return Outcome(action: .resetConnection, apnsID: apnsID)
                }
                outcome = Outcome(
                    action: .respond(status: reason.status ?? 500, reason: reason, timestamp: nil, uniqueID: false),
                    apnsID: apnsID
                )
                outcome.wedge = reason == .expiredProviderToken && faults.wedgeOnExpiredToken
            case .accepted(let request):
                if let limit = faults.resetAfterStreams, requestIndex > limit {
                    state.counters.connectionResets += 1
                    return Outcome(action: .resetConnection, apnsID: request.apnsID)
                }
                outcome = Self.decide(request, state: &state, now: now, environment: environment,
                                      autoRegister: autoRegister, logLimit: logLimit)
            }
            if outcome.delay == nil { outcome.delay = faults.responseDelay }
            outcome.throttleOnReject = faults.throttleOnReject
            outcome.errorBudget = faults.errorBudget
            if let limit = faults.goAwayAfterStreams, requestIndex == limit {
                outcome.goAwayAfter = faults.goAwayReason
            }
            switch outcome.action {
            case .respond(let status, let reason, _, _):
                state.counters.byStatus[status, default: 0] += 1
                if let reason { state.counters.byReason[reason.rawValue, default: 0] += 1 }
            case .neverRespond:
                state.counters.unanswered += 1
            case .resetConnection:
                break
            }
            return outcome
        }
    }

    private static func decide(
        _ request: ValidatedRequest,
        state: inout State,
        now: Date,
        environment: APNSEnvironment,
        autoRegister: Bool,
        logLimit: Int
    ) -> Outcome {
        func reject(_ reason: APNSReason, timestamp: Date? = nil) -> Outcome {
            Outcome(
                action: .respond(status: reason.status ?? 500, reason: reason, timestamp: timestamp, uniqueID: false),
                apnsID: request.apnsID
            )
        }
        var delay: Duration?
        // Injected faults, first matching rule wins.
        if let index = state.rules.firstIndex(where: { $0.deviceToken == nil || $0.deviceToken == request.deviceToken }) {
            let rule = state.rules[index]
            if let remaining = rule.remaining {
                if remaining <= 1 { state.rules.remove(at: index) } else { state.rules[index].remaining = remaining - 1 }
            }
            switch rule.fault {
            case .respond(let reason): return reject(reason)
            case .neverRespond: return Outcome(action: .neverRespond, apnsID: request.apnsID)
            case .delay(let duration): delay = duration
            }
        }
        let faults = state.faults
        if faults.internalServerErrorRate > 0 || faults.serviceUnavailableRate > 0 {
            let roll = Double.random(in: 0..<1)
            if roll < faults.internalServerErrorRate { return reject(.internalServerError) }
            if roll < faults.internalServerErrorRate + faults.serviceUnavailableRate {
                return reject(.serviceUnavailable)
            }
        }

        // The device registry (apns.md G.1, G.2, A.7). One hash lookup, then the record is
        // mutated in place through its index: copying a `DeviceRecord` showed up in profiles.
        let kind: APNSEmulatorDevice.Kind = request.pushType == .voip ? .voip : .app
        var index = state.devices.index(forKey: request.deviceToken)
        if index == nil {
            guard autoRegister else { return reject(.badDeviceToken) }
            state.devices[request.deviceToken] = DeviceRecord(
                device: APNSEmulatorDevice(
                    token: request.deviceToken, bundleID: request.bundleID, environment: environment,
                    kind: kind, isOnline: true, registeredAt: now, unregisteredAt: nil
                )
            )
            index = state.devices.index(forKey: request.deviceToken)
        }
        let slot = index!
        do {
            let device = state.devices.values[slot].device
            // A token of the other environment is simply not a valid token here.
            if device.environment != environment { return reject(.badDeviceToken) }
            if device.bundleID != request.bundleID || device.kind != kind { return reject(.deviceTokenNotForTopic) }
            if let gone = device.unregisteredAt { return reject(.unregistered, timestamp: gone) }
        }

        let notification = APNSEmulatorNotification(
            apnsID: request.apnsID, deviceToken: request.deviceToken, topic: request.topic,
            pushType: request.pushType, priority: request.priority, expiration: request.expiration,
            collapseID: request.collapseID, headers: request.headers, payload: request.payload,
            acceptedAt: now, deliveredAt: nil
        )
        if state.devices.values[slot].accept(notification, now: now, logLimit: logLimit, observe: state.deviceObserver) {
            state.counters.delivered += 1
        }
        return Outcome(
            action: .respond(status: 200, reason: nil, timestamp: nil, uniqueID: environment == .sandbox),
            apnsID: request.apnsID,
            delay: delay
        )
    }
}

/// The faults in force, for the control API's `GET /faults`.
struct FaultSnapshot: Sendable {
    var rules: [FaultRule]
    var connectionFaults: ConnectionFaults
    var maxConcurrentStreams: Int
}

import APNS
import APNSCore
import BeckonDelivery
import BeckonStore
import Foundation
import Logging
import NIOConcurrencyHelpers

/// Sends the outbox's pending pushes through the APNs client and acts on Apple's answers:
///
/// - 200: sent.
/// - 410 `Unregistered`: the token is removed only if Apple's timestamp is later than its
///   registration (design rule 8; a device that registered the token again keeps it).
/// - 400 `BadDeviceToken`: tried once against the other environment first (a development build's
///   token sent to production, or the reverse); only if that fails too is the token dropped.
/// - `DeviceTokenNotForTopic`, `TopicDisallowed`: the device is flagged (`push_problem`) until it
///   registers again; retrying cannot help.
/// - 429, 5xx, no answer: the client has retried already; the push is tried again later with
///   backoff, up to `maximumAttempts`.
///
/// Each app has its own limit of pushes in flight (a bulkhead): an app whose credential is broken
/// or whose pushes hang cannot take the slots of the others.
final class PushDispatcher: Sendable {
    let store: any BeckonStore
    let routes: [String: APNSRoute]
    let metrics: DeliveryMetrics
    let logger: Logger
    let now: @Sendable () -> Date
    /// Pushes in flight per app.
    let perAppConcurrency: Int
    /// Attempts before a push that keeps failing for transient reasons is given up.
    let maximumAttempts = 8
    /// Polling interval when nothing signals new pushes (another node's, retries falling due).
    let idlePoll: Duration
    /// Told about pushes that failed for good.
    private let onFinalFailure: NIOLockedValueBox<(@Sendable (DeviceRef, UUID) -> Void)?> = NIOLockedValueBox(nil)

    private let state = NIOLockedValueBox(State())
    private let signals: AsyncStream<Void>
    private let signal: AsyncStream<Void>.Continuation

    private struct State {
        var inFlight: Set<String> = []
        /// Sent since the current poll began reading: that read may still have seen them
        /// pending, so they are not taken again (each poll starts by forgetting the older ones,
        /// whose results were committed before it read).
        var finished: Set<String> = []
        var perApp: [String: Int] = [:]
    }

    init(
        store: any BeckonStore, routes: [String: APNSRoute], metrics: DeliveryMetrics, logger: Logger,
        perAppConcurrency: Int = 200, idlePoll: Duration = .seconds(1), now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.store = store
        self.routes = routes
        self.metrics = metrics
        self.logger = logger
        self.perAppConcurrency = perAppConcurrency
        self.idlePoll = idlePoll
        self.now = now
        (signals, signal) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func onFinalFailure(_ body: @escaping @Sendable (DeviceRef, UUID) -> Void) {
        onFinalFailure.withLockedValue { $0 = body }
    }

    /// New pushes are in the outbox.
    func wake() { signal.yield() }

    func run() async {
        await withDiscardingTaskGroup { group in
            // A tick through the same doorbell: retries fall due and other nodes queue pushes
            // without ringing it.
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: self.idlePoll)
                    self.signal.yield()
                }
            }
            signal.yield()
            for await _ in signals {
                while !Task.isCancelled {
                    let due: [OutboxPush]
                    let devices: [DeviceRef: Device]
                    state.withLockedValue { $0.finished.removeAll(keepingCapacity: true) }
                    do {
                        due = try await store.pendingPushes(before: now(), limit: 1024)
                        // The devices' current tokens, in one read for the page.
                        devices = try await store.devices(Array(Set(due.map(\.device))))
                    } catch is CancellationError {
                        return  // Shutting down.
                    } catch {
                        logger.error("reading the push outbox failed", metadata: ["error": "\(error)"])
                        break
                    }
                    var started = 0
                    for push in due where claim(push) {
                        started += 1
                        let device = devices[push.device]
                        group.addTask { await self.send(push, to: device) }
                    }
                    // A full page may have more behind it; otherwise wait for the bell.
                    if started == 0 || due.count < 1024 { break }
                }
            }
        }
    }

    /// Takes a push unless it is being sent already or its app's slots are all taken.
    private func claim(_ push: OutboxPush) -> Bool {
        state.withLockedValue { state in
            guard !state.inFlight.contains(push.id), !state.finished.contains(push.id),
                state.perApp[push.device.appID, default: 0] < perAppConcurrency
            else { return false }
            state.inFlight.insert(push.id)
            state.perApp[push.device.appID, default: 0] += 1
            return true
        }
    }

    private func release(_ push: OutboxPush) {
        state.withLockedValue { state in
            state.inFlight.remove(push.id)
            state.finished.insert(push.id)
            state.perApp[push.device.appID, default: 1] -= 1
        }
        signal.yield()  // A slot is free: pushes left behind by the bulkhead can go.
    }

    // MARK: Sending

    func send(_ push: OutboxPush, to device: Device?) async {
        defer { release(push) }
        let result = await attempt(push, to: device)
        do {
            try await store.completePush(id: push.id, result: result)
        } catch {
            logger.error("recording a push result failed", metadata: ["push": "\(push.id)", "error": "\(error)"])
        }
        switch result {
        case .sent: metrics.result("sent", status: 200)
        case .failed(let status, _, _):
            metrics.result("failed", status: status)
            if let id = UUID(uuidString: push.id) { onFinalFailure.withLockedValue { $0 }?(push.device, id) }
        case .retry(let status, _, _): metrics.result("retry", status: status)
        }
    }

    private func attempt(_ outbox: OutboxPush, to device: Device?) async -> PushAttemptResult {
        guard let route = routes[outbox.device.appID] else {
            return .failed(status: 0, reason: "NoAPNsRoute", at: now())
        }
        guard let device else { return .failed(status: 0, reason: "DeviceDeleted", at: now()) }
        let push: PlannedPush
        do {
            push = try JSONDecoder().decode(PlannedPush.self, from: outbox.push)
        } catch {
            return .failed(status: 0, reason: "Undecodable", at: now())
        }
        guard let hex = device.token(push.token), let token = try? APNSDeviceToken(hex: hex) else {
            return .failed(status: 0, reason: "NoToken", at: now())
        }
        let request: APNSRequest
        do {
            request = try push.request(to: token, bundleID: route.bundleID)
        } catch {
            logger.error("a planned push does not fit APNs' rules", metadata: ["push": "\(outbox.id)", "error": "\(error)"])
            return .failed(status: 0, reason: "InvalidPayload", at: now())
        }
        let environment = APNSEnvironment(device.environment)
        do {
            let response = try await route.client.send(request, environment: environment, credential: route.credential)
            return try await outcome(of: response, outbox: outbox, device: device, request: request, route: route)
        } catch {
            return retryLater(outbox, status: 0, reason: "\(error)")
        }
    }

    private func outcome(
        of response: APNSResponse, outbox: OutboxPush, device: Device, request: APNSRequest, route: APNSRoute
    ) async throws -> PushAttemptResult {
        if response.isSuccess { return .sent(at: now()) }
        let reason = response.reason?.rawValue
        switch response.reason {
        case .unregistered?:
            // Design rule 8: only a registration older than Apple's timestamp is the dead one.
            let invalidSince = response.timestamp ?? now()
            if let hex = device.token(outbox.tokenKind) {
                try await store.removeToken(device.ref, kind: outbox.tokenKind, token: hex, invalidSince: invalidSince)
            }
            return .failed(status: response.status, reason: reason, at: now())
        case .badDeviceToken?:
            let other = APNSEnvironment(device.environment) == .sandbox ? APNSEnvironment.production : .sandbox
            if let retried = try? await route.client.send(request, environment: other, credential: route.credential),
                retried.isSuccess
            {
                logger.warning("token belongs to the other APNs environment", metadata: [
                    "device": "\(device.ref)", "registered": "\(device.environment.rawValue)",
                ])
                return .sent(at: now())
            }
            if let hex = device.token(outbox.tokenKind) {
                try await store.removeToken(device.ref, kind: outbox.tokenKind, token: hex, invalidSince: now())
            }
            return .failed(status: response.status, reason: reason, at: now())
        case .deviceTokenNotForTopic?, .topicDisallowed?:
            try await store.setPushProblem(device.ref, problem: reason)
            return .failed(status: response.status, reason: reason, at: now())
        default:
            if response.retryClass == .retryWithDelay { return retryLater(outbox, status: response.status, reason: reason) }
            return .failed(status: response.status, reason: reason, at: now())
        }
    }

    /// Exponential backoff from 5 s, capped at 10 minutes; then failed for good.
    private func retryLater(_ push: OutboxPush, status: Int, reason: String?) -> PushAttemptResult {
        guard push.attempts + 1 < maximumAttempts else { return .failed(status: status, reason: reason, at: now()) }
        let delay = min(600, 5 * pow(2, Double(push.attempts)))
        return .retry(status: status, reason: reason, nextAttempt: now().addingTimeInterval(delay))
    }
}

extension APNSEnvironment {
    init(_ environment: PushEnvironment) {
        switch environment {
        case .sandbox: self = .sandbox
        case .production: self = .production
        }
    }
}

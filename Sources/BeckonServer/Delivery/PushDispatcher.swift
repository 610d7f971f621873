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
    /// Pushes of one app claimed and held here (queued or in flight) at most: twice its slots,
    /// so a held push starts within two send deadlines (2 × 30 s), well inside its lease, and a
    /// stuck app holds only its own share.
    var perAppHoldLimit: Int { perAppConcurrency * 2 }
    /// How long a claim holds a push: if this process dies before recording its result, the push
    /// is due again after it and another attempt sends it (at least once, design rule 9).
    let lease: TimeInterval = 300

    private struct State {
        /// Claimed pushes waiting for a slot of their app, with their device as read at claim.
        var queued: [String: [(OutboxPush, Device?)]] = [:]
        var inFlight: [String: Int] = [:]
        var held: [String: Int] = [:]
        /// Held ids: a claim that comes back with one (its lease ran out while it waited) is not
        /// queued a second time.
        var heldIDs: Set<String> = []
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

    /// Claims due pushes from the outbox (each claim is a lease, so nothing is sent twice while
    /// it lives), queues them per app, and starts sends while the app has free slots. Runs when
    /// rung: by the planner after it saved pushes, by a send that freed a slot, and every
    /// `idlePoll` for retries falling due and leases run out.
    func run() async {
        // One node per database today: pushes claimed by a process that died are ours to send.
        do {
            let released = try await store.releaseClaims(now: now())
            if released > 0 { logger.notice("pending pushes from before the restart are due again", metadata: ["count": "\(released)"]) }
        } catch {
            logger.error("releasing the outbox's claims failed", metadata: ["error": "\(error)"])
        }
        await withDiscardingTaskGroup { group in
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: self.idlePoll)
                    self.signal.yield()
                }
            }
            signal.yield()
            for await _ in signals {
                do {
                    try await claimWhileRoom()
                } catch is CancellationError {
                    return  // Shutting down.
                } catch {
                    logger.error("claiming pushes from the outbox failed", metadata: ["error": "\(error)"])
                }
                for (push, device) in takeStartable() {
                    group.addTask { await self.send(push, to: device) }
                }
            }
        }
    }

    /// Claims, app by app (the bulkhead), as many due pushes as the app may still hold.
    private func claimWhileRoom() async throws {
        for app in routes.keys.sorted() {
            let room = state.withLockedValue { perAppHoldLimit - $0.held[app, default: 0] }
            // Claim in pages of at least half the limit, not one slot at a time: each claim is a
            // write, and its slots' worth of sends is still queued meanwhile.
            guard room >= perAppHoldLimit / 2 else { continue }
            let claimed = try await store.claimPushes(
                appID: app, before: now(), limit: room, leaseUntil: now().addingTimeInterval(lease))
            guard !claimed.isEmpty else { continue }
            // The devices' current tokens, in one read for the page.
            let devices = try await store.devices(Array(Set(claimed.map(\.device))))
            state.withLockedValue { state in
                for push in claimed where state.heldIDs.insert(push.id).inserted {
                    state.queued[app, default: []].append((push, devices[push.device]))
                    state.held[app, default: 0] += 1
                }
            }
        }
    }

    /// The queued pushes that fit their app's free slots (the bulkhead), marked in flight.
    private func takeStartable() -> [(OutboxPush, Device?)] {
        state.withLockedValue { state in
            var startable: [(OutboxPush, Device?)] = []
            for (app, queue) in state.queued {
                let free = perAppConcurrency - state.inFlight[app, default: 0]
                guard free > 0, !queue.isEmpty else { continue }
                let taken = queue.prefix(free)
                startable += taken
                state.queued[app] = Array(queue.dropFirst(taken.count))
                state.inFlight[app, default: 0] += taken.count
            }
            return startable
        }
    }

    private func release(_ push: OutboxPush) {
        state.withLockedValue { state in
            state.inFlight[push.device.appID, default: 1] -= 1
            state.held[push.device.appID, default: 1] -= 1
            state.heldIDs.remove(push.id)
        }
        signal.yield()  // A slot is free: queued pushes can go, and more can be claimed.
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
        // APNs said the token is not for this topic: asking again cannot help until the device
        // registers again (which clears the flag).
        if let problem = device.pushProblem { return .failed(status: 0, reason: problem, at: now()) }
        guard let hex = device.token(outbox.tokenKind), let token = try? APNSDeviceToken(hex: hex) else {
            return .failed(status: 0, reason: "NoToken", at: now())
        }
        let request = APNSRequest(outbox.notification, to: token)
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

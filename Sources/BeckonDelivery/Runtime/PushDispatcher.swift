import APNSCore
import BeckonStore
import Foundation
import Logging
import NIOConcurrencyHelpers

/// Sends the outbox's pending pushes through each app's `PushSender` and acts on Apple's answers:
///
/// - 200: sent.
/// - 410 `Unregistered`: the token is removed only if Apple's timestamp is later than its
///   registration (design rule 8; a device that registered the token again keeps it).
/// - 400 `BadDeviceToken`: tried once against the other environment first (a development build's
///   token sent to production, or the reverse); only if that fails too is the token dropped.
/// - `DeviceTokenNotForTopic`, `TopicDisallowed`: the device is flagged (`push_problem`) until it
///   registers again; retrying cannot help.
/// - 429, 5xx, no answer: the client has retried already; the push is tried again later with
///   `retry` (the same backoff-with-jitter policy type as the APNs client's own retries).
///
/// Each app has its own limit of pushes in flight (a bulkhead): an app whose credential is broken
/// or whose pushes hang cannot take the slots of the others.
final class PushDispatcher: Sendable {
    /// What sending reads and writes: the outbox, the devices' tokens, what APNs' answers change,
    /// and whether a call still rings.
    typealias Store = PushOutbox & DeviceDirectory & TokenFeedback & CallStore

    let store: any Store
    let senders: [String: any PushSender]
    let metrics: DeliveryMetrics
    let logger: Logger
    let now: @Sendable () -> Date
    /// Attempts of a push that keeps failing for transient reasons, and the wait between them.
    let retry: APNSRetryPolicy
    /// Polling interval when nothing signals new pushes (another node's, retries falling due).
    let idlePoll: Duration
    /// Pushes that failed for good, for the planner (the driver reads them).
    let failures: AsyncStream<FinalFailure>
    private let failed: AsyncStream<FinalFailure>.Continuation

    private let queue: NIOLockedValueBox<OutboxQueueStateMachine>
    private let signals: AsyncStream<Void>
    private let signal: AsyncStream<Void>.Continuation
    /// How long a claim holds a push: if this process dies before recording its result, the push
    /// is due again after it and another attempt sends it (at least once, design rule 9).
    let lease: TimeInterval

    init(
        store: any Store, senders: [String: any PushSender], metrics: DeliveryMetrics, logger: Logger,
        perAppConcurrency: Int = 200, retry: APNSRetryPolicy = PushDispatcher.defaultRetry, lease: TimeInterval = 300,
        idlePoll: Duration = .seconds(1),
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.store = store
        self.senders = senders
        self.metrics = metrics
        self.logger = logger
        self.queue = NIOLockedValueBox(OutboxQueueStateMachine(slots: perAppConcurrency, holdPerSlot: Self.holdPerSlot(lease: lease)))
        self.retry = retry
        self.lease = lease
        self.idlePoll = idlePoll
        self.now = now
        (signals, signal) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        (failures, failed) = AsyncStream.makeStream(of: FinalFailure.self)
    }

    /// A push APNs refused for good (or that could not be sent at all).
    struct FinalFailure: Sendable {
        var device: DeviceRef
        var pushID: UUID
    }

    /// As many claimed pushes per slot as can all start inside their lease even if every send
    /// before them hangs for the APNs client's whole deadline (30 s), keeping a fifth of the lease
    /// spare; at most 8 (the 300 s default lease), at least 2.
    static func holdPerSlot(lease: TimeInterval) -> Int {
        max(2, min(8, Int(lease * 0.8 / 30)))
    }

    /// 8 attempts, 5 s doubling to 10 minutes, jittered: about 20 minutes before giving up.
    static let defaultRetry = APNSRetryPolicy(maximumAttempts: 8, backoff: APNSBackoff(base: 5, cap: 600))

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
        let apps = senders.keys
        queue.withLockedValue { $0.pollAll(apps, backlog: true) }
        await withDiscardingTaskGroup { group in
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: self.idlePoll)
                    self.queue.withLockedValue { $0.pollAll(apps) }
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
                for item in takeStartable() {
                    group.addTask { await self.send(item.push, to: item.device) }
                }
            }
        }
    }

    /// Claims, app by app (the bulkhead), as many due pushes as the app may still hold, from
    /// the apps whose outbox may hold some.
    private func claimWhileRoom() async throws {
        for app in senders.keys.sorted() {
            guard let (size, ticket) = queue.withLockedValue({ queue in
                queue.claimSize(for: app).map { ($0, queue.claimTicket(for: app)) }
            }) else { continue }
            let claimed = try await store.claimPushes(
                appID: app, before: now(), limit: size, leaseUntil: now().addingTimeInterval(lease))
            // The devices' current tokens, in one read for the page.
            let devices = claimed.isEmpty ? [:] : try await store.devices(Array(Set(claimed.map(\.device))))
            let items = claimed.map { OutboxQueueStateMachine.Item(push: $0, device: devices[$0.device]) }
            queue.withLockedValue { $0.claimed(items, of: app, asked: size, ticket: ticket) }
            metrics.taken(items.count, way: "claimed")
        }
    }

    // MARK: Handing over

    /// Saves a planned batch through `save` (the planner's states and its pushes, in one
    /// transaction) and takes its pushes: those their app has room for are saved already claimed
    /// and queued to be sent at once, with the devices as the planner read them; the rest wait in
    /// the outbox to be claimed. Returns what `save` returns: the devices another node saved
    /// first, whose pushes were not stored.
    func save(
        _ batch: DeliveryBatch, devices: [DeviceRef: Device],
        through save: (DeliveryBatch) async throws -> Set<DeviceRef>
    ) async throws -> Set<DeviceRef> {
        var batch = batch
        reserve(&batch.pushes)
        let conflicted: Set<DeviceRef>
        do {
            conflicted = try await save(batch)
        } catch {
            notSaved(batch.pushes)
            throw error
        }
        saved(batch.pushes, except: conflicted, devices: devices)
        return conflicted
    }

    /// Before the planner saves `pushes`: those their app has room for are marked to be saved
    /// already claimed (`OutboxPush.claimedUntil`), so they go straight to the queue afterwards
    /// and cost no claim. The rest are saved pending, to be claimed.
    private func reserve(_ pushes: inout [OutboxPush]) {
        let leaseUntil = now().addingTimeInterval(lease)
        let byApp = Dictionary(grouping: pushes.indices, by: { pushes[$0].device.appID })
        let granted = queue.withLockedValue { queue in
            Dictionary(uniqueKeysWithValues: byApp.map { app, indices in (app, queue.reserve(for: app, upTo: indices.count)) })
        }
        for (app, indices) in byApp {
            for index in indices.prefix(granted[app] ?? 0) { pushes[index].claimedUntil = leaseUntil }
        }
    }

    /// After the save: reserved pushes that were saved are queued to be sent (with their device as
    /// the planner read it); reserved ones that were not give their room back; pushes saved
    /// without a reservation are claimed from the outbox.
    private func saved(_ pushes: [OutboxPush], except conflicted: Set<DeviceRef>, devices: [DeviceRef: Device]) {
        guard !pushes.isEmpty else { return }
        queue.withLockedValue { queue in
            var handed: [OutboxQueueStateMachine.Item] = []
            for push in pushes {
                let stored = !conflicted.contains(push.device)
                switch (push.claimedUntil != nil, stored) {
                case (true, true): handed.append(.init(push: push, device: devices[push.device]))
                case (true, false): queue.cancelReservation(for: push.device.appID, count: 1)
                case (false, true): queue.mayHoldDue(push.device.appID, backlog: true)
                case (false, false): break
                }
            }
            queue.handedOver(handed)
            metrics.taken(handed.count, way: "handed_over")
        }
        signal.yield()
    }

    /// The save failed: nothing was stored, the reserved room is free again.
    private func notSaved(_ pushes: [OutboxPush]) {
        queue.withLockedValue { queue in
            for push in pushes where push.claimedUntil != nil { queue.cancelReservation(for: push.device.appID, count: 1) }
        }
    }

    private func takeStartable() -> [OutboxQueueStateMachine.Item] {
        queue.withLockedValue { $0.takeStartable() }
    }

    private func release(_ push: OutboxPush) {
        queue.withLockedValue { $0.finished(push) }
        signal.yield()  // Its hold is free: more can be claimed.
    }

    // MARK: Sending

    func send(_ push: OutboxPush, to device: Device?) async {
        let result = await attempt(push, to: device)
        // The slot bounds requests to APNs, not writes: the next send need not wait for this
        // result's commit (in a burst that wait, not APNs, would hold the slots).
        queue.withLockedValue { $0.answered(push) }
        signal.yield()
        defer { release(push) }
        do {
            try await store.completePush(id: push.id, result: result)
        } catch {
            logger.error("recording a push result failed", metadata: ["push": "\(push.id)", "error": "\(error)"])
        }
        switch result {
        case .sent: metrics.result("sent", status: 200)
        case .failed(let status, _, _):
            metrics.result("failed", status: status)
            if let id = UUID(uuidString: push.id) { failed.yield(FinalFailure(device: push.device, pushID: id)) }
        case .retry(let status, _, _): metrics.result("retry", status: status)
        }
    }

    private func attempt(_ outbox: OutboxPush, to device: Device?) async -> PushAttemptResult {
        guard let sender = senders[outbox.device.appID] else {
            return .failed(status: 0, reason: "NoAPNsRoute", at: now())
        }
        guard let device else { return .failed(status: 0, reason: "DeviceDeleted", at: now()) }
        // APNs said the token is not for this topic: asking again cannot help until the device
        // registers again (which clears the flag).
        if let problem = device.pushProblem { return .failed(status: 0, reason: problem, at: now()) }
        // Rule 6: a call rings only while it rings — never after its timeout or its end, however
        // late a retry comes. Such a push gets one attempt per claim and no more time than the
        // ringing has left, so every retry comes back here and is checked again.
        var deadline: TimeInterval?
        var singleAttempt: APNSRetryPolicy?
        if let callID = outbox.ringingCallID {
            let left = (outbox.ringingUntil ?? .distantFuture).timeIntervalSince(now())
            if left <= 0 { return .failed(status: 0, reason: "CallTimedOut", at: now()) }
            do {
                if try await store.endedCalls(appID: outbox.device.appID, callIDs: [callID]).contains(callID) {
                    return .failed(status: 0, reason: "CallEnded", at: now())
                }
            } catch {
                // Unknown whether it still rings: not sent on a guess.
                return retryLater(outbox, status: 0, reason: "\(error)")
            }
            deadline = min(left, 30)
            singleAttempt = APNSRetryPolicy(maximumAttempts: 1, backoff: retry.backoff)
        }
        guard let hex = device.token(outbox.tokenKind), let token = try? APNSDeviceToken(hex: hex) else {
            return .failed(status: 0, reason: "NoToken", at: now())
        }
        let request = APNSRequest(outbox.notification, to: token)
        let environment = APNSEnvironment(device.environment)
        do {
            let response = try await sender.send(request, environment: environment, deadline: deadline, retry: singleAttempt)
            return try await outcome(
                of: response, outbox: outbox, device: device, request: request, sender: sender,
                limits: (deadline, singleAttempt))
        } catch {
            return retryLater(outbox, status: 0, reason: "\(error)")
        }
    }

    /// - Parameter limits: the first send's deadline and retries, kept for a second try (a ring
    ///   must not outlive its call there either).
    private func outcome(
        of response: APNSResponse, outbox: OutboxPush, device: Device, request: APNSRequest, sender: any PushSender,
        limits: (deadline: TimeInterval?, retry: APNSRetryPolicy?)
    ) async throws -> PushAttemptResult {
        if response.isSuccess { return .sent(at: now(), uniqueID: response.uniqueID?.uuidString.lowercased()) }
        let reason = response.reason?.rawValue
        switch response.reason {
        case .unregistered?:
            // Design rule 8: only a registration older than Apple's timestamp is the dead one.
            let invalidSince = response.timestamp ?? now()
            if let hex = device.token(outbox.tokenKind) {
                _ = try await store.removeToken(device.ref, kind: outbox.tokenKind, token: hex, invalidSince: invalidSince)
            }
            return .failed(status: response.status, reason: reason, at: now())
        case .badDeviceToken?:
            let other = APNSEnvironment(device.environment) == .sandbox ? APNSEnvironment.production : .sandbox
            if let retried = try? await sender.send(request, environment: other, deadline: limits.deadline, retry: limits.retry),
                retried.isSuccess
            {
                logger.warning("token belongs to the other APNs environment", metadata: [
                    "device": "\(device.ref)", "registered": "\(device.environment.rawValue)",
                ])
                return .sent(at: now(), uniqueID: retried.uniqueID?.uuidString.lowercased())
            }
            if let hex = device.token(outbox.tokenKind) {
                _ = try await store.removeToken(device.ref, kind: outbox.tokenKind, token: hex, invalidSince: now())
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

    /// Tried again after `retry`'s backoff; failed for good once its attempts are used up.
    private func retryLater(_ push: OutboxPush, status: Int, reason: String?) -> PushAttemptResult {
        guard let delay = retry.delay(afterAttempts: push.attempts + 1) else {
            return .failed(status: status, reason: reason, at: now())
        }
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

import BeckonStore
import Foundation
import Logging

/// Sends one app's event log to its webhook: performs `WebhookDeliveryStateMachine`'s actions
/// against the log and the receiver. Only the node holding the app's lease sends (on PostgreSQL
/// several nodes share one log), and it goes on from the cursor the last holder left: at least
/// once, in the log's order.
struct WebhookSender: Sendable {
    let app: AppEvents
    let node: String
    let log: any EventLog
    let transport: any WebhookTransport
    let metrics: EventMetrics
    let logger: Logger
    let timing: EventTiming

    func run() async {
        let signer = WebhookSigner(secret: app.webhook.secret)
        var machine = WebhookDeliveryStateMachine(
            backoff: WebhookBackoff(initial: app.webhook.retryInitial, maximum: app.webhook.retryMax),
            pollInterval: timing.pollInterval, leaseRetry: timing.lease / 3)
        // When the lease is next renewed (a write); until then each poll reads the cursor.
        var renewAt: Date?
        while !Task.isCancelled {
            do {
                let now = timing.now()
                let cursor: EventPosition?
                if let renewAt, now < renewAt {
                    cursor = try await log.webhookCursor(appID: app.appID, node: node, now: now)
                } else {
                    cursor = try await log.leaseWebhook(appID: app.appID, node: node, until: now + timing.lease, now: now)
                    renewAt = now + timing.lease / 2
                }
                if cursor == nil { renewAt = nil }
                var action = machine.leased(cursor: cursor)
                if case .read(let cursor) = action {
                    let events = try await log.events(appID: app.appID, after: cursor, limit: app.webhook.batchSize)
                    action = machine.read(events, after: cursor)
                }
                switch action {
                case .send(let batch):
                    let attempt = await send(batch, signer: signer)
                    switch machine.answered(status: attempt.status) {
                    case .advance(let position):
                        if try await log.advanceWebhook(appID: app.appID, node: node, to: position, attempt: attempt) {
                            metrics.sent(app.appID, events: batch.count)
                        }
                    case .retry(let delay):
                        try await log.recordWebhookAttempt(attempt)
                        if machine.failures == 1 || machine.failures.isMultiple(of: 10) {
                            logger.warning("webhook not answered 2xx", metadata: [
                                "app": "\(app.appID)", "status": "\(attempt.status)", "error": "\(attempt.error ?? "")",
                                "failures": "\(machine.failures)", "retry_in": "\(delay)",
                            ])
                        }
                        try await Task.sleep(for: .seconds(delay))
                    default:
                        break
                    }
                case .wait(let delay):
                    try await Task.sleep(for: .seconds(delay))
                default:
                    break
                }
            } catch is CancellationError {
                return
            } catch {
                logger.error("webhook's event log unavailable", metadata: ["app": "\(app.appID)", "error": "\(error)"])
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// One POST of the batch; its attempt, answered or not.
    private func send(_ batch: [MessageEvent], signer: WebhookSigner) async -> WebhookAttempt {
        let body = MessageEvent.webhookBody(batch)
        let (first, last) = (batch.first!.id, batch.last!.id)
        // The same batch keeps its id across retries (a receiver may dedupe on it); each event
        // has its own id too, which is what survives a replay.
        let id = "batch_\(first)_\(last)"
        let started = timing.now()
        let timestamp = Int(started.timeIntervalSince1970)
        let headers = [
            (name: "webhook-id", value: id),
            (name: "webhook-timestamp", value: String(timestamp)),
            (name: "webhook-signature", value: signer.signature(id: id, timestamp: timestamp, body: body)),
        ]
        var attempt = WebhookAttempt(
            appID: app.appID, at: started, firstEvent: first, lastEvent: last, events: batch.count, status: 0, duration: 0)
        do {
            attempt.status = try await transport.post(body: body, headers: headers)
            if !attempt.succeeded { attempt.error = "HTTP \(attempt.status)" }
        } catch {
            attempt.error = "\(error)"
        }
        attempt.duration = timing.now().timeIntervalSince(started)
        metrics.attempt(app.appID, outcome: attempt.succeeded ? "ok" : attempt.status == 0 ? "unanswered" : "refused")
        return attempt
    }
}

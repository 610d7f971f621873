import Foundation

/// The pushes decided and not yet sent, as the sender drains them: claimed under a lease so that
/// one sender (one node) sends each, and completed with APNs' answer. Pushes enter it with the
/// planner's save (`DeliveryStateStore.saveDelivery`), written before they are sent (design
/// rule 9).
public protocol PushOutbox: Sendable {
    /// Takes up to `limit` due pushes for sending: their next attempt moves to `leaseUntil`, so
    /// no other claim takes them meanwhile; a push whose result is never recorded (the process
    /// died) is due again then.
    func claimPushes(appID: String, before date: Date, limit: Int, leaseUntil: Date) async throws -> [OutboxPush]
    /// At start, with no other sender: every pending push is due now, whether a claim of the
    /// process that died held it or a retry waited (it is sent at least once, design rule 9).
    func releaseClaims(now: Date) async throws -> Int
    /// Records the result of an attempt: sent, failed for good, or to be retried at a time.
    func completePush(id: String, result: PushAttemptResult) async throws
}

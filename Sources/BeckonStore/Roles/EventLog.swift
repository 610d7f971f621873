import Foundation

/// Each app's log of what happened to its messages (`MessageEvent`), for webhooks and the event
/// stream. Kept only for the apps it is turned on for: the store writes an event in the
/// transaction of the record it tells of, so the log is complete and never ahead of the data.
public protocol EventLog: Sendable {
    /// Turns the log on for `appIDs` and off (deleting their events) for every other app. An app
    /// turned on anew starts with an empty log, its webhook at the start of it.
    func setEventLogApps(_ appIDs: Set<String>, now: Date) async throws
    /// Up to `limit` events after `position`, in the log's order (only the settled part of it:
    /// `EventPosition`).
    func events(appID: String, after position: EventPosition, limit: Int) async throws -> [MessageEvent]
    /// Where the event `id` of the app's log sits, or nil when it is not (or no longer) kept.
    func eventPosition(appID: String, id: Int64) async throws -> EventPosition?
    /// Where to read from to get the app's kept events at or after `date` (a replay from a time, a
    /// stream from now): just before the first of them, or after the last event when none is.
    func eventPosition(appID: String, before date: Date) async throws -> EventPosition

    /// Takes (or renews) the right to send the app's webhook until `until`, unless another node
    /// holds it; returns the webhook's cursor, or nil when another node sends it.
    func leaseWebhook(appID: String, node: String, until: Date, now: Date) async throws -> EventPosition?
    /// The webhook's cursor while `node` holds the lease, or nil: a read, for the polls between
    /// renewals (a write each poll was five a second an app, idle).
    func webhookCursor(appID: String, node: String, now: Date) async throws -> EventPosition?
    /// Moves the cursor to `position` after a batch was answered 2xx, and logs the attempt, if
    /// `node` still holds the lease; false when it lost it (the batch goes again from the new
    /// holder: at least once).
    func advanceWebhook(appID: String, node: String, to position: EventPosition, attempt: WebhookAttempt) async throws -> Bool
    /// Logs an attempt that failed; the cursor stays.
    func recordWebhookAttempt(_ attempt: WebhookAttempt) async throws
    /// The app's newest attempts, newest first.
    func webhookAttempts(appID: String, limit: Int) async throws -> [WebhookAttempt]
    /// Sets the cursor back to `position` (never forward: that would skip events unsent):
    /// everything after it is sent again.
    func rewindWebhook(appID: String, to position: EventPosition) async throws

    /// Writes `expired` events for the app's messages that expired up to `now` on each
    /// recipient device that had not got them; returns how many.
    @discardableResult
    func recordExpiredEvents(appID: String, now: Date) async throws -> Int
    /// Deletes sent events from before `sentBefore` (kept till then for replays), and when more
    /// than `backlog` wait, drops the oldest of them (moving the cursor past them); returns how
    /// many were dropped unsent.
    @discardableResult
    func trimEventLog(appID: String, backlog: Int, sentBefore: Date) async throws -> Int
    /// The webhook's lag, or nil when the log is off for the app.
    func eventLogStatus(appID: String, now: Date) async throws -> EventLogStatus?
}

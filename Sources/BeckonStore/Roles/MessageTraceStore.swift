import Foundation

/// What happened to a message on its way: the pushes that stood for it (their outbox rows list
/// their messages as the planner saves them), each attempt and APNs' answer (added to the row as
/// the dispatcher completes it), and the devices' receipts. Read whole for a trace; pruned after
/// the trace retention.
public protocol MessageTraceStore: Sendable {
    /// The message's records, or nil when the app has no such message.
    func traceRecords(appID: String, messageID: String) async throws -> MessageTraceRecords?
    /// Keeps one receipt of each kind per message and device, the first stored (of a batch, the
    /// earliest); a repeat, or a receipt for a message the device's user did not receive, is
    /// ignored. Returns how many were new.
    @discardableResult
    func recordReceipts(_ receipts: [MessageReceipt]) async throws -> Int
    /// Deletes finished pushes (their outbox rows, with their messages and attempts) and receipts
    /// from before `date`, a bounded chunk a write; a pending push stays. Returns how many rows went.
    func pruneTrace(before date: Date) async throws -> Int
}

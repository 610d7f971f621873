import Foundation

/// How far each device got through its user's mailbox, and what the user has read: device
/// cursors, read markers and unread counts (badges). What a sync session moves and what a
/// session start and the planner's badges read.
public protocol ReadStateStore: Sendable {
    /// Cumulative acknowledgement: the device has everything up to `sequence`. The cursor never
    /// moves backwards, and never past the user's last sequence. Returns the cursor after the ack.
    @discardableResult
    func ack(device: DeviceRef, upTo sequence: Int64) async throws -> Int64
    /// The last sequence the device acknowledged (0 for a device that never acked, so a new
    /// device gets the user's whole retained mailbox).
    func cursor(device: DeviceRef) async throws -> Int64
    /// Records that the device read these messages. Ids not in the device's user's mailbox are
    /// ignored. Returns the ids that became read for the user, i.e. not read before on any of the
    /// user's devices: those are what "read elsewhere" events and badges need (design rule 7).
    func markRead(device: DeviceRef, messageIDs: [String]) async throws -> [String]
    /// Messages and calls in the user's mailbox that none of the user's devices has read, not
    /// expired. Receipts and custom messages do not count.
    func unreadCount(of user: UserRef) async throws -> Int
    /// `unreadCount` for several users, read at once.
    func unreadCounts(of users: [UserRef]) async throws -> [UserRef: Int]
    /// Deletes the bookkeeping of unread messages that have expired (they no longer count).
    @discardableResult
    func pruneExpiredUnread(now: Date) async throws -> Int
    /// What a sync session's `welcome` needs, read at once: the user's last sequence and unread
    /// count, the read messages among the `window` sequences up to `cursor` (a device resuming
    /// there may still show them), and the calls among the user's `window` newest messages that
    /// ended at or after `callsEndedSince`.
    func sessionStart(for user: UserRef, cursor: Int64, window: Int, callsEndedSince: Date) async throws -> SessionStart
}
